"""Each GPU kernel's registers and local memory, and Nsight Compute's counters for one call,
reach the verdict for every backend (needs CUDA; skipped elsewhere). Run on a GPU host with
`python3 -m pytest --noconftest -q tests/gpu/test_kernel_figures_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate_batch  # noqa: E402
from gpurunner.kernel_resources import cuda_tool  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

REFERENCE = (ROOT / "tests/references/add_large.py").read_text()
BATCH = ["gpu_add_nvrtc", "gpu_add_load_inline", "gpu_add_triton", "gpu_add_spilling_load_inline"]
HAS_NCU = cuda_tool("ncu") is not None


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    options = EvalOptions(device="cuda", cache_dir=str(tmp_path_factory.mktemp("cache")),
                          compile_baseline=False, timeout_s=120.0, counters=True)
    sources = [(ROOT / "tests/candidates" / f"{n}.py").read_text() for n in BATCH]
    got = dict(zip(BATCH, evaluate_batch(REFERENCE, sources, options), strict=True))
    for name, v in got.items():
        print(name, v.verdict, v.reason, v.kernels, v.kernels_note, v.stages_s)
    return got


def own_kernel(v, fragment: str) -> dict:
    rows = [r for r in v.kernels or [] if fragment in r["name"]]
    assert rows, f"no kernel named like {fragment!r} in {v.kernels} ({v.kernels_note})"
    return rows[0]


@pytest.mark.parametrize("name, fragment, origin", [
    ("gpu_add_nvrtc", "add", "driver"),
    ("gpu_add_load_inline", "elementwise_add_kernel", "cuobjdump"),
    ("gpu_add_triton", "add", "cuobjdump"),
])
def test_each_backend_reports_its_kernels_registers(verdicts, name, fragment, origin):
    v = verdicts[name]
    assert v.verdict == "correct", (v.reason, v.error)
    row = own_kernel(v, fragment)
    assert 0 < row["registers"] <= 255
    assert row["local_bytes"] == 0  # a plain add keeps everything in registers
    assert row["from"] == origin


def test_a_kernel_held_to_few_registers_shows_its_spills(verdicts):
    v = verdicts["gpu_add_spilling_load_inline"]
    assert v.verdict == "correct", (v.reason, v.error)
    row = own_kernel(v, "add_with_spills")
    assert row["registers"] <= 24
    assert row["local_bytes"] > 0


@pytest.mark.skipif(not HAS_NCU, reason="Nsight Compute is not installed")
def test_nsight_compute_counters_come_with_each_correct_kernel(verdicts):
    for name, v in verdicts.items():
        counted = [r for r in v.kernels or [] if "duration_us" in r]
        assert counted, (name, v.kernels_note)
        top = counted[0]
        assert top["duration_us"] > 0 and top["launches"] >= 1
        assert 0 < top["dram_pct"] <= 100  # an add of 192 MB is bound by DRAM
        assert 0 < top["occupancy_pct"] <= top["theoretical_occupancy_pct"] + 1
