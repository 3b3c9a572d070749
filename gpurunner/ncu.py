"""A few Nsight Compute counters for each kernel of one call of a candidate.

`profile()` runs in the candidate's sandboxed worker after its timed calls, where `ncu` is
installed: it starts `ncu` on `python -m gpurunner.ncu WORKDIR DEVICE`, a child of the same
sandbox (same user id, namespaces and filter) that imports the candidate again (its build and
Triton's cubins are already in the sandbox's caches), makes the reference's inputs, runs one
warm-up call and profiles the next. ncu replays each kernel with its caches flushed and its
clocks locked at base, so its durations are longer than the timed calls': they say where a
call's time goes, and the percentages say how close each kernel is to the memory system's and
the SMs' peak. Advisory, like the torch profile: the candidate's process could forge it.
"""

from __future__ import annotations

import csv
import io
import subprocess
import sys
from pathlib import Path
from typing import Any

from gpurunner.kernel_resources import cuda_tool

TIMEOUT_S = 120.0
MAX_LAUNCHES = 64  # kernels profiled in the call: a deep network launches hundreds
# Metric -> the field it fills, as a kernel engineer reads them.
METRICS = {
    "gpu__time_duration.sum": "duration_us",
    "dram__throughput.avg.pct_of_peak_sustained_elapsed": "dram_pct",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed": "sm_pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "occupancy_pct",
    "sm__maximum_warps_per_active_cycle_pct": "theoretical_occupancy_pct",
    "launch__registers_per_thread": "registers",
}
_PERCENTAGES = ("dram_pct", "sm_pct", "occupancy_pct", "theoretical_occupancy_pct")


def _value(text: str, unit: str) -> float | None:
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    return value / 1e3 if unit == "ns" else value * 1e3 if unit in ("us", "usecond") else value


def parse_csv(text: str) -> list[dict[str, Any]]:
    """Kernels from `ncu --csv` output, one entry per kernel name: launches, total duration
    (us) and each percentage weighted by the launches' durations; the longest first."""
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if start is None:
        return []
    launches: dict[str, dict[str, Any]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        field = METRICS.get(row.get("Metric Name") or "")
        value = _value(row.get("Metric Value") or "", row.get("Metric Unit") or "")
        if field and value is not None:
            launch = launches.setdefault(row.get("ID") or "", {"name": row.get("Kernel Name", "")})
            launch[field] = value
    kernels: dict[str, dict[str, Any]] = {}
    for launch in launches.values():
        k = kernels.setdefault(launch["name"], {"name": launch["name"], "launches": 0,
                                                "duration_us": 0.0, "_weighted": {}})
        k["launches"] += 1
        weight = launch.get("duration_us", 0.0)
        k["duration_us"] += weight
        if "registers" in launch:
            k["registers"] = int(launch["registers"])
        for key in _PERCENTAGES:
            if key in launch:
                total, w = k["_weighted"].get(key, (0.0, 0.0))
                k["_weighted"][key] = (total + launch[key] * max(weight, 1e-9),
                                       w + max(weight, 1e-9))
    out = []
    for k in kernels.values():
        for key, (total, w) in k.pop("_weighted").items():
            k[key] = round(total / w, 2)
        k["duration_us"] = round(k["duration_us"], 3)
        out.append(k)
    return sorted(out, key=lambda k: -k["duration_us"])


def _failure_line(text: str) -> str:
    """ncu's own error (`==ERROR== ...`) or the target's last line."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    errors = [ln for ln in lines if ln.startswith("==ERROR==")]
    return (errors[0] if errors else lines[-1] if lines else "no output")[:300]


def profile(workdir: Path, device: str) -> dict[str, Any]:
    """{"kernels": [...]} for one call of the candidate in `workdir`, or {"error": why}."""
    tool = cuda_tool("ncu")
    if tool is None:
        return {"error": "Nsight Compute (ncu) is not installed on this GPU host"}
    log = workdir / ".ncu.csv"
    argv = [tool, "--csv", "--log-file", str(log), "--metrics", ",".join(METRICS),
            "--profile-from-start", "off", "--launch-count", str(MAX_LAUNCHES),
            "--target-processes", "all", sys.executable, "-m", "gpurunner.ncu", str(workdir),
            device]
    try:
        done = subprocess.run(argv, cwd=workdir, capture_output=True, text=True,
                              timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"Nsight Compute did not finish within {TIMEOUT_S:.0f} s"}
    except OSError as exc:
        return {"error": f"Nsight Compute could not start: {exc}"}
    text = log.read_text(errors="replace")[: 8 << 20] if log.is_file() else ""
    kernels = parse_csv(text)
    if kernels:
        return {"kernels": kernels}
    return {"error": "Nsight Compute recorded no kernel (exit status "
                     f"{done.returncode}): {_failure_line(text + done.stdout + done.stderr)}"}


def _profiled_call(workdir: Path, device: str) -> None:
    """The target ncu starts: the candidate on the reference's inputs, the second call
    between cudaProfilerStart and cudaProfilerStop."""
    import torch

    from gpurunner import inputs as inp
    from gpurunner.candidate import patch_cpp_extension
    from gpurunner.load import import_source

    patch_cpp_extension()
    reference = import_source(workdir / "reference.py", "reference")
    candidate = import_source(workdir / "candidate.py", "candidate")
    model = inp.make_model(candidate.ModelNew, reference, device)
    args = inp.make_inputs(reference, seed=0, device=device)
    with torch.no_grad():
        model(*args)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStart()
        model(*args)
        torch.cuda.synchronize()
        torch.cuda.cudart().cudaProfilerStop()


if __name__ == "__main__":
    _profiled_call(Path(sys.argv[1]), sys.argv[2])
