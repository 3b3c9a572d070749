"""The built-in proposer reads a reference's pattern from its captured graph, not from the
source's spelling: a forward that computes more than a softmax is not read as one."""

from __future__ import annotations

import pytest

from search.engine.types import Node, ProposalContext
from search.proposers.builtin import BuiltinProposer
from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.recipe import Recipe
from tests.fixtures.graphs import report
from tests.fixtures.runner import reference_source

SOFTMAX_CORES = {"cuda_softmax_rows", "cuda_softmax_online", "cpu_softmax", "library_softmax", "inplace_softmax"}


def info_with_operators(source: str) -> dict:
    """The reference report as the runner writes it: the graph and the aten operators it ran."""
    info = report(source)
    targets = [n["target"].split(".") for n in info["graph"]["nodes"] if n["target"].startswith("aten.")]
    info["operators"] = list(dict.fromkeys(f"aten::{t[1]}" for t in targets))
    return info


def candidates(source: str, device: str, info: dict) -> list[str]:
    root = Node(kind="reference", round=0, id=1, key="root", source=source)
    ctx = ProposalContext(reference=source, reference_info=info, seeds=[root], history=[], round=1,
                          device=device, tolerance=1e-2, policy="any", unexplored_categories=[])
    proposer = BuiltinProposer(device)
    ideas, _ = proposer.propose_ideas(ctx, 20)
    return [impl.source for idea in ideas for impl in proposer.implement(ctx, root, idea, 4) if impl.source]


def test_the_matmul_sum_max_logsumexp_problem_is_never_read_as_a_softmax():
    source = reference_source("graph_matmul_sum_max_lse")
    info = info_with_operators(source)
    # Its spelling (exp in logsumexp, max, sum) is what the syntax reader took for a softmax.
    assert analyze(source, {"operators": info["operators"]}).pattern == "softmax_manual"
    shape = analyze(source, info)
    assert shape.pattern == "generic"
    for device in ("cpu", "cuda"):
        sources = candidates(source, device, info)
        assert sources
        assert not {Recipe.from_source(s).core for s in sources} & SOFTMAX_CORES
    # What it computes instead: one value per row, the shape the reference returns.
    assert shape.program is not None and shape.program.out_shape == [16, 1]


@pytest.mark.parametrize(("name", "pattern", "dim"), [
    ("softmax_rows", "softmax", 1),
    ("max_rows", "reduction", 1),
    ("sum_middle_dim", "reduction", 1),
    ("graph_rmsnorm", "rmsnorm_manual", 2),
])
def test_a_hand_written_pattern_is_confirmed_by_the_graph(name, pattern, dim):
    shape = analyze(reference_source(name), report(reference_source(name)))
    assert shape.from_graph and (shape.pattern, shape.dim) == (pattern, dim)


def test_an_epilogue_after_a_linear_layer_is_no_hand_written_pattern_but_a_fusable_tail():
    source = reference_source("graph_linear_gelu_layernorm")
    shape = analyze(source, report(source))
    assert shape.pattern == "generic"
    assert shape.program is not None and shape.program.producer == "matrix product"
    assert shape.program.fused == ["gelu", "mul", "add", "layer_norm"]
