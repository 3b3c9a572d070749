"""Which hand-written pattern a reference's graph computes, read from its aten operators (not
from the source's spelling): a forward that computes more than the pattern is not the pattern.
"""

from __future__ import annotations

from typing import Any

from search.proposers.builtin.fusion.program import short

# Operators that move or rename data without computing (and the transpose of a weight).
_PASSIVE = {"getitem", "detach", "alias", "clone", "view", "reshape", "_unsafe_view", "t", "contiguous",
            "expand", "lift_fresh_copy"}
_RMS_OPS = {"pow", "mul", "mean", "add", "rsqrt", "sqrt", "div"}


def graph_pattern(graph: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(pattern, facts) for a captured graph: the pattern's name from analysis.PATTERNS and what
    it needs (dim, keepdim, reduce_op, norm_dims, eps, module names from parameter targets)."""
    nodes = _computed(graph)
    ops = [short(n["target"]) for n in nodes if short(n["target"]) not in _PASSIVE]
    inputs = {i["name"]: i for i in graph.get("inputs", [])}
    params = [i for i in inputs.values() if i["kind"] != "input"]
    first = nodes[0] if nodes else None
    if not ops:
        return "generic", {}
    if ops in (["_softmax"], ["_log_softmax"]):
        node = next(n for n in nodes if short(n["target"]) == ops[0])
        return ("softmax" if ops == ["_softmax"] else "log_softmax"), {"dim": node["args"][1]}
    if ops == ["amax", "sub", "exp", "sum", "div"]:
        node = next(n for n in nodes if short(n["target"]) == "sum")
        return "softmax_manual", {"dim": _one(node["args"][1])}
    if ops == ["native_layer_norm"]:
        node = next(n for n in nodes if short(n["target"]) == "native_layer_norm")
        weight = node["args"][2]
        return "layernorm", {"norm_dims": len(node["args"][1]),
                             "norm": _module(inputs, weight), "eps": node["args"][4]}
    if "mean" in ops and ("rsqrt" in ops or "sqrt" in ops) and set(ops) <= _RMS_OPS and len(params) <= 1:
        node = next(n for n in nodes if short(n["target"]) == "mean")
        facts: dict[str, Any] = {"dim": _one(node["args"][1])}
        if params and "." not in (params[0]["target"] or "."):
            facts["weight"] = params[0]["target"]
        adds = [a for n in nodes if short(n["target"]) == "add" for a in n["args"] if isinstance(a, float)]
        facts["eps"] = adds[0] if adds else None
        return "rmsnorm_manual", facts
    if ops == ["convolution"]:
        node = next(n for n in nodes if short(n["target"]) == "convolution")
        return "conv", {"conv": _module(inputs, node["args"][1])}
    if ops == ["convolution", "relu", "max_pool2d_with_indices"]:
        node = next(n for n in nodes if short(n["target"]) == "convolution")
        return "conv_relu_maxpool", {"conv": _module(inputs, node["args"][1])}
    if ops in (["mm"], ["bmm"], ["matmul"]) and not params:
        return "matmul", {}
    if len(ops) == 1 and ops[0] in ("sum", "mean", "amax", "amin", "max", "min") and first is not None:
        node = next(n for n in nodes if short(n["target"]) == ops[0])
        args, kw = node["args"], node.get("kwargs") or {}
        dim = kw.get("dim", args[1] if len(args) > 1 else None)
        keepdim = kw.get("keepdim", args[2] if len(args) > 2 else False)
        if dim is not None and len(dim if isinstance(dim, list) else [dim]) == 1:
            return "reduction", {"reduce_op": ops[0], "dim": _one(dim), "keepdim": bool(keepdim)}
    return "generic", {}


def _computed(graph: dict[str, Any]) -> list[dict[str, Any]]:
    """The nodes the outputs depend on, in execution order."""
    nodes = {n["name"]: n for n in graph.get("nodes", [])}
    keep: set[str] = set()
    todo = [o["ref"] for o in graph.get("outputs", []) if isinstance(o, dict) and "ref" in o]
    while todo:
        name = todo.pop()
        if name in keep or name not in nodes:
            continue
        keep.add(name)
        todo += _refs(nodes[name].get("args", [])) + _refs(nodes[name].get("kwargs", {}))
    return [n for n in graph.get("nodes", []) if n["name"] in keep]


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [value["ref"]] if "ref" in value else [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def _one(dims: Any) -> int | None:
    if isinstance(dims, list):
        return dims[0] if len(dims) == 1 else None
    return dims if isinstance(dims, int) else None


def _module(inputs: dict[str, dict[str, Any]], ref: Any) -> str | None:
    """The submodule owning a parameter: "conv" for conv.weight."""
    if not isinstance(ref, dict) or ref.get("ref") not in inputs:
        return None
    target = inputs[ref["ref"]].get("target") or ""
    return target.rsplit(".", 1)[0] if "." in target else None
