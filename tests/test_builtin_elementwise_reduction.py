"""The built-in proposer reads elementwise chains and single-dimension reductions from the
reference's syntax and writes fused C++ (CPU) and NVRTC (CUDA) kernels that pass the runner."""

from __future__ import annotations

import ast

import pytest

from gpurunner import EvalOptions, evaluate_batch
from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.expression import read_chain
from tests.fixtures.runner import reference_source
from tests.test_builtin_proposer_cpu import candidate_for


def forward_of(source: str) -> ast.FunctionDef:
    model = next(n for n in ast.parse(source).body if isinstance(n, ast.ClassDef))
    return next(f for f in model.body if isinstance(f, ast.FunctionDef) and f.name == "forward")


def test_an_elementwise_chain_becomes_one_c_expression_per_local():
    shape = analyze(reference_source("swish_residual"))
    assert shape.pattern == "elementwise" and shape.chain is not None
    assert shape.chain.inputs == ["x", "residual"]
    assert shape.chain.ops == ["mul", "sigmoid", "mul", "add", "clamp"]
    assert shape.chain.statements == ["const float t0 = (1.0f / (1.0f + expf(-((1.702f * v0)))));"]
    assert shape.chain.result == "fminf(fmaxf(((v0 * t0) + v1), (-(6.0f))), 6.0f)"


@pytest.mark.parametrize("body", [
    "return torch.cumsum(x, dim=0)",          # not elementwise
    "y = x.sum()\n        return y * 2",        # a reduction inside
    "return x @ x",                             # a matrix product
    "return torch.relu(self.unknown * x)",      # an attribute that is not a number
    "if x.sum() > 0:\n            return x\n        return -x",  # control flow
])
def test_anything_else_is_not_an_elementwise_chain(body):
    source = f"import torch\nclass Model:\n    def forward(self, x):\n        {body}\n"
    assert read_chain(forward_of(source), {}) is None


@pytest.mark.parametrize(("name", "op", "dim", "keepdim"), [
    ("sum_middle_dim", "sum", 1, "True"),   # dim given to the constructor, read from get_init_inputs
    ("max_rows", "max", 1, "False"),        # torch.max(x, dim=-1).values, normalized
])
def test_a_single_reduction_is_recognised_with_its_dimension(name, op, dim, keepdim):
    shape = analyze(reference_source(name))
    assert shape.pattern == "reduction"
    assert (shape.attrs["reduce_op"], shape.dim, shape.attrs["keepdim"]) == (op, dim, keepdim)


def test_the_fused_idea_comes_first_and_says_what_it_fuses():
    source = candidate_for(reference_source("swish_residual"), "Fuse the forward's 5 elementwise ops")
    assert '"core": "cpu_elementwise"' in source and "fused_op" in source


@pytest.mark.slow
def test_fused_cpp_kernels_pass_the_runner_on_cpu(runner_cache):
    options = EvalOptions(device="cpu", trials=2, compile_baseline=False, cache_dir=str(runner_cache))
    # The reduction over a middle dimension (the other path of the C++ reduction) is checked
    # by benchmarks/builtin_candidates.py; each build here costs ~45 s of the suite on 2 cores.
    for name, prefix in (("swish_residual", "Fuse the forward's"), ("max_rows", "Compute the max")):
        reference = reference_source(name)
        verdict = evaluate_batch(reference, [candidate_for(reference, prefix)], options)[0]
        assert verdict.verdict == "correct", (name, verdict.reason, verdict.error[-2000:])
        assert verdict.backend == "cpu_cpp"
