"""Layer or RMS normalization with each row split across blocks: statistics, combine, apply (NVRTC)."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import norm_exprs
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = {**FAMILY.defaults, **recipe.params}
    exprs = norm_exprs(shape)
    return fill(FAMILY.template("core.py.tmpl"), threads=int(p["threads"]), items=int(p["items"]),
                reverse=int(bool(p["reverse"])), rms=int(exprs.pop("rms") == "True"),
                cuda=FAMILY.template("kernel.cu"), **exprs)


def points(shape: ProblemShape) -> list[dict]:
    grid = FAMILY.grid
    found = [{"threads": t, "items": i, "reverse": r}
             for t in grid["threads"] for i in grid["items"] for r in grid["reverse"]]
    # A chunk longer than the row would leave most of each block idle.
    fitting = [p for p in found if shape.row_length and p["threads"] * p["items"] * 4 <= shape.row_length]
    return fitting or found


FAMILY = Family(
    core="cuda_rownorm_split", title="Normalization with rows split across blocks, three passes (NVRTC)",
    devices=("cuda",), backends=("nvrtc",), render=render, folder=Path(__file__).parent,
    grid={"threads": [128, 256, 512, 1024], "items": [2, 4, 8, 16], "reverse": [False, True]},
    defaults={"threads": 256, "items": 8, "reverse": False},
    groups=[(("threads",), "block size"), (("items",), "float4 loads per thread"),
            (("reverse",), "block order of the normalize pass (backwards starts on the "
                           "chunks the statistics pass left in L2)")],
    matches=lambda shape: shape.pattern in ("layernorm", "rmsnorm_manual"), points=points,
)
