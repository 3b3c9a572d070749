"""The hardware facts a CUDA reference report carries (need CUDA; skipped elsewhere). Run on the
H100 with `python3 -m pytest --noconftest -q tests/gpu/test_hardware_facts.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import check_reference, hardware  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def test_the_gpu_is_described_with_what_a_kernel_writer_needs():
    facts = hardware.describe("cuda")
    props = torch.cuda.get_device_properties(0)
    assert facts["kind"] == "cuda" and facts["name"] == props.name
    assert facts["compute_capability"] == f"{props.major}.{props.minor}"
    assert facts["sm_count"] == props.multi_processor_count and facts["cuda"] == torch.version.cuda
    for key in ("registers_per_sm", "shared_memory_per_sm", "shared_memory_per_block_optin", "l2_bytes"):
        assert facts.get(key, 0) > 0, key
    if (props.major, props.minor) == (9, 0):
        assert facts["sm"] == "sm_90a" and "wgmma" in facts["features"] and "TMA" in facts["features"]
        assert facts["measured_bandwidth"] > 1e12  # an H100 or H200 has its measured ceilings


def test_the_reference_report_carries_the_hardware_facts():
    report = check_reference((ROOT / "tests/references/add_large.py").read_text(), device="cuda")
    assert report.ok and report.hardware["kind"] == "cuda" and report.hardware["sm_count"] > 0
    assert report.hardware.get("triton")
