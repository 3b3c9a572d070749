"""A problem whose shared device buffers do not fit says so with the device's numbers (needs
CUDA; skipped elsewhere). Run on a GPU host with
`python3 -m pytest --noconftest -q tests/gpu/test_gpu_memory_failures.py`."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")


def doubling_reference(rows: int) -> str:
    """x * 2 over `rows` x 1024 fp32 inputs: outputs as large as the inputs."""
    return f'''import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.rand({rows}, 1024)]


def get_init_inputs():
    return []
'''


def test_buffers_that_do_not_fit_are_named_with_needed_and_free_memory():
    # Validation takes inputs up to a quarter of the free memory. The reference worker keeps
    # the inputs and expected outputs plus inputs and outputs per timed slot (eager's and the
    # candidate's): at 18% of the device per tensor the second slot cannot fit.
    _free, total = torch.cuda.mem_get_info(0)
    rows = int(total * 0.18) // (1024 * 4)
    reference = doubling_reference(rows)
    candidate = reference + "\n\nclass ModelNew(Model):\n    pass\n"
    with tempfile.TemporaryDirectory() as cache:
        verdict = evaluate(reference, candidate, EvalOptions(device="cuda", cache_dir=cache,
                                                             compile_baseline=False))
    assert verdict.verdict == "runtime_error", verdict.reason
    assert "out of GPU memory" in verdict.reason, verdict.reason
    assert "GiB" in verdict.reason and "free" in verdict.reason, verdict.reason
