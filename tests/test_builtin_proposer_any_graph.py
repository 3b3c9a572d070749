"""The built-in proposer has ideas for any program: on the CPU it writes at least four distinct
candidates for each kind of reference KernelBench holds, and the framework-level ones run and
match the reference; a forward without a graph still gets the ideas that need none."""

from __future__ import annotations

import pytest
import torch

from gpurunner.graph import capture_module, missing
from search.engine.types import Node, ProposalContext
from search.proposers.builtin import BuiltinProposer
from search.proposers.builtin.recipe import Recipe
from tests.fixtures.problems import TRACEABLE, load_problem, problem_source


def _context(name: str, graph: dict, device: str = "cpu", tolerance: float = 1e-2) -> ProposalContext:
    return ProposalContext(reference=problem_source(name), reference_info={"graph": graph}, seeds=[],
                           history=[], round=1, device=device, tolerance=tolerance, policy="any",
                           unexplored_categories=[])


def _candidates(ctx: ProposalContext, device: str = "cpu") -> list[str]:
    proposer = BuiltinProposer(device=device)
    ideas, _ = proposer.propose_ideas(ctx, 50)
    root = Node(kind="reference", round=0, source=ctx.reference)
    return list(dict.fromkeys(i.source for idea in ideas for i in proposer.implement(ctx, root, idea, 8)
                              if i.source))


@pytest.mark.parametrize("name", TRACEABLE)
def test_it_writes_at_least_four_distinct_candidates_for_every_kind_of_problem(name):
    sources = _candidates(_context(name, capture_module(load_problem(name))))
    assert len(sources) >= 4
    for source in sources:
        compile(source, "candidate.py", "exec")


@pytest.mark.parametrize("name", ["gemm_scale_sum", "resnet_block", "transformer_block"])
def test_its_framework_candidates_without_a_compile_step_match_the_reference(name):
    module = load_problem(name)
    checked = 0
    for source in _candidates(_context(name, capture_module(module))):
        recipe = Recipe.from_source(source)
        if recipe.core not in ("reference", "simplified") or "compile" in recipe.options:
            continue  # C++ builds and torch.compile run through the runner's slower tests
        namespace: dict = {}
        exec(compile(source, "candidate.py", "exec"), namespace)  # code this project generated
        torch.manual_seed(1)
        reference = module.Model(*module.get_init_inputs())
        torch.manual_seed(1)
        candidate = namespace["ModelNew"](*module.get_init_inputs())
        inputs = module.get_inputs()
        with torch.no_grad():
            expected, got = reference(*inputs), candidate(*inputs)
        tolerance = 1e-4 if recipe.precision() == "fp32" else 5e-2
        torch.testing.assert_close(got, expected, atol=tolerance, rtol=tolerance)
        checked += 1
    assert checked >= 1


def test_a_forward_without_a_graph_still_gets_the_ideas_that_need_none():
    graph = missing("the forward's control flow depends on tensor values")
    sources = _candidates(_context("data_dependent", graph))
    modes = {Recipe.from_source(s).options.get("compile") for s in sources}
    assert len(sources) >= 4 and {"default", "max-autotune-no-cudagraphs", "max-autotune"} <= modes


def test_precision_ideas_are_labelled_and_need_a_tolerance_that_allows_them():
    graph = capture_module(load_problem("matmul"))
    loose = _candidates(_context("matmul", graph, "cuda", 1e-2), "cuda")
    precisions = {Recipe.from_source(s).precision() for s in loose}
    assert {"tf32", "bf16"} <= precisions
    for source in loose:
        assert f"# precision: {Recipe.from_source(source).precision()}" in source
    tight = _candidates(_context("matmul", graph, "cuda", 1e-4), "cuda")
    assert {Recipe.from_source(s).precision() for s in tight} == {"fp32"}


def test_conv_nets_get_channels_last_and_launch_bound_graphs_a_cuda_graph():
    conv = _candidates(_context("resnet_block", capture_module(load_problem("resnet_block")), "cuda"), "cuda")
    options = [Recipe.from_source(s).options for s in conv]
    assert any(o.get("channels_last") for o in options) and any(o.get("cudnn_benchmark") for o in options)
    lstm = _candidates(_context("lstm_loop", capture_module(load_problem("lstm_loop")), "cuda"), "cuda")
    assert any(Recipe.from_source(s).options.get("cuda_graph") for s in lstm)
    big = load_problem("matmul")
    big.get_inputs = lambda: [torch.randn(4096, 4096), torch.randn(4096, 4096)]
    single = _candidates(_context("matmul", capture_module(big), "cuda"), "cuda")
    assert not any(Recipe.from_source(s).options.get("cuda_graph") for s in single)
