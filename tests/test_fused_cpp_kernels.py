"""Generated C++ kernels from the graph pass the trusted runner on the CPU: a GEMM epilogue with
a row normalization (rows along the innermost dim), a convolution epilogue with a reduction
over the channels (adjacent rows computed together) and a convolution with an elementwise tail
(the per-channel bias read once per run of pixels)."""

from __future__ import annotations

import pytest

from gpurunner import EvalOptions, evaluate_batch
from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.families.fused_cpp import points
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.render import render
from tests.fixtures.graphs import report
from tests.fixtures.runner import reference_source


def candidate(name: str) -> tuple[str, str]:
    source = reference_source(name)
    shape = analyze(source, report(source))
    return source, render(Recipe("fused_cpp", points(shape)[0], {}), shape, source)


def test_every_graph_kind_gets_a_cpp_candidate_with_its_launch_settings():
    for name in ("graph_linear_gelu_layernorm", "graph_conv_bias_relu_mean", "graph_conv_bias_swish",
                 "graph_matmul_softmax_logsumexp", "graph_rmsnorm", "graph_matmul_sum_max_lse"):
        source, code = candidate(name)
        assert "load_inline" in code and "def _run_core" in code, name
        compile(code, name, "exec")


@pytest.mark.slow
def test_generated_cpp_kernels_pass_the_runner_on_cpu(runner_cache):
    options = EvalOptions(device="cpu", trials=2, compile_baseline=False, cache_dir=str(runner_cache))
    for name in ("graph_linear_gelu_layernorm", "graph_conv_bias_relu_mean", "graph_conv_bias_swish"):
        source, code = candidate(name)
        verdict = evaluate_batch(source, [code], options)[0]
        assert verdict.verdict == "correct", (name, verdict.reason, verdict.error[-2000:])
        assert verdict.backend == "cpu_cpp"
