"""Registers, stack frame and static shared memory of each of a candidate's GPU kernels.

Runs in the candidate's sandboxed worker after its timed calls. The figures are the ones
ptxas fixed when it compiled the code that was loaded: `cuobjdump -res-usage` read from the
candidate's C++/CUDA extensions (`TORCH_EXTENSIONS_DIR`) and from Triton's cubins
(`TRITON_CACHE_DIR`, which holds torch.compile's kernels too), and the driver's own attributes
for kernels compiled with NVRTC (`torch.cuda._compile_kernel`), which exist only in memory.
A stack frame above zero means spilled registers or a local array: both live in local memory,
which is DRAM behind L1. Advisory context for the proposer and the node panel, never a fact a
verdict rests on (the candidate's process could rewrite any of it).
"""

from __future__ import annotations

import ctypes
import os
import re
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

MAX_BINARIES = 32
MAX_BINARY_BYTES = 512 << 20
MAX_KERNELS = 64
TOOL_TIMEOUT_S = 30.0

_FUNCTION = re.compile(
    r"Function (?P<name>\S+):\s*\n\s*REG:(?P<registers>\d+)\s+STACK:(?P<stack>\d+)\s+"
    r"SHARED:(?P<shared>\d+)\s+LOCAL:(?P<local>\d+)")

# cuFuncGetAttribute's numbering (cuda.h, CUfunction_attribute).
_ATTR_SHARED_SIZE_BYTES = 1
_ATTR_LOCAL_SIZE_BYTES = 3
_ATTR_NUM_REGS = 4

_nvrtc_kernels: dict[str, Any] = {}  # name -> torch's _CudaKernel, as the candidate made them


def parse_res_usage(text: str) -> list[dict[str, Any]]:
    """One entry per function in `cuobjdump -res-usage` output (its ELF sections; the PTX
    sections have no figures)."""
    return [{"name": m["name"], "registers": int(m["registers"]),
             "local_bytes": int(m["stack"]) + int(m["local"]), "shared_bytes": int(m["shared"]),
             "from": "cuobjdump"} for m in _FUNCTION.finditer(text)]


def cuda_tool(name: str) -> str | None:
    """The path of a CUDA toolkit program (cuobjdump, cu++filt, ncu), or None."""
    home = os.environ.get("CUDA_HOME") or os.environ.get("CUDA_PATH") or "/usr/local/cuda"
    candidate = Path(home) / "bin" / name
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return str(candidate)
    return shutil.which(name)


def binaries(folders: list[Path], limit: int = MAX_BINARIES) -> list[Path]:
    """Shared libraries and cubins under `folders`, regular files only, never through links."""
    found: list[Path] = []
    for folder in folders:
        for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
            dirnames[:] = sorted(d for d in dirnames if not os.path.islink(os.path.join(dirpath, d)))
            for name in sorted(filenames):
                path = Path(dirpath) / name
                if not name.endswith((".so", ".cubin")) or name.startswith(
                        ("__triton_launcher", "cuda_utils")):
                    continue  # Triton's host-side launchers hold no device code
                st = os.lstat(path)
                if stat.S_ISREG(st.st_mode) and st.st_size <= MAX_BINARY_BYTES:
                    found.append(path)
                if len(found) >= limit:
                    return found
    return found


def _run(argv: list[str], stdin: str | None = None) -> str:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, text=True,
                              timeout=TOOL_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return ""
    return done.stdout[: 4 << 20]


def demangle(names: list[str]) -> dict[str, str]:
    """C++ names as a reader writes them (`light(float *, int)`), through cu++filt."""
    tool = cuda_tool("cu++filt")
    mangled = [n for n in names if n.startswith("_Z")]
    if not tool or not mangled:
        return {}
    lines = _run([tool], "\n".join(mangled) + "\n").splitlines()
    return dict(zip(mangled, lines, strict=False)) if len(lines) == len(mangled) else {}


