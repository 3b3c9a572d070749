"""One reduction (sum, mean, max, min) over one dimension in a single C++ pass."""

from pathlib import Path

from search.proposers.builtin.analysis import REDUCTIONS, ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import cpp_build, need
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def reduction_fields(shape: ProblemShape) -> dict:
    """The reduction's dimension, op code and whether it keeps the dimension (both reduce families)."""
    need(shape.pattern == "reduction" and shape.dim is not None and shape.dim >= 0,
         "the forward is not one reduction over a known dimension")
    return {"dim": shape.dim, "op": REDUCTIONS[shape.attrs["reduce_op"]],
            "keepdim": shape.attrs.get("keepdim") == "True"}


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    return fill(FAMILY.template("core.py.tmpl"), **cpp_build(FAMILY.template("kernel.cpp")),
                grain=int(p["grain"]), **reduction_fields(shape))


FAMILY = Family(
    core="cpu_reduce", title="Reduction in one C++ pass (slices across cores)",
    devices=("cpu",), backends=("cpp",), render=render, folder=Path(__file__).parent,
    grid={"grain": [1, 4, 16]}, defaults={"grain": 1}, groups=[(("grain",), "slices per task")],
    matches=lambda shape: shape.pattern == "reduction" and shape.dim is not None,
)
