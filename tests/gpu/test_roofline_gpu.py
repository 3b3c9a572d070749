"""The roofline percent of a TF32 convolution and of an fp16 matrix product, measured on a
GPU against the ceiling of the precision each runs at (needs CUDA; skipped elsewhere).
Run with `python3 -m pytest --noconftest -q tests/gpu/test_roofline_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


@pytest.mark.parametrize(("name", "bound"), [("conv2d_fp32", "tf32"), ("matmul_fp16", "fp16")])
def test_the_reference_itself_stays_within_its_own_ceiling(name, bound, tmp_path):
    reference = (ROOT / "tests/references" / f"{name}.py").read_text()
    identity = reference + "\n\nModelNew = Model\n"
    options = EvalOptions(device="cuda", cache_dir=str(tmp_path), compile_baseline=False)
    v = evaluate(reference, identity, options)
    print(f"{name}: {v.verdict} {v.cand_ms} ms, {v.roofline_pct}% of {v.roofline_bound} "
          f"({v.roofline_peak}), {v.achieved_tflops} TFLOP/s")
    assert v.verdict == "correct", (v.reason, v.error)
    assert v.roofline_bound == bound
    assert v.roofline_pct is not None and 1 < v.roofline_pct <= 100
