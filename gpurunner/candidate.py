"""The candidate job (runs in a sandboxed worker): answer the parent's commands.

`load` imports the candidate and builds `ModelNew`; each `go` runs it once on the inputs the
reference worker has just put into shared memory and copies its outputs, which must be plain
materialised tensors, into the shared output buffer; `facts` reports what the process saw.
Everything here runs inside the candidate's process, so none of it is trusted: the parent
times each `go` on its own clock and the reference worker checks the shared buffers.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from typing import Any

import torch

from gpurunner import inputs as inp
from gpurunner import integrity, kernel_resources, ncu, pch, transport
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

_equal = torch.equal  # bound before the candidate is imported
_Tensor = torch.Tensor
_Event = torch.cuda.Event


def patch_cpp_extension() -> None:
    """Make load_inline/load keep the compiler output in the exception they raise (KernelBench
    files pass verbose=True, which sends it to stdout instead), and use the runner's
    precompiled header for their flags when there is one (`gpurunner.pch`)."""
    import torch.utils.cpp_extension as ext

    def quiet(fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            kwargs["verbose"] = False
            header = pch.include_for(kwargs.get("extra_cflags"))
            if header:  # the runner's precompiled torch/extension.h for these flags
                kwargs["extra_include_paths"] = [header, *(kwargs.get("extra_include_paths") or [])]
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


class Candidate:
    """The candidate's model and the shared buffers it reads and writes."""

    def __init__(self, job: dict[str, Any], workdir: Path, applied: dict[str, Any]):
        self.job = job
        self.device: str = job["device"]
        self.cuda = self.device.startswith("cuda")
        self.workdir = workdir
        self.applied = applied
        self.model: Any = None
        self.args: list[Any] = []
        self.outs: list[torch.Tensor] = []
        self.out_bytes: list[int] = []
        self.source = (workdir / "candidate.py").read_text()
        self.filename = str(workdir / "candidate.py")
        os.environ.update(job.get("env", {}))  # build directory, arch list: read at build time
        self.ref_module = import_source(workdir / "reference.py", "reference")
        if self.cuda:
            torch.cuda.init()
            torch.empty(1, device=self.device)
        torch.ones(64, 64) @ torch.ones(64, 64)  # start the CPU thread pool before the snapshot
        if "compile" in self.source:
            # Importing Dynamo rebinds torch.manual_seed (a wrapper that disables tracing); the
            # harness does that import, so torch.compile candidates are not seen as tampering.
            importlib.import_module("torch._dynamo")
        self.snapshot = integrity.Snapshot()
        patch_cpp_extension()
        if self.cuda:
            kernel_resources.record_nvrtc_kernels()
        self.snapshot.functions = integrity._watched()  # the patched load_inline is not watched

    def ping(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        return {}

    def load(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Import the candidate and build ModelNew under the init seed."""
        try:
            check_syntax(self.source, self.filename)
            module = import_source(Path(self.filename), "candidate")
            require(module, self.source, ["ModelNew"], "candidate")
            self.model = inp.make_model(module.ModelNew, self.ref_module, self.device)
        except SourceError as exc:
            verdict = "compile_error" if exc.kind == "syntax" else "runtime_error"
            return {"ok": False, "verdict": verdict, "reason": exc.message, "line": exc.line}
        except BaseException as exc:  # noqa: BLE001 - candidate code may raise anything
            verdict = "compile_error" if is_build_error(exc) else "runtime_error"
            return {"ok": False, **_failure(verdict, exc, self.filename,
                                            "importing the candidate")}
        return {"forward_line": method_line(self.source, "ModelNew", "forward")}

    def attach(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Map the shared buffers (two fds: inputs, outputs): CPU memfd segments, or on CUDA
        the reference worker's device segments (`sizes`: their padded sizes)."""
        in_specs = [transport.TensorSpec.from_dict(d) for d in msg["inputs"]]
        out_specs = [transport.TensorSpec.from_dict(d) for d in msg["outputs"]]
        if self.cuda:
            in_size, out_size = (int(n) for n in msg["sizes"])
            tensors_in = transport.map_cuda_segment(fds[0], in_size, in_specs, self.device)
            self.outs = transport.map_cuda_segment(fds[1], out_size, out_specs, self.device)
        else:
            tensors_in = transport.map_segment(fds[0], in_specs)
            self.outs = transport.map_segment(fds[1], out_specs)
        for fd in fds:
            os.close(fd)
        it = iter(tensors_in)
        self.args = [next(it) if v is None else v for v in msg["values"]]
        self.out_bytes = [s.nbytes for s in out_specs]
        return {}

    def poison(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        integrity.poison_free_memory(self.out_bytes, self.device)
        return {}

    def go(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """One call on the shared inputs; its outputs copied into the shared buffer."""
        start = end = None
        if self.cuda:
            start, end = _Event(enable_timing=True), _Event(enable_timing=True)
            start.record()
        try:
            with torch.no_grad():
                outputs = inp.as_outputs(self.model(*self.args))
            problem = _output_problem(outputs, self.outs)
            if problem:
                name, detail = problem
                return {"ok": False, "verdict": "incorrect", "check": name, "detail": detail,
                        "reason": f"{name} failed: {detail}"}
            for buf, o in zip(self.outs, outputs, strict=True):
                buf.copy_(o)
            if end is not None:
                end.record()
            if self.cuda:
                torch.cuda.synchronize()
        except BaseException as exc:  # noqa: BLE001
            verdict = "compile_error" if is_build_error(exc) else "runtime_error"
            return {"ok": False, **_failure(verdict, exc, self.filename, "ModelNew")}
        return {"event_ms": start.elapsed_time(end) if start is not None else None}

    def facts(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """What this process saw: patched functions, threads, children, precision."""
        out: dict[str, Any] = {
            "tampered": self.snapshot.tampered(),
            "threads": self.snapshot.new_threads(),
            "native_threads": self.snapshot.new_native_threads(),
            "children": integrity.child_processes(),
            "precision_flags": integrity.precision_flags(),
            "precision_flags_before": self.snapshot.precision,
            "sandbox": self.applied,
        }

        def once() -> None:
            with torch.no_grad():
                self.model(*self.args)

        try:
            out["dtypes_produced"] = integrity.dtypes_produced(once)
        except Exception:  # noqa: BLE001 - compiled or custom code may not trace; not a failure
            out["dtypes_produced"] = []
        if self.job.get("policy") == "custom-kernels" or self.job.get("profile"):
            out["profile"] = integrity.profile_ops(once, self.device)
        if self.cuda:
            out["kernels"] = kernel_resources.collect(
                [Path(os.environ[name]) for name in ("TORCH_EXTENSIONS_DIR", "TRITON_CACHE_DIR")
                 if os.environ.get(name)])
        return out

    def counters(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Nsight Compute's counters for one call, made by a child of this sandbox."""
        return ncu.profile(self.workdir, self.device)


def _output_problem(outputs: list[Any], buffers: list[torch.Tensor]) -> tuple[str, str] | None:
    """Why the outputs cannot be taken as they are, or None. Only plain tensors count: a
    subclass or a lazy tensor could compute its values after the clock stops."""
    if len(outputs) != len(buffers):
        return "output_count", f"{len(outputs)} outputs where the reference returns {len(buffers)}"
    for i, (o, b) in enumerate(zip(outputs, buffers, strict=True)):
        if type(o) is not _Tensor:
            return "plain_outputs", (f"output {i} is a {type(o).__name__}, not a plain "
                                     "torch.Tensor (subclasses and lazy tensors are refused)")
        if tuple(o.shape) != tuple(b.shape) or o.dtype != b.dtype:
            return "shape_dtype", (f"output {i} is {tuple(o.shape)} {o.dtype}, expected "
                                   f"{tuple(b.shape)} {b.dtype}")
        if o.device != b.device:
            return "shape_dtype", f"output {i} is on {o.device}, expected {b.device}"
    return None


def run_candidate_job(job: dict[str, Any], workdir: Path, channel: transport.Channel,
                      applied: dict[str, Any]) -> dict[str, Any]:
    """Serve the parent's commands until it says `exit`."""
    cand = Candidate(job, workdir, applied)
    handlers = {name: getattr(cand, name) for name in (
        "ping", "load", "attach", "poison", "go", "facts", "counters")}
    transport.serve(channel, handlers)
    return {"ok": True}


__all__ = ["run_candidate_job", "patch_cpp_extension", "short_traceback"]
