"""Row softmax (or log-softmax) in C++: one visit per row, rows across cores."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import cpp_build, fast_math, softmax_fn
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    cpp = fast_math() + FAMILY.template("kernel.cpp")
    return fill(FAMILY.template("core.py.tmpl"), **cpp_build(cpp), fn=softmax_fn(shape),
                grain=int(p["grain"]), threads=int(p["threads"]), log=shape.pattern == "log_softmax",
                lanes=int(p["lanes"]), online=bool(p["online"]))


FAMILY = Family(
    core="cpu_softmax", title="Fused row softmax in C++ (one visit per row, rows across cores)",
    devices=("cpu",), backends=("cpp",), render=render, folder=Path(__file__).parent,
    grid={"threads": [0, 1, 2], "grain": [4, 16, 64], "lanes": [8, 16, 32], "online": [False, True]},
    defaults={"threads": 0, "grain": 16, "lanes": 16, "online": False},
    groups=[(("threads", "grain"), "thread count and rows per task"),
            (("lanes", "online"), "vector width and one- or two-pass schedule")],
    matches=lambda shape: shape.pattern in ("softmax", "log_softmax", "softmax_manual") and shape.last_dim,
)
