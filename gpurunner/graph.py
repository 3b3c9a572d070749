"""The reference's forward as an operator graph, in plain JSON (runs in the sandbox only).

The forward is traced with `make_fx` under fake tensors: every tensor carries only its shape
and dtype, so no arithmetic runs and a problem with gigabytes of inputs captures in seconds.
Parameters and buffers become explicit placeholders (after the forward's inputs) so readers
know which tensors are weights. Operators are aten-level, post-autograd, in execution order.
A forward whose control flow depends on tensor values cannot be traced this way; the graph
then says `captured: false` and why.
"""

from __future__ import annotations

import inspect
import math
import re
from collections.abc import Callable
from typing import Any

import torch

METHOD = "make_fx"
# A larger graph is reported missing rather than shipped (the largest KernelBench model, an
# unrolled RNN, runs about 1,800; a 512-step GRU runs 65,000, whose trace would take a minute).
MAX_NODES = 5000


class _TooLarge(Exception):
    pass


def capture(model: torch.nn.Module, inputs: list[Any]) -> dict[str, Any]:
    """The graph of `model(*inputs)` (see docs/architecture.md for the format); never raises."""
    try:
        return _capture(model, inputs)
    except Exception as exc:  # noqa: BLE001 - any failure to trace is reported, not raised
        return missing(_reason(exc))


