"""The catalogue of optimization ideas (catalogue.json) and when each one applies."""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from search.proposers.builtin.analysis import ProblemShape

_CATALOGUE = Path(__file__).with_name("catalogue.json")

# Register budget of one thread on Hopper: 64K registers per SM, at most 255 per thread.
_REGS_PER_SM = 65536
_REG_OVERHEAD = 24


@dataclass
class IdeaSpec:
    key: str
    category: str
    text: str
    patterns: list[str]
    devices: list[str]
    change: dict[str, Any]
    variants: list[dict[str, Any]] | str
    priority: dict[str, int]
    requires: list[str] = field(default_factory=list)
    min_tolerance: float = 0.0
    precision: str | None = None
    # Off by default: offered only when a proposer asks for it by key (torch.compile: its kernels
    # are the torch.compile baseline's own, and it compiles inside the candidate's run limit).
    default: bool = True
    why_off: str = ""

    def applies(self, shape: ProblemShape, device: str, tolerance: float) -> bool:
        """Whether this idea makes sense for the problem on the device within the tolerance."""
        if device not in self.devices or tolerance < self.min_tolerance:
            return False
        if "*" not in self.patterns and shape.pattern not in self.patterns:
            return False
        return all(_REQUIREMENTS[r](shape) for r in self.requires) and bool(self.variants_for(shape))

    def score(self, shape: ProblemShape) -> int:
        return self.priority.get(shape.pattern, self.priority.get("*", 0))

    def render_text(self, shape: ProblemShape, tolerance: float) -> str:
        return self.text.format(**facts(shape, tolerance))

    def variants_for(self, shape: ProblemShape) -> list[dict[str, Any]]:
        if isinstance(self.variants, list):
            return self.variants
        if self.variants == "softmax_rows":
            return softmax_row_variants(shape.row_length or 0)
        return []


@functools.cache
def load_catalogue() -> tuple[IdeaSpec, ...]:
    """Every idea in catalogue.json, in file order."""
    entries = json.loads(_CATALOGUE.read_text())
    return tuple(IdeaSpec(**entry) for entry in entries)


def facts(shape: ProblemShape, tolerance: float) -> dict[str, Any]:
    """Numbers and names an idea's text may mention."""
    inputs = shape.input_shapes
    op = {
        "matmul": "matrix product" + (f" ({'x'.join(map(str, inputs[0]))} by {'x'.join(map(str, inputs[1]))})"
                                      if len(inputs) >= 2 else ""),
        "conv": "convolution",
        "conv_relu_maxpool": "convolution",
    }.get(shape.pattern, "forward")
    return {
        "op": op,
        "tolerance": tolerance,
        "cols": shape.row_length or "many",
        "rows": shape.rows or "a few",
        "in_channels": inputs[0][1] if inputs and len(inputs[0]) == 4 else "few",
        "fn": "log_softmax" if shape.pattern == "log_softmax" else "softmax",
        "nops": len(shape.chain.ops) if shape.chain else 0,
        "ops": ", ".join(dict.fromkeys(shape.chain.ops)) if shape.chain else "",
        "ninputs": len(shape.chain.inputs) if shape.chain else len(inputs),
        "reduce_op": {"amax": "max", "amin": "min"}.get(shape.attrs.get("reduce_op", ""),
                                                       shape.attrs.get("reduce_op", "reduction")),
        "dim": shape.dim if shape.dim is not None else "?",
    }


def softmax_row_variants(cols: int, limit: int | None = 4) -> list[dict[str, Any]]:
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


def _few_channels(shape: ProblemShape) -> bool:
    return bool(shape.input_shapes) and len(shape.input_shapes[0]) == 4 and shape.input_shapes[0][1] < 8


def _norm_last_dims(shape: ProblemShape) -> bool:
    if shape.pattern == "layernorm":
        return bool(shape.row_length) and (shape.row_length or 0) % 4 == 0
    return shape.last_dim and bool(shape.row_length) and (shape.row_length or 0) % 4 == 0


_REQUIREMENTS = {
    "last_dim": lambda s: s.last_dim,
    "fp32": lambda s: s.fp32,
    "dim_known": lambda s: s.dim is not None,
    "few_channels": _few_channels,
    "norm_last_dims": _norm_last_dims,
    "rows_fit_on_chip": lambda s: bool(softmax_row_variants(s.row_length or 0)),
}
