"""What the machine a candidate runs on can do, as plain data for the reference report: the
GPU's architecture, SMs, on-chip memory and bandwidth, or the CPU's cores and vector ISA, and
the software versions a kernel is compiled against. Runs inside the reference job."""

from __future__ import annotations

import importlib.metadata
import os
import platform
from typing import Any

import torch

from gpurunner.roofline import ceilings_for

# What each compute capability adds that a kernel writer would use.
ARCHITECTURES = {
    (7, 0): ("Volta", "tensor cores (fp16 mma)"),
    (7, 5): ("Turing", "tensor cores (fp16/int8 mma)"),
    (8, 0): ("Ampere", "cp.async, bf16/tf32 tensor cores (mma.sync), 2:4 sparsity"),
    (8, 6): ("Ampere", "cp.async, bf16/tf32 tensor cores (mma.sync)"),
    (8, 9): ("Ada", "cp.async, fp8 tensor cores (mma.sync)"),
    (9, 0): ("Hopper", "wgmma (warpgroup tensor-core MMA), TMA (bulk async copies with tensor "
                       "maps), thread-block clusters with distributed shared memory, fp8"),
    (10, 0): ("Blackwell", "tcgen05 MMA with tensor memory, TMA, clusters, fp4/fp6/fp8"),
    (12, 0): ("Blackwell", "fp4/fp6/fp8 tensor cores (mma.sync), TMA"),
}
_CPU_FLAGS = ("avx", "avx2", "fma", "avx512f", "avx512bw", "avx512vl", "avx512_bf16", "avx512_vnni",
              "amx_tile", "amx_bf16", "neon", "asimd", "sve")


def _version(package: str) -> str | None:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _gpu(index: int = 0) -> dict[str, Any]:
    props = torch.cuda.get_device_properties(index)
    major, minor = props.major, props.minor
    arch, features = ARCHITECTURES.get((major, minor), ("", ""))
    facts: dict[str, Any] = {
        "kind": "cuda", "name": props.name, "compute_capability": f"{major}.{minor}",
        "sm": f"sm_{major}{minor}{'a' if major >= 9 else ''}", "architecture": arch,
        "features": features, "sm_count": props.multi_processor_count,
        "memory_bytes": props.total_memory, "cuda": torch.version.cuda,
    }
    for key, attr in (("warp_size", "warp_size"), ("max_threads_per_sm", "max_threads_per_multi_processor"),
                      ("registers_per_sm", "regs_per_multiprocessor"),
                      ("shared_memory_per_sm", "shared_memory_per_multiprocessor"),
                      ("shared_memory_per_block", "shared_memory_per_block"),
                      ("shared_memory_per_block_optin", "shared_memory_per_block_optin"),
                      ("l2_bytes", "L2_cache_size")):
        value = getattr(props, attr, None)
        if value:
            facts[key] = int(value)
    ceilings = ceilings_for(props.name)
    if ceilings is not None:
        facts |= {"peak_bandwidth": ceilings.peak_bw, "measured_bandwidth": ceilings.bw,
                  "flops_fp32": ceilings.flops["fp32"], "flops_tf32": ceilings.flops["tf32"],
                  "flops_bf16": ceilings.flops["bf16"]}
    return facts


def _cpu() -> dict[str, Any]:
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                key, _, value = line.partition(":")
                if key.strip() == "model name" and model in ("", platform.machine()):
                    model = value.strip()
                elif key.strip() in ("flags", "Features") and not flags:
                    flags = set(value.split())
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"kind": "cpu", "name": model, "cores": cores, "threads": torch.get_num_threads(),
            "vector_isa": [f for f in _CPU_FLAGS if f in flags],
            "torch_cpu_capability": torch.backends.cpu.get_cpu_capability()}


def describe(device: str) -> dict[str, Any]:
    """The device's facts and the versions of torch, Triton and the compilers' runtime."""
    facts = _gpu(torch.cuda.current_device()) if device.startswith("cuda") else _cpu()
    facts["torch"] = torch.__version__
    triton = _version("triton")
    if triton and device.startswith("cuda"):
        facts["triton"] = triton
    return facts