def capture_module(module: Any, device: str = "cpu") -> dict[str, Any]:
    """The graph of a loaded reference module without allocating its inputs: `get_inputs()` runs
    under fake tensors, and so does the model's construction (a constructor that reads tensor
    values, e.g. `.item()`, is built for real instead; its weights are then real)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    mode = FakeTensorMode(allow_non_fake_inputs=True)
    try:
        with mode, torch.device(device):
            torch.manual_seed(0)
            init = module.get_init_inputs()
            init = list(init) if isinstance(init, list | tuple) else [init]
            got = module.get_inputs()
            inputs = list(got) if isinstance(got, list | tuple) else [got]
    except Exception as exc:  # noqa: BLE001
        return missing(f"building the inputs failed: {_reason(exc)}")
    try:
        with mode, torch.device(device):
            model = module.Model(*init)
    except Exception:  # noqa: BLE001 - e.g. a constructor that reads a tensor's value
        try:
            with torch.device(device):
                model = module.Model(*_real(init))
        except Exception as exc:  # noqa: BLE001
            return missing(f"building the model failed: {_reason(exc)}")
    try:
        with mode:  # one fake mode for the model, the inputs and the trace
            return _capture(model, inputs, tracing_mode="real")
    except Exception as exc:  # noqa: BLE001
        return missing(_reason(exc))


def _real(values: list[Any]) -> list[Any]:
    """Constructor arguments made under fake tensors, as real zeros of their shapes."""
    from torch._subclasses.fake_tensor import FakeTensor

    return [torch.zeros(v.shape, dtype=v.dtype) if isinstance(v, FakeTensor) else v for v in values]


def missing(reason: str) -> dict[str, Any]:
    """A graph that could not be captured, with the sentence saying why."""
    return {"captured": False, "reason": reason, "method": METHOD, "inputs": [], "nodes": [],
            "outputs": []}


def _capture(model: torch.nn.Module, inputs: list[Any], tracing_mode: str = "fake") -> dict[str, Any]:
    from torch.fx.experimental.proxy_tensor import make_fx

    named = list(model.named_parameters()) + list(model.named_buffers())
    weights = [t for _, t in named]
    tensor_at = [i for i, v in enumerate(inputs) if isinstance(v, torch.Tensor)]
    n_in = len(tensor_at)

    def forward(*flat: torch.Tensor) -> Any:
        from torch.utils._python_dispatch import TorchDispatchMode

        class Limit(TorchDispatchMode):  # stops the trace as soon as it is too large
            count = 0

            def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
                Limit.count += 1
                if Limit.count > MAX_NODES:
                    raise _TooLarge
                return func(*args, **(kwargs or {}))

        args = list(inputs)
        for slot, value in zip(tensor_at, flat[:n_in], strict=True):
            args[slot] = value
        state = {name: t for (name, _), t in zip(named, flat[n_in:], strict=True)}
        with Limit():
            return torch.func.functional_call(model, state, tuple(args))

    try:
        with torch.no_grad():
            gm = make_fx(forward, tracing_mode=tracing_mode, _allow_non_fake_inputs=True)(
                *[inputs[i] for i in tensor_at], *weights)
    except _TooLarge:
        return missing(f"the forward runs more than {MAX_NODES} operators, more than a graph may hold")
    input_names = _input_names(model.forward, inputs, tensor_at)
    kinds = [("input", None, n) for n in input_names]
    for name, t in named:
        kind = "parameter" if isinstance(t, torch.nn.Parameter) else "buffer"
        kinds.append((kind, name, name.replace(".", "_")))
    return _encode(gm.graph, kinds)


def _input_names(forward: Callable, inputs: list[Any], tensor_at: list[int]) -> list[str]:
    try:
        params = [p for p in inspect.signature(forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = []
    for i in tensor_at:
        names.append(params[i].name if i < len(params) else f"input_{i}")
    return names


def _encode(graph: torch.fx.Graph, kinds: list[tuple[str, str | None, str]]) -> dict[str, Any]:
    names: dict[torch.fx.Node, str] = {}
    used: set[str] = set()

    def unique(base: str) -> str:
        base = re.sub(r"\W", "_", base) or "v"
        name, n = base, 1
        while name in used:
            name, n = f"{base}_{n}", n + 1
        used.add(name)
        return name

    inputs, nodes, outputs = [], [], []
    placeholders = [n for n in graph.nodes if n.op == "placeholder"]
    for node, (kind, target, name) in zip(placeholders, kinds, strict=True):
        names[node] = unique(name)
        inputs.append({"name": names[node], "kind": kind, "target": target, **_tensor(node)})
    for node in graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "get_attr":  # a tensor constant the forward made or holds outside its state
            names[node] = unique(str(node.target))
            inputs.append({"name": names[node], "kind": "constant", "target": str(node.target),
                           **_tensor(node)})
        elif node.op == "call_function":
            names[node] = unique(node.name)
            nodes.append({"name": names[node], "target": _target(node.target),
                          "args": [_arg(a, names) for a in node.args],
                          "kwargs": {k: _arg(v, names) for k, v in node.kwargs.items()},
                          "outputs": _outputs(node)})
        elif node.op == "output":
            outputs = _flat_refs(node.args[0], names)
    return {"captured": True, "reason": None, "method": METHOD, "inputs": inputs,
            "nodes": nodes, "outputs": outputs}


def _target(target: Any) -> str:
    if isinstance(target, torch._ops.OpOverload):
        return f"aten.{target.__name__}" if target.namespace == "aten" else \
            f"{target.namespace}.{target.__name__}"
    return getattr(target, "__name__", str(target))


def _tensor(node: torch.fx.Node) -> dict[str, Any]:
    val = node.meta.get("val")
    if isinstance(val, torch.Tensor):
        return {"shape": [int(s) for s in val.shape], "dtype": _dtype(val.dtype)}
    return {"shape": None, "dtype": type(val).__name__ if val is not None else None}


def _outputs(node: torch.fx.Node) -> list[dict[str, Any]]:
    val = node.meta.get("val")
    vals = val if isinstance(val, list | tuple) else [val]
    out = []
    for v in vals:
        if isinstance(v, torch.Tensor):
            out.append({"shape": [int(s) for s in v.shape], "dtype": _dtype(v.dtype)})
        else:
            out.append({"shape": None, "dtype": None})
    return out


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _arg(value: Any, names: dict[torch.fx.Node, str]) -> Any:
    if isinstance(value, torch.fx.Node):
        return {"ref": names[value]}
    if isinstance(value, bool | int | str) or value is None:
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"float": str(value)}
    if isinstance(value, list | tuple):
        return [_arg(v, names) for v in value]
    if isinstance(value, torch.dtype):
        return {"dtype": _dtype(value)}
    if isinstance(value, torch.device):
        return {"device": str(value)}
    return {"repr": repr(value)[:200]}


def _flat_refs(value: Any, names: dict[torch.fx.Node, str]) -> list[Any]:
    if isinstance(value, list | tuple):
        return [r for v in value for r in _flat_refs(v, names)]
    return [_arg(value, names)]


def _reason(exc: Exception) -> str:
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    data_dependent = ("data-dependent" in str(exc).lower() or "DataDependent" in type(exc).__name__
                      or "item" in text and "fake" in text.lower())
    why = ("the forward's control flow or shapes depend on tensor values, which a trace without "
           "real data cannot follow" if data_dependent else "the forward could not be traced")
    return f"{why} ({type(exc).__name__}: {text[:300]})"
