"""Generated Triton kernels from the graph on a CUDA device, through the runner (need CUDA;
skipped elsewhere). Run on the H100 with `python3 -m pytest --noconftest -q
tests/gpu/test_generated_kernels_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate_batch  # noqa: E402
from search.proposers.builtin.analysis import analyze  # noqa: E402
from search.proposers.builtin.families import family  # noqa: E402
from search.proposers.builtin.recipe import Recipe  # noqa: E402
from search.proposers.builtin.render import render  # noqa: E402
from tests.fixtures.graphs import report  # noqa: E402
from tests.fixtures.runner import reference_source  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

KINDS = ["graph_linear_gelu_layernorm", "graph_conv_bias_relu_mean", "graph_conv_bias_swish",
         "graph_matmul_softmax_logsumexp", "graph_rmsnorm", "graph_matmul_sum_max_lse",
         "graph_conv_groupnorm_elu", "graph_conv_scale_tanh_pool", "graph_linear_bias_gelu_clamp"]


def candidates(name: str) -> list[str]:
    """Every Triton family's first two launch settings (and a looped row where rows are long)."""
    source = reference_source(name)
    shape = analyze(source, report(source))
    out = []
    for core in ("fused_triton", "triton_gemm"):
        spec = family(core)
        if not spec.matches(shape):
            continue
        settings = spec.points(shape)[:2]
        if core == "fused_triton" and shape.program.reduce is not None and shape.program.length > 16:
            settings.append({**settings[0], "block_r": 16, "stages": 2})
        out += [render(Recipe(core, s, {}), shape, source) for s in settings]
    return out


@pytest.mark.parametrize("name", KINDS)
def test_generated_triton_kernels_are_correct_on_the_gpu(name, tmp_path):
    options = EvalOptions(device="cuda", cache_dir=str(tmp_path), compile_baseline=False, timeout_s=120.0)
    sources = candidates(name)
    assert sources
    for verdict in evaluate_batch(reference_source(name), sources, options):
        print(f"{name}: {verdict.verdict} {verdict.reason} cand={verdict.cand_ms} ref={verdict.ref_ms}")
        assert verdict.verdict == "correct", (name, verdict.reason, verdict.error[-2000:])
        assert verdict.backend == "triton"
