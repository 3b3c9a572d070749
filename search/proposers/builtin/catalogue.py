"""The catalogue of optimization ideas (catalogue.json) and when each one applies."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import registry
from search.proposers.builtin.families.cuda_softmax_rows import row_variants

_CATALOGUE = Path(__file__).with_name("catalogue.json")



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
    # False: offered only when a search names it by key (its `why_off` says why it is off).
    default: bool = True
    why_off: str = ""

    def applies(self, shape: ProblemShape, device: str, tolerance: float) -> bool:
        """Whether this idea makes sense for the problem on the device within the tolerance."""
        if device not in self.devices or tolerance < self.min_tolerance:
            return False
        if "*" not in self.patterns and shape.pattern not in self.patterns:
            return False
        core = self.change.get("core") if self.change.get("kind") == "core" else None
        if core is not None and not registry()[core].matches(shape):
            return False  # the kernel family cannot compute this problem
        return all(_REQUIREMENTS[r](shape) for r in self.requires) and bool(self.variants_for(shape))

    def score(self, shape: ProblemShape) -> int:
        return self.priority.get(shape.pattern, self.priority.get("*", 0))

    def render_text(self, shape: ProblemShape, tolerance: float) -> str:
        return self.text.format(**facts(shape, tolerance))

    def variants_for(self, shape: ProblemShape) -> list[dict[str, Any]]:
        if isinstance(self.variants, list):
            return self.variants
        if self.variants == "softmax_rows":
            return row_variants(shape.row_length or 0)
        if self.variants == "family":  # the family's own launch settings, best guess first
            spec = registry()[self.change["core"]]
            return spec.points(shape)[:3] if spec.points else []
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
        "kernels": shape.facts.kernels if shape.facts else "many",
        "simplifications": "; ".join(shape.simplified.notes) if shape.simplified else "",
        "ops": ", ".join(dict.fromkeys(shape.chain.ops)) if shape.chain else "",
        "ninputs": len(shape.chain.inputs) if shape.chain else len(inputs),
        "reduce_op": {"amax": "max", "amin": "min"}.get(shape.attrs.get("reduce_op", ""),
                                                       shape.attrs.get("reduce_op", "reduction")),
        "dim": shape.dim if shape.dim is not None else "?",
        "fused": shape.program.describe() if shape.program else "",
        "source": (f"the {shape.program.producer}'s output" if shape.program and shape.program.producer
                   else "the inputs"),
    }


def _few_channels(shape: ProblemShape) -> bool:
    return bool(shape.input_shapes) and len(shape.input_shapes[0]) == 4 and shape.input_shapes[0][1] < 8


def _norm_last_dims(shape: ProblemShape) -> bool:
    if shape.pattern == "layernorm":
        return bool(shape.row_length) and (shape.row_length or 0) % 4 == 0
    return shape.last_dim and bool(shape.row_length) and (shape.row_length or 0) % 4 == 0


def _heavy(shape: ProblemShape) -> bool:
    if shape.facts is not None and (shape.facts.captured or shape.facts.ops):
        return shape.facts.heavy
    return shape.pattern in ("matmul", "conv", "conv_relu_maxpool")


def _convolutions(shape: ProblemShape) -> bool:
    if shape.facts is not None and (shape.facts.captured or shape.facts.ops):
        return shape.facts.convolutions > 0
    return shape.pattern in ("conv", "conv_relu_maxpool")


def _channels_last_layout(shape: ProblemShape) -> bool:
    if shape.facts is not None and (shape.facts.captured or shape.facts.ops):
        return shape.facts.spatial_4d
    return shape.pattern in ("conv", "conv_relu_maxpool")


def _launch_bound(shape: ProblemShape) -> bool:
    return shape.facts is not None and shape.facts.launch_bound


def _weights(shape: ProblemShape) -> bool:
    return bool(shape.params or shape.submodules) if shape.facts is None else shape.facts.parameters > 0


_REQUIREMENTS = {
    # Generic ideas, read from the graph (the operator list when the graph is missing).
    "heavy_ops": _heavy,
    "convolutions": _convolutions,
    "launch_bound": _launch_bound,
    "channels_last_layout": _channels_last_layout,
    "weights": _weights,
    "last_dim": lambda s: s.last_dim,
    "fp32": lambda s: s.fp32,
    "dim_known": lambda s: s.dim is not None,
    "few_channels": _few_channels,
    "norm_last_dims": _norm_last_dims,
    "rows_fit_on_chip": lambda s: bool(row_variants(s.row_length or 0)),
}
