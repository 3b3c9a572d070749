"""What the generic ideas need to know about a reference, read from its captured graph (or, when
the graph is missing, from the rest of the reference report): which heavy operators it runs,
how large its tensors are, whether it has weights."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

_MATMULS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "addbmm", "addmv", "mv", "dot",
            "_int_mm"}
_ATTENTION_PREFIX = "_scaled_dot_product"
# Operators that launch no kernel of their own (views, metadata, getitem).
_FREE = {"getitem", "view", "_unsafe_view", "reshape", "t", "transpose", "permute", "expand",
         "unsqueeze", "squeeze", "alias", "detach", "slice", "select", "split", "unbind",
         "as_strided", "lift_fresh_copy", "split_with_sizes", "unsafe_split", "empty"}
# Many launches of small work: CPU-side launch overhead is a visible share of the time.
_LAUNCH_BOUND_OPS = 8
_SMALL_TENSOR = 1 << 18  # elements; a kernel over this many runs in a few microseconds
# Operators with channels-innermost (NHWC) kernels on 4-D tensors.
_SPATIAL = ("convolution", "max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "adaptive_max_pool2d",
            "native_batch_norm", "_native_batch_norm_legit", "upsample", "native_group_norm")


@dataclass(frozen=True)
class GraphFacts:
    captured: bool
    reason: str  # why the graph is missing, when it is
    ops: tuple[str, ...]  # short operator names in execution order, views included
    matmuls: int
    convolutions: int
    attention: int
    kernels: int  # operators that launch work (views and getitem excluded)
    largest: int  # elements of the largest tensor the forward reads or makes
    parameters: int  # parameter tensors the forward reads
    spatial_4d: bool = False  # convolutions, pooling or norms on 4-D tensors only (NHWC applies)

    @property
    def heavy(self) -> bool:
        """Runs a matrix product, a convolution or attention (precision ideas pay off there)."""
        return bool(self.matmuls or self.convolutions or self.attention)

    @property
    def launch_bound(self) -> bool:
        """Many small kernels: replaying them as one CUDA graph removes most of the time."""
        return self.kernels >= _LAUNCH_BOUND_OPS and self.largest <= _SMALL_TENSOR


def short(target: str) -> str:
    """`aten.addmm.default` -> `addmm`; an in-place variant reads as its plain op (`relu_` -> `relu`)."""
    parts = target.split(".")
    name = parts[1] if len(parts) >= 3 and parts[0] == "aten" else parts[0]
    return name[:-1] if name.endswith("_") and not name.startswith("_") else name


def read_facts(info: dict[str, Any]) -> GraphFacts:
    """Facts of the reference report `info` (a ReferenceReport dict)."""
    graph = info.get("graph") or {}
    if not graph.get("captured"):
        return _from_report(info, graph.get("reason") or "the runner reported no graph")
    ops = tuple(short(n["target"]) for n in graph.get("nodes", []))
    sizes = [_elements(o.get("shape")) for n in graph.get("nodes", []) for o in n.get("outputs", [])]
    sizes += [_elements(i.get("shape")) for i in graph.get("inputs", [])]
    return GraphFacts(
        captured=True, reason="", ops=ops,
        matmuls=sum(op in _MATMULS for op in ops),
        convolutions=sum(op.startswith("convolution") or op.startswith("conv") for op in ops),
        attention=sum(op.startswith(_ATTENTION_PREFIX) for op in ops),
        kernels=sum(op not in _FREE for op in ops),
        largest=max(sizes, default=0),
        parameters=sum(i.get("kind") == "parameter" for i in graph.get("inputs", [])),
        spatial_4d=_spatial_4d(graph),
    )


def _spatial_4d(graph: dict[str, Any]) -> bool:
    ranks = [len(o.get("shape") or []) for n in graph.get("nodes", []) if short(n["target"]).startswith(_SPATIAL)
             for o in n.get("outputs", [])[:1]]
    weights_4d = all(len(i.get("shape") or []) <= 4 for i in graph.get("inputs", []) if i.get("kind") != "input")
    return bool(ranks) and all(r == 4 for r in ranks) and weights_4d


def _from_report(info: dict[str, Any], reason: str) -> GraphFacts:
    """Without a graph: the operator names the runner traced and the input/output shapes."""
    ops = tuple(op.split("::")[-1] for op in info.get("operators") or [])
    shapes = list(info.get("input_shapes") or []) + list(info.get("output_shapes") or [])
    return GraphFacts(
        captured=False, reason=reason, ops=ops,
        matmuls=sum(op in _MATMULS for op in ops),
        convolutions=sum(op.startswith("conv") for op in ops),
        attention=sum(op.startswith(_ATTENTION_PREFIX) for op in ops),
        kernels=sum(op not in _FREE for op in ops),
        largest=max((_elements(s) for s in shapes), default=0),
        parameters=1 if info.get("parameters") else 0,
        spatial_4d=any(op.startswith(_SPATIAL) for op in ops)
        and all(len(s) == 4 for s in info.get("input_shapes") or [[]]),
    )


def _elements(shape: Any) -> int:
    return math.prod(int(s) for s in shape) if isinstance(shape, list) else 0
