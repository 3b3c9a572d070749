"""A hand-written RMSNorm replaced by the library's fused RMSNorm."""

from pathlib import Path

from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import eps_expr, weight_expr
from search.proposers.builtin.templating import fill


def render(recipe, shape) -> str:
    return fill(FAMILY.template("core.py.tmpl"), weight=weight_expr(shape), eps=eps_expr(shape))


FAMILY = Family(core="library_rms_norm", title="RMSNorm through the library's fused kernel",
                devices=("cpu", "cuda"), backends=("torch",), render=render, folder=Path(__file__).parent,
                matches=lambda shape: shape.pattern == "rmsnorm_manual" and shape.last_dim)
