"""Built-in candidates on the CPU pass the trusted runner's checks (the newcomer's demo path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurunner import EvalOptions, evaluate
from search.engine.types import Node, ProposalContext
from search.proposers.builtin import BuiltinProposer

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def candidate_for(reference: str, idea_prefix: str, variant: int = 0) -> str:
    root = Node(kind="reference", round=0, id=1, key="root", source=reference)
    ctx = ProposalContext(reference=reference, reference_info={}, seeds=[root], history=[], round=1,
                          device="cpu", tolerance=1e-2, policy="any", unexplored_categories=[])
    proposer = BuiltinProposer("cpu")
    idea = next(i for i in proposer.propose_ideas(ctx, 20)[0] if i.text.startswith(idea_prefix))
    return proposer.implement(ctx, root, idea, variant + 1)[variant].source


def test_the_library_softmax_rewrite_is_correct_on_cpu(runner_cache):
    reference = (EXAMPLES / "softmax_manual.py").read_text()
    source = candidate_for(reference, "Replace the hand-written max")
    verdict = evaluate(reference, source, EvalOptions(device="cpu", trials=2, compile_baseline=False,
                                                      cache_dir=str(runner_cache)))
    assert verdict.verdict == "correct", (verdict.reason, verdict.error[-2000:])


@pytest.mark.slow
def test_the_fused_cpp_rmsnorm_is_correct_on_cpu(runner_cache):
    reference = (EXAMPLES / "rmsnorm.py").read_text()
    source = candidate_for(reference, "Normalize each row")
    verdict = evaluate(reference, source, EvalOptions(device="cpu", trials=2, compile_baseline=False,
                                                      cache_dir=str(runner_cache)))
    assert verdict.verdict == "correct", (verdict.reason, verdict.error[-2000:])
    assert verdict.backend == "cpu_cpp"


@pytest.mark.slow
def test_the_one_pass_cpp_softmax_is_correct_on_cpu(runner_cache):
    reference = (EXAMPLES / "softmax_manual.py").read_text()
    source = candidate_for(reference, "Give the fused C++ softmax an online schedule", variant=1)
    assert '"online": true' in source
    verdict = evaluate(reference, source, EvalOptions(device="cpu", trials=2, compile_baseline=False,
                                                      cache_dir=str(runner_cache)))
    assert verdict.verdict == "correct", (verdict.reason, verdict.error[-2000:])
    assert verdict.backend == "cpu_cpp"
