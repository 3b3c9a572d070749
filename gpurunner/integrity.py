"""Guards the worker sets up before a candidate is imported and reads afterwards.

Each returns plain facts (JSON-able); the parent turns them into `Check`s, so a candidate
that tampers with its own process still cannot write its own verdict.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import torch


def _watched() -> dict[str, Any]:
    """The functions the harness relies on, by name, as they are right now."""
    cuda = torch.cuda
    return {
        "time.perf_counter": time.perf_counter,
        "time.perf_counter_ns": time.perf_counter_ns,
        "time.monotonic": time.monotonic,
        "time.time": time.time,
        "time.process_time": time.process_time,
        "torch.cuda.synchronize": cuda.synchronize,
        "torch.cuda.Event": cuda.Event,
        "torch.cuda.Event.record": cuda.Event.record,
        "torch.cuda.Event.elapsed_time": cuda.Event.elapsed_time,
        "torch.cuda.Event.synchronize": cuda.Event.synchronize,
        "torch.cuda.Stream.synchronize": cuda.Stream.synchronize,
        "torch.manual_seed": torch.manual_seed,
        "torch.randn": torch.randn,
        "torch.rand": torch.rand,
        "torch.randint": torch.randint,
        "torch.equal": torch.equal,
        "torch.Tensor.clone": torch.Tensor.clone,
        "torch.Tensor.copy_": torch.Tensor.copy_,
        "torch.Tensor.cpu": torch.Tensor.cpu,
        "torch.save": torch.save,
    }


class Snapshot:
    """What the process looked like before the candidate ran: watched functions, threads,
    precision flags."""

    def __init__(self) -> None:
        self.functions = _watched()
        self.threads = {t.ident for t in threading.enumerate()}
        self.tasks = native_threads()
        self.precision = precision_flags()

    def tampered(self) -> list[str]:
        """Names of watched functions that are no longer the ones bound before import."""
        now = _watched()
        return [name for name, fn in self.functions.items() if now.get(name) is not fn]

    def new_threads(self) -> list[str]:
        """Python threads still alive that did not exist before the candidate."""
        return [f"{t.name} ({'daemon' if t.daemon else 'non-daemon'})"
                for t in threading.enumerate()
                if t.ident not in self.threads and t.is_alive()]

    def new_native_threads(self) -> int:
        return len(native_threads() - self.tasks)


def native_threads() -> set[int]:
    """Thread ids of this process from /proc/self/task (empty where there is no /proc)."""
    try:
        return {int(p.name) for p in Path("/proc/self/task").iterdir()}
    except OSError:
        return set()


def child_processes() -> list[int]:
    """Live child processes of this process (zombies reaped first)."""
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass
    pids: list[int] = []
    for task in native_threads():
        try:
            text = Path(f"/proc/self/task/{task}/children").read_text()
        except OSError:
            continue
        pids.extend(int(p) for p in text.split())
    return pids


def precision_flags() -> dict[str, Any]:
    """The global switches that let torch compute float32 work in lower precision."""
    return {
        "matmul_tf32": bool(torch.backends.cuda.matmul.allow_tf32),
        "cudnn_tf32": bool(torch.backends.cudnn.allow_tf32),
        "float32_matmul_precision": torch.get_float32_matmul_precision(),
        "fp16_reduced_reduction": bool(
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
        "bf16_reduced_reduction": bool(
            torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction),
    }


def poison_free_memory(sizes: list[int], device: str) -> None:
    """Fill memory the allocator will hand out next with NaN, then free it.

    A candidate that returns `torch.empty_like(x)` hoping for a stale correct result gets
    NaN instead. On CUDA the caching allocator gives a freed block to the next request of
    the same size class, so blocks of each output's size are filled and freed, plus one
    large block that smaller requests are split from. On the CPU, `torch.empty` can return
    recycled heap memory: same approach.
    """
    cuda = device.startswith("cuda")
    if cuda:
        torch.cuda.empty_cache()
    blocks = []
    try:
        for n in sizes:
            for _ in range(4):
                blocks.append(torch.full((max(1, n // 4),), float("nan"), dtype=torch.float32,
                                         device=device))
        if cuda:
            free = torch.cuda.mem_get_info()[0]
            big = min(int(free * 0.25), 4 * max(sizes + [1 << 20]))
            blocks.append(torch.full((big // 4,), float("nan"), dtype=torch.float32,
                                     device=device))
            torch.cuda.synchronize()
    except (RuntimeError, torch.cuda.OutOfMemoryError):
        pass  # poisoning is best effort when memory is tight
    del blocks


def _self_time(e: Any, kind: str) -> float:
    if kind == "cpu":
        return float(getattr(e, "self_cpu_time_total", 0.0))
    for name in ("self_device_time_total", "self_cuda_time_total"):
        if hasattr(e, name):
            return float(getattr(e, name))
    return 0.0


def profile_ops(call: Any, device: str) -> dict[str, Any]:
    """Run `call()` once under torch.profiler; per op name its self time (us), and the total.

    On CUDA the times are device times (kernels), attributed to the aten op that launched
    them; kernels launched by the candidate's own code belong to no aten op.
    """
    from torch.profiler import ProfilerActivity, profile

    cuda = device.startswith("cuda")
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else [])
    with profile(activities=activities) as prof:
        call()
        if cuda:
            torch.cuda.synchronize()
    ops: dict[str, float] = {}
    kernels: dict[str, float] = {}
    kind = "cuda" if cuda else "cpu"
    for e in prof.key_averages():
        is_device = str(getattr(e, "device_type", "")).endswith(("CUDA", "PrivateUse1"))
        t = _self_time(e, kind)
        if cuda and is_device:
            kernels[e.key] = kernels.get(e.key, 0.0) + t
        elif not is_device and t > 0:
            ops[e.key] = ops.get(e.key, 0.0) + t
    total = sum(kernels.values()) if cuda else sum(ops.values())
    top_kernels = sorted(kernels.items(), key=lambda kv: -kv[1])[:10]
    return {"ops": ops, "total_us": total, "kernels": dict(top_kernels)}


def dtypes_produced(call: Any) -> list[str]:
    """Dtypes of every tensor the aten ops of `call()` produce (labels precision changes)."""
    from torch.utils._python_dispatch import TorchDispatchMode

    seen: set[str] = set()

    class Watch(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls) -> bool:
            # Shielding the handler from Dynamo imports Dynamo, about a second in every
            # worker; only compiled code needs the shield, and it imported Dynamo already.
            return "torch._dynamo" in sys.modules

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):  # noqa: ANN001
            out = func(*args, **(kwargs or {}))
            for t in out if isinstance(out, tuple | list) else [out]:
                if isinstance(t, torch.Tensor):
                    seen.add(str(t.dtype).replace("torch.", ""))
            return out

    with Watch():
        call()
    return sorted(seen)


def warm_up() -> None:
    """Pay once, before a job arrives, the first-use cost (about a second of imports) of the
    dispatch-mode scan and of the C++ extension loader."""
    import torch.utils.cpp_extension  # noqa: F401

    x = torch.ones(4)
    dtypes_produced(lambda: x + x)
