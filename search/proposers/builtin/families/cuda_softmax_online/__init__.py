"""Online row softmax (or log-softmax): one block per row, max and sum in one pass (NVRTC)."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import softmax_fn
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    return fill(FAMILY.template("core.py.tmpl"), threads=int(p["threads"]),
                log=int(shape.pattern == "log_softmax"), fn=softmax_fn(shape), cuda=FAMILY.template("kernel.cu"))


FAMILY = Family(
    core="cuda_softmax_online", title="Online row softmax, one block per row (NVRTC)",
    devices=("cuda",), backends=("nvrtc",), render=render, folder=Path(__file__).parent,
    grid={"threads": [128, 256, 512, 1024]}, defaults={"threads": 1024},
    groups=[(("threads",), "block size")],
    matches=lambda shape: shape.pattern in ("softmax", "log_softmax", "softmax_manual") and shape.last_dim,
)
