"""The kernel library: the best kernel of each finished search, found again by operator signature.

A signature names what a problem computes: its aten operators (sorted, without overload names)
and its input and output shapes and dtypes. Two problems are similar when they run the same
operators; equal shapes make them more similar (a kernel tuned for one shape may still be a
good start for another).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

T = TypeVar("T")
MAX_LENGTH = 500  # the Problem.signature column
DEFAULT_THRESHOLD = 0.6


def _op_name(op: str) -> str:
    # "aten::softmax.int" and "aten._softmax.default" both name the softmax family
    name = op.replace("::", ".").strip()
    parts = name.split(".")
    if len(parts) >= 3:
        parts = parts[:2]
    return ".".join(parts).lstrip("_").replace("._", ".")


def _tensors(shapes: list[Any], dtypes: list[Any]) -> str:
    out = []
    for i, shape in enumerate(shapes or []):
        dtype = str(dtypes[i]).replace("torch.", "") if i < len(dtypes or []) else ""
        out.append(f"{dtype}[{'x'.join(str(d) for d in shape)}]")
    return ",".join(out)


def operator_signature(reference_info: dict[str, Any]) -> str:
    """`ops=<sorted operators>;in=<dtype[shape],...>;out=<...>` from a ReferenceReport dict."""
    ops = sorted({_op_name(op) for op in reference_info.get("operators") or [] if op})
    inputs = _tensors(reference_info.get("input_shapes") or [], reference_info.get("input_dtypes") or [])
    outputs = _tensors(reference_info.get("output_shapes") or [], reference_info.get("output_dtypes") or [])
    tail = f";in={inputs};out={outputs}"
    head = "ops=" + ",".join(ops)
    return head[: MAX_LENGTH - len(tail)] + tail if len(head) + len(tail) > MAX_LENGTH else head + tail


def _parse(signature: str) -> dict[str, str]:
    fields = {}
    for part in signature.split(";"):
        name, _, value = part.partition("=")
        fields[name] = value
    return fields


def _ranks(tensors: str) -> list[int]:
    return [t.count("x") + 1 if "[" in t and not t.endswith("[]") else 0 for t in tensors.split("],") if t]


def similarity(a: str, b: str) -> float:
    """How alike two signatures are, from 0 (nothing shared) to 1 (same operators and shapes).

    Operator overlap (Jaccard) scaled by shape agreement: 1 for equal inputs and outputs, 0.8 for
    the same ranks and dtypes, 0.5 otherwise.
    """
    fa, fb = _parse(a), _parse(b)
    ops_a = {o for o in fa.get("ops", "").split(",") if o}
    ops_b = {o for o in fb.get("ops", "").split(",") if o}
    if not ops_a or not ops_b:
        return 0.0
    jaccard = len(ops_a & ops_b) / len(ops_a | ops_b)
    if fa.get("in") == fb.get("in") and fa.get("out") == fb.get("out"):
        shape = 1.0
    elif _ranks(fa.get("in", "")) == _ranks(fb.get("in", "")) and _dtypes(fa) == _dtypes(fb):
        shape = 0.8
    else:
        shape = 0.5
    return jaccard * shape


def _dtypes(fields: dict[str, str]) -> list[str]:
    return [t.split("[")[0] for t in (fields.get("in", "") + "," + fields.get("out", "")).split("],") if t]


def similar_kernels(signature: str, kept: Iterable[tuple[str, T]], *, threshold: float = DEFAULT_THRESHOLD,
                    limit: int = 2) -> list[T]:
    """The items of (signature, item) pairs at least `threshold` similar, most similar first."""
    scored = [(similarity(signature, sig), i, item) for i, (sig, item) in enumerate(kept)]
    scored = [s for s in scored if s[0] >= threshold]
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [item for _, _, item in scored[:limit]]
