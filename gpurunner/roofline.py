"""Device ceilings, the roofline percent, and the floor no honest time can go below."""

from __future__ import annotations

from dataclasses import dataclass

from gpurunner.report import Check


@dataclass(frozen=True)
class Ceilings:
    """Per device: datasheet peaks (for the impossible-time floor) and measured ceilings
    (for the roofline percent). Bytes/s and FLOP/s."""

    peak_bw: float
    peak_flops: float  # the fastest any arithmetic runs (dense fp8 tensor cores)
    bw: float  # measured device-to-device copy, bytes read + written
    flops_fp32: float
    flops_tf32: float
    flops_bf16: float


# Measured ceilings on this project's machines (docs/benchmarks.md, KINDS.md); datasheet peaks.
DEVICES: dict[str, Ceilings] = {
    "H200": Ceilings(peak_bw=4.8e12, peak_flops=1979e12, bw=4.3e12, flops_fp32=60e12,
                     flops_tf32=400e12, flops_bf16=790e12),
    "H100": Ceilings(peak_bw=3.35e12, peak_flops=1979e12, bw=3.0e12, flops_fp32=55e12,
                     flops_tf32=400e12, flops_bf16=798e12),
    "A100": Ceilings(peak_bw=2.04e12, peak_flops=624e12, bw=1.7e12, flops_fp32=19e12,
                     flops_tf32=150e12, flops_bf16=290e12),
}


def ceilings_for(device_name: str) -> Ceilings | None:
    """Ceilings for a CUDA device name such as 'NVIDIA H100 80GB HBM3'; None when unknown."""
    for key, c in DEVICES.items():
        if key in device_name.upper():
            return c
    return None


def flop_rate(c: Ceilings, dtype: str, precision: str | None) -> float:
    """The measured arithmetic ceiling for work in `dtype` (a torch dtype name)."""
    if "16" in dtype or "float8" in dtype:
        return c.flops_bf16
    if precision in ("tf32", "bf16", "fp16"):
        return c.flops_tf32 if precision == "tf32" else c.flops_bf16
    return c.flops_fp32


def roofline_pct(c: Ceilings, flops: float, nbytes: float, ms: float, dtype: str,
                 precision: str | None) -> float:
    """Percent of the roofline bound: the larger of bytes/bandwidth and FLOPs/rate, over time."""
    bound_s = max(nbytes / c.bw, flops / flop_rate(c, dtype, precision))
    return 100.0 * bound_s / (ms / 1e3)


def floor_check(c: Ceilings | None, flops: float, nbytes: float, ms: float) -> Check:
    """Fail when `ms` is below what the datasheet allows: moving the inputs and outputs
    once at peak bandwidth, or doing the FLOPs at the fastest tensor-core rate."""
    if c is None:
        return Check("roofline_floor", True, "no ceilings known for this device; not checked")
    floor_ms = 1e3 * max(nbytes / c.peak_bw, flops / c.peak_flops)
    ok = ms >= floor_ms
    detail = f"{ms:.4f} ms vs floor {floor_ms:.4f} ms ({nbytes / 1e6:.1f} MB, {flops / 1e9:.2f} GFLOP)"
    if not ok:
        detail += ": faster than the hardware can move or compute the data"
    return Check("roofline_floor", ok, detail)
