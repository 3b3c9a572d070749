"""Row softmax (or log-softmax) with the row held on chip: one read, one write (NVRTC)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need, softmax_fn
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill

# Register budget of one thread on Hopper: 64K registers per SM, at most 255 per thread.
_REGS_PER_SM = 65536
_REG_OVERHEAD = 24


def row_variants(cols: int, limit: int | None = 4) -> list[dict[str, Any]]:
    """Launch shapes that hold a row of `cols` floats in registers, best guess first (all of
    them with limit=None).

    A row is split over `cluster` blocks of `threads` threads holding `items` float4 each.
    """
    if cols <= 0 or cols % 4:
        return []
    found = []
    for cluster in (1, 2, 4, 8):
        for threads in (128, 256, 512, 1024):
            per_thread = cols / (cluster * threads * 4)
            if per_thread != int(per_thread) or per_thread < 1:
                continue
            items = int(per_thread)
            regs = items * 4 + _REG_OVERHEAD
            if regs > min(255, _REGS_PER_SM // threads) or items > 16:
                continue
            # Prefer about 32 floats per thread, 256-512 threads, and small clusters.
            cost = abs(items * 4 - 32) / 8 + math.log2(cluster) * 0.5 + abs(math.log2(threads / 512)) * 0.5
            found.append((cost, {"cluster": cluster, "threads": threads, "items": items}))
    found.sort(key=lambda pair: pair[0])
    return [v for _, v in found[:limit]]


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = recipe.params
    cols = shape.row_length or 0
    cluster, threads, items = int(p["cluster"]), int(p["threads"]), int(p["items"])
    need(cluster * threads * items * 4 == cols, "the launch shape does not cover a row")
    return fill(FAMILY.template("core.py.tmpl"), cols=cols, threads=threads, items=items, cluster=cluster,
                log=int(shape.pattern == "log_softmax"), fn=softmax_fn(shape), cuda=FAMILY.template("kernel.cu"))


FAMILY = Family(
    core="cuda_softmax_rows", title="Row softmax held on chip: one read, one write (NVRTC)",
    devices=("cuda",), backends=("nvrtc",), render=render, folder=Path(__file__).parent,
    groups=[(("cluster", "threads", "items"), "launch shape (blocks per row, threads per block, float4 per thread)")],
    matches=lambda shape: (shape.pattern in ("softmax", "log_softmax", "softmax_manual") and shape.last_dim
                           and bool(row_variants(shape.row_length or 0))),
    points=lambda shape: row_variants(shape.row_length or 0, limit=None),
)
