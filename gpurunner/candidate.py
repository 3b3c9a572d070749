"""The candidate job (runs in a sandboxed worker): import, run the trials, time, report facts.

The worker never sees reference outputs: it returns the candidate's outputs (trials and the
last timed call) and raw facts (mutated inputs, threads, patched functions, profile), and
the parent decides the verdict.
"""

from __future__ import annotations

import importlib
import os
import time
from pathlib import Path
from typing import Any

import torch

from gpurunner import inputs as inp
from gpurunner import integrity
from gpurunner.build import format_compile_error, is_build_error
from gpurunner.load import (
    SourceError,
    check_syntax,
    error_line,
    import_source,
    method_line,
    require,
    short_traceback,
)
from gpurunner.timing import bench

_equal = torch.equal  # bound before the candidate is imported


def patch_cpp_extension() -> None:
    """Make load_inline/load keep the compiler output in the exception they raise (KernelBench
    files pass verbose=True, which sends it to stdout instead)."""
    import torch.utils.cpp_extension as ext

    def quiet(fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs["verbose"] = False
            return fn(*args, **kwargs)

        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    if not hasattr(ext.load_inline, "__wrapped__"):
        ext.load_inline = quiet(ext.load_inline)
        ext.load = quiet(ext.load)


def _failure(verdict: str, exc: BaseException, filename: str, what: str) -> dict[str, Any]:
    line = error_line(exc, filename)
    where = f" (line {line})" if line else ""
    if verdict == "compile_error" and "Error building extension" in str(exc):
        summary, log = format_compile_error(str(exc))
        return {"verdict": verdict, "reason": f"build failed: {summary}", "compile_log": log,
                "line": line}
    reason = f"{what} raised {type(exc).__name__}: {str(exc).strip()}"
    return {"verdict": verdict, "reason": reason[:400] + where, "error": short_traceback(exc),
            "line": line}


def _sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def run_candidate_job(job: dict[str, Any], workdir: Path, send: Any) -> dict[str, Any]:
    """Everything the parent needs to judge the candidate; see module docstring."""
    t_job = time.monotonic()
    device = job["device"]
    os.environ.update(job.get("env", {}))  # build directory, arch list: read at build time
    ref_module = import_source(workdir / "reference.py", "reference")
    if device.startswith("cuda"):
        torch.cuda.init()
        torch.empty(1, device=device)
    torch.ones(64, 64) @ torch.ones(64, 64)  # start the CPU thread pool before the snapshot
    if "compile" in (workdir / "candidate.py").read_text():
        # Importing Dynamo rebinds torch.manual_seed (a wrapper that disables tracing); let the
        # trusted harness do that import, so torch.compile candidates are not seen as tampering.
        importlib.import_module("torch._dynamo")
    device_init_s = time.monotonic() - t_job
    snapshot = integrity.Snapshot()
    patch_cpp_extension()
    snapshot.functions = integrity._watched()  # the patched load_inline is not watched

    path = workdir / "candidate.py"
    filename = str(path)
    source = path.read_text()
    t0 = time.monotonic()
    try:
        check_syntax(source, filename)
        module = import_source(path, "candidate")
        require(module, source, ["ModelNew"], "candidate")
    except SourceError as exc:
        verdict = "compile_error" if exc.kind == "syntax" else "runtime_error"
        return {"verdict": verdict, "reason": exc.message, "line": exc.line,
                "compile_s": time.monotonic() - t0}
    except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
        verdict = "compile_error" if is_build_error(exc) else "runtime_error"
        out = _failure(verdict, exc, filename, "importing the candidate")
        out["compile_s"] = time.monotonic() - t0
        return out
    compile_s = time.monotonic() - t0
    send("built", compile_s=compile_s)
    result: dict[str, Any] = {"import_s": compile_s, "device_init_s": device_init_s}
    try:
        result.update(_run_trials(job, module, ref_module, source, filename, snapshot))
    except BaseException as exc:  # noqa: BLE001
        verdict = "compile_error" if is_build_error(exc) else "runtime_error"
        result.update(_failure(verdict, exc, filename, "ModelNew"))
    # Compile time: import (C++/CUDA builds, NVRTC) plus the first call (Triton's JIT).
    result["compile_s"] = compile_s + float(result.get("first_call_s") or 0.0)
    return result


def _run_trials(job: dict[str, Any], module: Any, ref_module: Any, source: str, filename: str,
                snapshot: integrity.Snapshot) -> dict[str, Any]:
    device = job["device"]
    workdir = Path(filename).parent
    model = inp.make_model(module.ModelNew, ref_module, device)
    first_compute = time.monotonic()
    out_sizes = job.get("output_bytes", [])
    trials: dict[str, list[Any]] = {}
    mutated: list[int] = []
    first_call_s_holder: list[float] = []
    for seed in job["seeds"]:
        values = inp.to_device(inp.make_inputs(ref_module, seed, device), device)
        pristine = [v.clone() if isinstance(v, torch.Tensor) else v for v in values]
        integrity.poison_free_memory(out_sizes, device)
        t_call = time.monotonic()
        with torch.no_grad():
            out = model(*values)
        _sync(device)
        if not first_call_s_holder:  # Triton and lazy code compile on the first call
            first_call_s_holder.append(time.monotonic() - t_call)
        outputs = inp.as_outputs(out)
        trials[str(seed)] = inp.detach_cpu(outputs)
        for i, (v, p) in enumerate(zip(values, pristine, strict=True)):
            if isinstance(v, torch.Tensor) and not _equal_nan(v, p):
                mutated.append(i)
        del out, outputs, values, pristine
    first_s = time.monotonic() - first_compute
    first_call_s = first_call_s_holder[0]
    if any(isinstance(o, torch.Tensor) is False for outs in trials.values() for o in outs):
        # Non-tensor outputs go back as they are; the parent reports the type.
        pass

    # Timing: inputs refilled in place from alternating fresh sets before every run, so an
    # output cached on the input's identity is stale; the last call's output is re-checked.
    t_timing = time.monotonic()
    timing_sets = [inp.to_device(inp.make_inputs(ref_module, s, device), device)
                   for s in job["timing_seeds"]]
    buffers = [v.clone() if isinstance(v, torch.Tensor) else v for v in timing_sets[0]]
    state: dict[str, Any] = {"set": 0, "out": None}

    def prepare(i: int) -> None:
        k = i % len(timing_sets)
        for b, s in zip(buffers, timing_sets[k], strict=True):
            if isinstance(b, torch.Tensor):
                b.copy_(s)
        state["set"] = k

    def call() -> None:
        with torch.no_grad():
            state["out"] = model(*buffers)

    integrity.poison_free_memory(out_sizes, device)
    timing = bench(call, device=device, prepare=prepare, **job.get("timing", {}))
    _sync(device)
    timed = {"seed": job["timing_seeds"][state["set"]],
             "outputs": inp.detach_cpu(inp.as_outputs(state["out"]))}
    state["out"] = None

    facts: dict[str, Any] = {
        "tampered": snapshot.tampered(),
        "threads": snapshot.new_threads(),
        "native_threads": snapshot.new_native_threads(),
        "children": integrity.child_processes(),
        "precision_flags": integrity.precision_flags(),
        "precision_flags_before": snapshot.precision,
    }
    timing_s = time.monotonic() - t_timing
    sample = timing_sets[0]

    def once() -> None:
        with torch.no_grad():
            model(*sample)

    try:
        facts["dtypes_produced"] = integrity.dtypes_produced(once)
    except Exception:  # noqa: BLE001 - compiled or custom code may not trace; not a failure
        facts["dtypes_produced"] = []
    if job.get("policy") == "custom-kernels":
        facts["profile"] = integrity.profile_ops(once, device)
    t_save = time.monotonic()
    torch.save({"trials": trials, "timed": timed}, workdir / "cand_outputs.pt")
    facts["save_s"] = time.monotonic() - t_save
    return {"ok": True, "timing": timing.to_dict(), "mutated": sorted(set(mutated)),
            "trials_s": first_s, "timing_s": timing_s, "first_call_s": first_call_s, "forward_line": method_line(source, "ModelNew", "forward"),
            **facts}


def _equal_nan(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    if a.is_floating_point():
        return bool(_equal(a.nan_to_num(0.0, 1.0, -1.0), b.nan_to_num(0.0, 1.0, -1.0))) and bool(
            _equal(a.isnan(), b.isnan()))
    return bool(_equal(a, b))


__all__ = ["run_candidate_job", "patch_cpp_extension", "short_traceback"]
