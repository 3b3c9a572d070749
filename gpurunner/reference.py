"""The trusted reference job (runs in its own sandboxed worker, never with a candidate).

Validates a KernelBench-format reference: runs it on inputs from a fresh seed (twice, to find
a forward whose outputs are not deterministic), records shapes, dtypes, FLOPs, bytes and the
operator graph. Evaluations compute reference outputs in a worker of their own
(`gpurunner.referee`), never from anything this job leaves behind.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from gpurunner import determinism, hardware
from gpurunner import inputs as inp
from gpurunner.graph import capture
from gpurunner.load import (
    SourceError,
    check_syntax,
    definition_line,
    error_line,
    import_source,
    method_line,
    require,
    short_traceback,
)

TRIVIAL_OPS = {
    "aten::empty", "aten::empty_like", "aten::empty_strided", "aten::view", "aten::reshape",
    "aten::_unsafe_view", "aten::t", "aten::transpose", "aten::permute", "aten::expand",
    "aten::contiguous", "aten::clone", "aten::copy_", "aten::to", "aten::_to_copy",
    "aten::detach", "aten::slice", "aten::select", "aten::as_strided", "aten::unsqueeze",
    "aten::squeeze", "aten::zeros", "aten::zeros_like", "aten::zero_", "aten::fill_",
    "aten::resize_", "aten::lift_fresh", "aten::alias", "aten::split", "aten::chunk",
    "aten::flatten", "aten::unbind", "aten::ones", "aten::ones_like", "aten::full",
    "aten::new_empty", "aten::new_zeros", "aten::_reshape_alias", "aten::expand_as",
}


def _traced_ops(model: Any, args: list[Any]) -> list[str]:
    """The aten operators the forward runs, in first-seen order."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: dict[str, None] = {}

    class Trace(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            seen[func._schema.name] = None
            return func(*args, **(kwargs or {}))

    try:
        with Trace(), torch.no_grad():
            model(*args)
    except Exception:  # noqa: BLE001 - tracing is informative only
        return []
    return list(seen)


def _flops(model: Any, args: list[Any]) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    try:
        counter = FlopCounterMode(display=False)
        with counter, torch.no_grad():
            model(*args)
        return float(counter.get_total_flops())
    except Exception:  # noqa: BLE001 - ops without a FLOP formula count as 0
        return 0.0


def _device_info(device: str) -> dict[str, Any]:
    if device.startswith("cuda"):
        props = torch.cuda.get_device_properties(0)
        return {"device_name": props.name, "capability": f"{props.major}.{props.minor}",
                "total_memory": props.total_memory, "torch": torch.__version__}
    import platform

    return {"device_name": platform.processor() or platform.machine() or "cpu",
            "torch": torch.__version__}


def _fail(exc: SourceError) -> dict[str, Any]:
    return {"ok": False, "error": exc.message, "line": exc.line, "detail": exc.detail}


def _call(source: str, filename: str, what: str, line_hint: int | None, fn: Any,
          *args: Any) -> Any:
    """Call user code; turn an exception into a SourceError naming the line."""
    try:
        return fn(*args)
    except torch.cuda.OutOfMemoryError as exc:
        raise SourceError(f"{what} ran out of device memory", line_hint, "raised",
                          short_traceback(exc)) from exc
    except Exception as exc:  # noqa: BLE001 - user code may raise anything
        line = error_line(exc, filename) or line_hint
        where = f" (line {line})" if line else ""
        raise SourceError(f"{what} raised {type(exc).__name__}: {exc}{where}"[:500], line,
                          "raised", short_traceback(exc)) from exc


def run_reference_job(job: dict[str, Any], workdir: Path, send: Any) -> dict[str, Any]:
    """Validate the reference and compute what the parent asked for; returns result.json."""
    try:
        return _run(job, workdir, send)
    except SourceError as exc:
        return _fail(exc)


def _run(job: dict[str, Any], workdir: Path, send: Any) -> dict[str, Any]:
    device = job["device"]
    path = workdir / "reference.py"
    source = path.read_text()
    filename = str(path)
    check_syntax(source, filename)
    module = _call(source, filename, "importing the reference", None, import_source, path,
                   "reference")
    send("built")
    require(module, source, ["Model", "get_inputs", "get_init_inputs"], "reference")
    if not (isinstance(module.Model, type) and issubclass(module.Model, torch.nn.Module)):
        raise SourceError("`Model` is not a subclass of torch.nn.Module",
                          definition_line(source, "Model"), "type")
    info = _device_info(device)

    init = _call(source, filename, "get_init_inputs()", definition_line(source, "get_init_inputs"),
                 module.get_init_inputs)
    if not isinstance(init, list | tuple):
        raise SourceError(f"get_init_inputs() returns a {type(init).__name__}, not a list",
                          definition_line(source, "get_init_inputs"), "type")
    model = _call(source, filename, "Model(*get_init_inputs())", definition_line(source, "Model"),
                  inp.make_model, module.Model, module, device)

    seeds: list[int] = job["seeds"]
    gi_line = definition_line(source, "get_inputs")
    fwd_line = method_line(source, "Model", "forward")
    report: dict[str, Any] = {"ok": True, **info, "init_inputs": _jsonable(init),
                              "hardware": hardware.describe(device)}
    first_inputs: list[Any] = []
    for n, seed in enumerate(seeds):
        values = _call(source, filename, "get_inputs()", gi_line, inp.make_inputs, module, seed,
                       device)
        if not isinstance(values, list) or not values:
            raise SourceError(f"get_inputs() returns a {type(values).__name__}, not a non-empty "
                              "list of tensors", gi_line, "type")
        bad = [i for i, v in enumerate(values) if not isinstance(v, torch.Tensor | int | float | bool)]
        if bad:
            raise SourceError(f"get_inputs() item {bad[0]} is a {type(values[bad[0]]).__name__}, "
                              "not a tensor", gi_line, "type")
        if n == 0:
            _check_fits(values, device, gi_line)
            report["input_shapes"], report["input_dtypes"] = inp.describe(values)
        values = inp.to_device(values, device)
        with torch.no_grad():
            out = _call(source, filename, "Model.forward", fwd_line, model, *values)
        outputs = inp.as_outputs(out)
        nontensor = [i for i, o in enumerate(outputs) if not isinstance(o, torch.Tensor)]
        if nontensor:
            raise SourceError(f"Model.forward returns a {type(outputs[nontensor[0]]).__name__}, "
                              "not a tensor or a tuple of tensors", fwd_line, "type")
        if device.startswith("cuda"):
            _call(source, filename, "Model.forward", fwd_line, torch.cuda.synchronize)
        if n == 0:
            if diff := _call(source, filename, "Model.forward", fwd_line,
                             determinism.rerun_difference, model, module, seed, device, outputs):
                raise SourceError(determinism.message(diff), fwd_line, "nondeterministic")
            report["output_shapes"], report["output_dtypes"] = inp.describe(outputs)
            report["bytes"] = float(inp.input_bytes(values) + inp.input_bytes(outputs))
            first_inputs = values
    report["eager_ms_estimate"] = _call(source, filename, "Model.forward", fwd_line,
                                        _estimate_ms, model, first_inputs, device)
    report["flops"] = _flops(model, first_inputs)
    report["operators"] = _traced_ops(model, first_inputs)
    report["graph"] = capture(model, first_inputs)
    report["parameters"] = int(sum(p.numel() for p in model.parameters()))
    return report


def _estimate_ms(model: Any, values: list[Any], device: str, budget_s: float = 1.0,
                 calls: int = 5) -> float:
    """The median of a few eager calls, within about `budget_s`: context for a proposer's
    first prompt only (the reference's own process times it, so it is never a verdict's fact:
    speedups come from the paired timing)."""
    import time

    times = []
    start = time.perf_counter()
    with torch.no_grad():
        while len(times) < calls and (not times or time.perf_counter() - start < budget_s):
            t0 = time.perf_counter()
            model(*values)
            if device.startswith("cuda"):
                torch.cuda.synchronize()
            times.append((time.perf_counter() - t0) * 1e3)
    return sorted(times)[len(times) // 2]


def _check_fits(values: list[Any], device: str, line: int | None) -> None:
    need = sum(v.numel() * v.element_size() for v in values if isinstance(v, torch.Tensor))
    if device.startswith("cuda"):
        free = torch.cuda.mem_get_info()[0]
    else:
        try:
            import os

            free = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError):
            return
    # Inputs, their copies, outputs and timing buffers must fit together.
    if need * 4 > free:
        raise SourceError(f"get_inputs() makes {need / 2**30:.2f} GiB of inputs; with copies and "
                          f"outputs that exceeds the {free / 2**30:.1f} GiB free on {device}",
                          line, "type")


def _jsonable(values: Any) -> list[Any]:
    out = []
    for v in values:
        if isinstance(v, int | float | str | bool) or v is None:
            out.append(v)
        elif isinstance(v, torch.Tensor):
            out.append(f"tensor{list(v.shape)}")
        else:
            out.append(repr(v)[:100])
    return out
