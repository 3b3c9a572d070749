"""Layer or RMS normalization of rows in C++: one visit per row, rows across cores."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import cpp_build, norm_exprs
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    exprs = norm_exprs(shape)
    weight, bias = exprs.pop("weight"), exprs.pop("bias")
    # LayerNorm's affine parameters may be None at run time (elementwise_affine=False).
    args = {name: "_EMPTY" if expr == "None" else
            (f"_EMPTY if {expr} is None else {expr}.detach()" if expr.endswith((".weight", ".bias"))
             else f"{expr}.detach()")
            for name, expr in (("weight_arg", weight), ("bias_arg", bias))}
    empty = any("_EMPTY" in a for a in args.values())
    return fill(FAMILY.template("core.py.tmpl"), **cpp_build(FAMILY.template("kernel.cpp")),
                grain=int(p["grain"]), threads=int(p["threads"]), empty=empty, **args, **exprs)


FAMILY = Family(
    core="cpu_rownorm", title="Fused row normalization in C++ (one visit per row, rows across cores)",
    devices=("cpu",), backends=("cpp",), render=render, folder=Path(__file__).parent,
    grid={"threads": [0, 1, 2], "grain": [2, 8, 32]}, defaults={"threads": 0, "grain": 8},
    groups=[(("threads", "grain"), "thread count and rows per task")],
    matches=lambda shape: shape.pattern in ("layernorm", "rmsnorm_manual"),
)
