"""Device ceilings, the roofline percent, and the floor no honest time can go below.

A kernel's roofline percent is taken against the ceiling of the precision its arithmetic runs
at (fp32 CUDA cores, TF32, fp16/bf16/fp8 tensor cores) or against memory bandwidth, whichever
bounds it; the impossible-time floor uses the fastest rate the tolerance permits.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpurunner.report import Check

# Slowest to fastest on tensor-core GPUs; fp64 sits apart (its own units).
PRECISIONS = ("fp64", "fp32", "tf32", "fp16", "bf16", "fp8")
# Unit roundoff of each format: a result computed in it is off by about this much, relatively.
UNIT_ROUNDOFF = {"fp64": 2.0**-53, "fp32": 2.0**-24, "tf32": 2.0**-11, "fp16": 2.0**-11,
                 "bf16": 2.0**-8, "fp8": 2.0**-4}
# A format is within a tolerance when its roundoff is at most this many times the tolerance
# (errors average out over a reduction; the floor must never reject an honest kernel).
ROUNDOFF_MARGIN = 4.0
MATMUL_OPS = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul",
              "aten::linear", "aten::_scaled_dot_product_efficient_attention",
              "aten::_scaled_dot_product_flash_attention", "aten::addbmm"}


@dataclass(frozen=True)
class Ceilings:
    """Per device: measured ceilings (for the roofline percent) and datasheet dense peaks (for
    the impossible-time floor). Bytes/s (read + written) and FLOP/s per precision."""

    bw: float
    flops: dict[str, float]
    peak_bw: float
    peak_flops: dict[str, float]


def _rates(fp64: float, fp32: float, tf32: float, half: float, fp8: float) -> dict[str, float]:
    return {"fp64": fp64, "fp32": fp32, "tf32": tf32, "fp16": half, "bf16": half, "fp8": fp8}


# Measured ceilings on this project's machines (docs/benchmarks.md) and datasheet dense peaks
# (SXM parts). fp64 and fp8 were not measured: their ceilings keep the datasheet's ratio to
# fp32 and bf16. The A100 has no fp8 tensor cores: its fp8 rate is its bf16 rate.
DEVICES: dict[str, Ceilings] = {
    "H200": Ceilings(bw=4.3e12, flops=_rates(60e12, 60e12, 400e12, 790e12, 1580e12),
                     peak_bw=4.8e12, peak_flops=_rates(67e12, 67e12, 495e12, 990e12, 1979e12)),
    "H100": Ceilings(bw=3.0e12, flops=_rates(55e12, 55e12, 400e12, 798e12, 1596e12),
                     peak_bw=3.35e12, peak_flops=_rates(67e12, 67e12, 495e12, 990e12, 1979e12)),
    "A100": Ceilings(bw=1.7e12, flops=_rates(19e12, 19e12, 150e12, 290e12, 290e12),
                     peak_bw=2.04e12, peak_flops=_rates(19.5e12, 19.5e12, 156e12, 312e12, 312e12)),
}


def ceilings_for(device_name: str) -> Ceilings | None:
    """Ceilings for a CUDA device name such as 'NVIDIA H100 80GB HBM3'; None when unknown."""
    for key, c in DEVICES.items():
        if key in device_name.upper():
            return c
    return None


def dtype_precision(dtype: str) -> str:
    """The precision name of a torch dtype name ('float16' -> 'fp16'); fp32 for the rest."""
    if "float8" in dtype:
        return "fp8"
    return {"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float64": "fp64",
            "double": "fp64"}.get(dtype, "fp32")


def tf32_allowed(flags: dict[str, object], operators: list[str], backend: str | None) -> str | None:
    """The reduced precision fp32 work may run at under torch's switches, for the kinds of
    work the reference does: cuDNN convolutions follow `cudnn_tf32` (on by default), matrix
    products `matmul_tf32` and `float32_matmul_precision` ('medium' allows bf16), and a Triton
    `tl.dot` on fp32 uses TF32 unless told otherwise. None: plain fp32."""
    conv = any("conv" in op for op in operators)
    mm = any(op in MATMUL_OPS for op in operators)
    if mm and flags.get("float32_matmul_precision") == "medium":
        return "bf16"
    if (conv and flags.get("cudnn_tf32")) or (mm and (
            flags.get("matmul_tf32") or flags.get("float32_matmul_precision") == "high")):
        return "tf32"
    if (conv or mm) and backend == "triton":
        return "tf32"
    return None


def compute_precision(dtype: str, label: str | None, reduced: str | None = None) -> str:
    """The precision a kernel's arithmetic runs at: its data's own type, or a faster one it
    was labelled with (`label`, e.g. 'tf32+bf16') or that torch's switches allow (`reduced`)."""
    own = dtype_precision(dtype)
    found = [own] + [p for p in (label or "").split("+") if p in PRECISIONS]
    if reduced and own == "fp32":
        found.append(reduced)
    return max(found, key=PRECISIONS.index)


def roofline(c: Ceilings, flops: float, nbytes: float, ms: float, precision: str,
             ) -> tuple[float, str, float]:
    """(percent of the roofline bound, the bound: 'memory' or the precision, its ceiling).

    The bound is the larger of moving the bytes at the measured bandwidth and doing the FLOPs
    at the measured rate of `precision`; the percent is that time over the kernel's."""
    rate = c.flops[precision]
    memory_s, compute_s = nbytes / c.bw, flops / rate
    bound, ceiling = ("memory", c.bw) if memory_s >= compute_s else (precision, rate)
    return 100.0 * max(memory_s, compute_s) / (ms / 1e3), bound, ceiling


def fastest_permitted(dtype: str, tolerance: float) -> str:
    """The fastest precision a kernel may compute in and still pass `tolerance`: the data's
    own, or any format whose roundoff is within ROUNDOFF_MARGIN times the tolerance."""
    allowed = [dtype_precision(dtype)] + [p for p in PRECISIONS
                                          if UNIT_ROUNDOFF[p] <= ROUNDOFF_MARGIN * tolerance]
    return max(allowed, key=PRECISIONS.index)


def floor_check(c: Ceilings | None, flops: float, nbytes: float, ms: float, dtype: str = "float32",
                tolerance: float = 1e-2) -> Check:
    """Fail when `ms` is below what the datasheet allows: moving the inputs and outputs once
    at peak bandwidth, or doing the FLOPs at the fastest rate the tolerance permits."""
    if c is None:
        return Check("roofline_floor", True, "no ceilings known for this device; not checked")
    precision = fastest_permitted(dtype, tolerance)
    floor_ms = 1e3 * max(nbytes / c.peak_bw, flops / c.peak_flops[precision])
    ok = ms >= floor_ms
    detail = (f"{ms:.4f} ms vs floor {floor_ms:.4f} ms ({nbytes / 1e6:.1f} MB, "
              f"{flops / 1e9:.2f} GFLOP at most at {precision} peak, tolerance {tolerance:g})")
    if not ok:
        detail += ": faster than the hardware can move or compute the data"
    return Check("roofline_floor", ok, detail)
