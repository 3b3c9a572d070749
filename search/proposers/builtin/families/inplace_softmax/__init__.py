"""A hand-written softmax computed in place on one temporary."""

from pathlib import Path

from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.templating import fill


def render(recipe, shape) -> str:
    need(shape.dim is not None, "the softmax dimension is not a constant")
    return fill(FAMILY.template("core.py.tmpl"), dim=shape.dim)


FAMILY = Family(core="inplace_softmax", title="Manual softmax in place, one temporary",
                devices=("cpu", "cuda"), backends=("torch",), render=render, folder=Path(__file__).parent,
                matches=lambda shape: shape.pattern == "softmax_manual" and shape.dim is not None)
