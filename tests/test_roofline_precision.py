"""The roofline percent is taken against the ceiling of the precision a kernel runs at, and
the impossible-time floor against the fastest rate the tolerance permits (H100 numbers)."""

from __future__ import annotations

import pytest

from gpurunner import roofline

H100 = roofline.ceilings_for("NVIDIA H100 80GB HBM3")
# A 3x3 convolution, 64 -> 128 channels, 64 images of 112x112 in fp32: 2 * N*K*H*W * C*R*S.
CONV_FLOPS = 2.0 * 64 * 128 * 112 * 112 * 64 * 3 * 3
CONV_BYTES = 4.0 * (64 * 64 * 112 * 112 + 128 * 64 * 9 + 64 * 128 * 112 * 112)
CONV_MS = 1.8  # ~66 TFLOP/s: above the fp32 CUDA-core ceiling, ordinary for TF32 tensor cores


def test_a_tf32_convolution_is_measured_against_the_tf32_ceiling():
    assert H100 is not None
    # cuDNN convolutions run in TF32 under torch's default switch.
    reduced = roofline.tf32_allowed({"cudnn_tf32": True, "matmul_tf32": False,
                                     "float32_matmul_precision": "highest"},
                                    ["aten::convolution", "aten::relu"], "torch")
    precision = roofline.compute_precision("float32", None, reduced)
    pct, bound, peak = roofline.roofline(H100, CONV_FLOPS, CONV_BYTES, CONV_MS, precision)
    assert (precision, bound, peak) == ("tf32", "tf32", 400e12)
    assert pct == pytest.approx(100 * CONV_FLOPS / 400e12 / (CONV_MS / 1e3))
    assert 15 < pct < 18
    # Against the fp32 ceiling the same honest kernel read as impossible.
    assert roofline.roofline(H100, CONV_FLOPS, CONV_BYTES, CONV_MS, "fp32")[0] > 100


def test_fp32_work_without_tf32_switches_is_measured_against_cuda_cores():
    flags = {"cudnn_tf32": False, "matmul_tf32": False, "float32_matmul_precision": "highest"}
    assert roofline.tf32_allowed(flags, ["aten::convolution"], "torch") is None
    assert roofline.tf32_allowed(flags, ["aten::mm"], "cuda_cpp") is None
    assert roofline.tf32_allowed(flags, ["aten::mm"], "triton") == "tf32"  # tl.dot's default
    assert roofline.tf32_allowed({**flags, "float32_matmul_precision": "high"},
                                 ["aten::addmm"], "torch") == "tf32"
    assert roofline.tf32_allowed({**flags, "float32_matmul_precision": "medium"},
                                 ["aten::addmm"], "torch") == "bf16"
    assert roofline.compute_precision("float32", None, None) == "fp32"


def test_a_half_precision_matmul_is_measured_against_the_tensor_core_ceiling():
    assert H100 is not None
    flops, nbytes, ms = 2.0 * 4096**3, 3 * 4096 * 4096 * 2.0, 0.25  # 550 TFLOP/s in fp16
    precision = roofline.compute_precision("float16", None)
    pct, bound, peak = roofline.roofline(H100, flops, nbytes, ms, precision)
    assert (precision, bound, peak) == ("fp16", "fp16", 798e12)
    assert pct == pytest.approx(100 * flops / 798e12 / (ms / 1e3))
    assert 65 < pct < 72
    # An fp32 reference that a candidate moved to bf16 is labelled, and measured as bf16.
    assert roofline.compute_precision("float32", "tf32+bf16") == "bf16"


def test_a_memory_bound_kernel_names_the_bandwidth_it_was_measured_against():
    assert H100 is not None
    nbytes = 3 * 4096 * 4096 * 4.0
    pct, bound, peak = roofline.roofline(H100, 4096 * 4096, nbytes, 0.072, "fp32")
    assert (bound, peak) == ("memory", 3.0e12)
    assert pct == pytest.approx(100 * nbytes / 3.0e12 / 0.072e-3)


def test_the_floor_uses_the_fastest_rate_the_tolerance_permits():
    assert H100 is not None
    assert roofline.fastest_permitted("float32", 1e-2) == "bf16"
    assert roofline.fastest_permitted("float32", 1e-3) == "bf16"
    assert roofline.fastest_permitted("float32", 2e-4) == "fp16"
    assert roofline.fastest_permitted("float32", 1e-6) == "fp32"
    assert roofline.fastest_permitted("bfloat16", 1e-6) == "bf16"  # the data's own precision
    assert roofline.fastest_permitted("float32", 5e-2) == "fp8"
    flops = 2.0 * 8192**3  # 1.1 PFLOP: 1.11 ms at the bf16 dense peak, 16.4 ms at fp32
    strict = roofline.floor_check(H100, flops, 0.0, 5.0, "float32", 1e-6)
    loose = roofline.floor_check(H100, flops, 0.0, 5.0, "float32", 1e-2)
    assert not strict.passed and "fp32 peak" in strict.detail
    assert loose.passed and "bf16 peak" in loose.detail
    assert not roofline.floor_check(H100, flops, 0.0, 1.0, "float32", 1e-2).passed
