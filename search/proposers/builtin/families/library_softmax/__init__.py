"""A hand-written softmax (max, exp, sum, divide) replaced by the library's fused softmax."""

from pathlib import Path

from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need, softmax_fn
from search.proposers.builtin.templating import fill


def render(recipe, shape) -> str:
    need(shape.dim is not None, "the softmax dimension is not a constant")
    return fill(FAMILY.template("core.py.tmpl"), fn=softmax_fn(shape), dim=shape.dim)


FAMILY = Family(core="library_softmax", title="Softmax through the library's fused kernel",
                devices=("cpu", "cuda"), backends=("torch",), render=render, folder=Path(__file__).parent,
                matches=lambda shape: shape.pattern == "softmax_manual" and shape.dim is not None)