def record_nvrtc_kernels() -> None:
    """Keep each kernel torch.cuda._compile_kernel loads, so its figures can be read later
    (NVRTC's output never touches the disk)."""
    try:
        import torch.cuda._utils as cuda_utils
    except ImportError:
        return
    load = getattr(cuda_utils, "_cuda_load_module", None)
    if load is None or hasattr(load, "__wrapped__"):
        return

    def recording(*args: Any, **kwargs: Any) -> Any:
        result = load(*args, **kwargs)
        if isinstance(result, dict):
            for name, kernel in list(result.items())[:MAX_KERNELS]:
                _nvrtc_kernels[str(name)] = kernel
        return result

    recording.__wrapped__ = load  # type: ignore[attr-defined]
    cuda_utils._cuda_load_module = recording


def nvrtc_resources() -> list[dict[str, Any]]:
    """The driver's figures for the NVRTC kernels recorded so far."""
    if not _nvrtc_kernels:
        return []
    try:
        import torch.cuda._utils as cuda_utils
        lib = cuda_utils._get_cuda_library()
    except Exception:  # noqa: BLE001 - no driver library: nothing to report
        return []
    out = []
    for name, kernel in _nvrtc_kernels.items():
        values = {}
        for key, attr in (("registers", _ATTR_NUM_REGS), ("local_bytes", _ATTR_LOCAL_SIZE_BYTES),
                          ("shared_bytes", _ATTR_SHARED_SIZE_BYTES)):
            value = ctypes.c_int()
            if lib.cuFuncGetAttribute(ctypes.byref(value), attr, kernel.func) != 0:
                break
            values[key] = value.value
        else:
            out.append({"name": name, **values, "from": "driver"})
    return out


def collect(folders: list[Path]) -> list[dict[str, Any]]:
    """Every kernel's figures: from the binaries under `folders` and the NVRTC kernels."""
    kernels: list[dict[str, Any]] = []
    tool = cuda_tool("cuobjdump")
    if tool:
        for path in binaries(folders):
            kernels.extend(parse_res_usage(_run([tool, "-res-usage", str(path)])))
    kernels.extend(nvrtc_resources())
    readable = demangle([k["name"] for k in kernels])
    seen: dict[str, dict[str, Any]] = {}
    for k in kernels:
        k["name"] = readable.get(k["name"], k["name"])
        seen.setdefault(k["name"], k)
    return list(seen.values())[:MAX_KERNELS]


def _bytes(n: int) -> str:
    return f"{n / 1024:.3g} KiB" if n >= 1024 else f"{n} B"


def describe(row: dict[str, Any]) -> str:
    """One kernel's figures as a line a kernel engineer reads (CLI, prompts)."""
    parts = []
    if "registers" in row:
        parts.append(f"{row['registers']} registers/thread")
    if "local_bytes" in row:
        local = row["local_bytes"]
        parts.append(f"{_bytes(local)} local memory/thread (register spills or local arrays)"
                     if local else "no local memory (no spills)")
    if row.get("shared_bytes"):
        parts.append(f"{_bytes(row['shared_bytes'])} static shared memory")
    if "duration_us" in row:
        launches = row.get("launches", 1)
        parts.append(f"{row['duration_us']:.4g} us under ncu"
                     + (f" over {launches} launches" if launches > 1 else ""))
    if "dram_pct" in row:
        parts.append(f"DRAM throughput {row['dram_pct']:.3g}% of peak")
    if "sm_pct" in row:
        parts.append(f"SM throughput {row['sm_pct']:.3g}%")
    if "occupancy_pct" in row:
        theoretical = row.get("theoretical_occupancy_pct")
        parts.append(f"achieved occupancy {row['occupancy_pct']:.3g}%"
                     + (f" of {theoretical:.3g}% theoretical" if theoretical is not None else ""))
    return f"`{row['name']}`: " + ", ".join(parts)
