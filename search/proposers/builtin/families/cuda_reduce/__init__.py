"""One reduction (sum, mean, max, min) over one dimension in one kernel that reads each element once."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.cpu_reduce import reduction_fields
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    return fill(FAMILY.template("core.py.tmpl"), threads=int(p["threads"]), split=int(p["split"]),
                cuda=FAMILY.template("kernel.cu"), **reduction_fields(shape))


FAMILY = Family(
    core="cuda_reduce", title="Reduction in one kernel that reads each element once (NVRTC)",
    devices=("cuda",), backends=("nvrtc",), render=render, folder=Path(__file__).parent,
    grid={"threads": [128, 256, 512, 1024], "split": [1, 4, 8]}, defaults={"threads": 256, "split": 4},
    groups=[(("threads",), "block size"), (("split",), "threads sharing each output of a reduction across rows")],
    matches=lambda shape: shape.pattern == "reduction" and shape.dim is not None,
)
