"""Exact simplifications read from the graph (search/proposers/builtin/simplify.py): a reduction
over a size-1 dimension is dropped, constant scalings become one multiplication, a sum after a
linear layer is folded into its weights; the rewritten ModelNew computes the same values."""

from __future__ import annotations

import pytest
import torch

from gpurunner import evaluate
from gpurunner.graph import capture_module
from gpurunner.report import EvalOptions
from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.render import render
from tests.fixtures.problems import load_problem, problem_source


def _candidate(name: str) -> tuple[str, list[str]]:
    shape = analyze(problem_source(name), {"graph": capture_module(load_problem(name))})
    assert shape.simplified is not None
    return render(Recipe("simplified"), shape, problem_source(name)), shape.simplified.notes


def _run_core(source: str) -> str:
    """The code of the candidate's _run_core, without its comments."""
    body = source.split("def _run_core", 1)[1].split("class ModelNew", 1)[0]
    return "\n".join(line for line in body.splitlines() if not line.strip().startswith("#"))


def _same_values(name: str, source: str) -> None:
    module, namespace = load_problem(name), {}
    exec(compile(source, "candidate.py", "exec"), namespace)  # code this project generated
    torch.manual_seed(1)
    reference = module.Model(*module.get_init_inputs())
    torch.manual_seed(1)
    candidate = namespace["ModelNew"](*module.get_init_inputs())
    inputs = module.get_inputs()
    with torch.no_grad():
        expected, got = reference(*inputs), candidate(*inputs)
    assert got.shape == expected.shape
    torch.testing.assert_close(got, expected, atol=1e-4, rtol=1e-4)


def test_a_chain_of_size_one_reductions_after_a_linear_becomes_one_matrix_vector_product():
    source, notes = _candidate("matmul_sum_max_lse")
    body = _run_core(source)
    assert "logsumexp" not in body and "aten.max" not in body and "aten.mean" not in body
    assert body.count("aten.addmm") == 1 and "sum.dim_IntList(t, [1], True)" in body
    assert any("folded into the weights" in n for n in notes)
    _same_values("matmul_sum_max_lse", source)


def test_constant_scalings_around_a_sum_are_applied_once():
    source, notes = _candidate("gemm_scale_sum")
    body = _run_core(source)
    assert body.count("aten.mul.Tensor") == 1 and "aten.div" not in body and "0.75" in body
    _same_values("gemm_scale_sum", source)


@pytest.mark.parametrize("name", ["mlp_block", "conv_bn_relu", "softmax"])
def test_nothing_is_offered_where_the_graph_shows_no_simplification(name):
    shape = analyze(problem_source(name), {"graph": capture_module(load_problem(name))})
    assert shape.simplified is None


def test_the_runner_accepts_the_simplified_kernel():
    source, _ = _candidate("matmul_sum_max_lse")
    verdict = evaluate(problem_source("matmul_sum_max_lse"), source,
                       EvalOptions(device="cpu", compile_baseline=False))
    assert verdict.verdict == "correct", verdict.reason


def test_a_sum_over_a_plain_matrix_product_is_folded_too():
    source, notes = _candidate("gemm_divide_sum_scaling")
    body = _run_core(source)
    assert "aten.mm.default(x, sum_1_weights)" in body and body.count("aten.mul.Tensor") == 1
    _same_values("gemm_divide_sum_scaling", source)
