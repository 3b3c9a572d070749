"""The generic ideas on a CUDA device, through the runner: precision (labelled), torch.compile
modes, channels-last with cuDNN autotuning, CUDA graphs and exact simplifications are judged
correct on the kinds of problem they apply to (need CUDA; skipped elsewhere). Run on the H100
with `python3 -m pytest --noconftest -q tests/gpu/test_generic_ideas_gpu.py`."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, check_reference, evaluate_batch  # noqa: E402
from search.engine.types import Node, ProposalContext  # noqa: E402
from search.proposers.builtin import BuiltinProposer  # noqa: E402
from search.proposers.builtin.recipe import Recipe  # noqa: E402
from tests.fixtures.problems import problem_source  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

# Framework-level and rewritten candidates only: the kernel families have their own GPU tests.
_GENERIC = ("reference", "simplified")


def generic_candidates(name: str) -> tuple[str, list[str]]:
    source = problem_source(name)
    report = check_reference(source, device="cuda")
    assert report.ok, report.error
    ctx = ProposalContext(reference=source, reference_info=report.to_dict(), seeds=[], history=[], round=1,
                          device="cuda", tolerance=1e-2, policy="any", unexplored_categories=[])
    proposer = BuiltinProposer("cuda")
    ideas, _ = proposer.propose_ideas(ctx, 50)
    root = Node(kind="reference", round=0, source=source)
    sources = [i.source for idea in ideas for i in proposer.implement(ctx, root, idea, 8) if i.source]
    return source, [s for s in dict.fromkeys(sources) if Recipe.from_source(s).core in _GENERIC]


@pytest.mark.parametrize("name", ["matmul", "resnet_block", "transformer_block", "lstm_loop",
                                  "matmul_sum_max_lse"])
def test_generic_candidates_are_correct_and_labelled_on_cuda(name):
    reference, sources = generic_candidates(name)
    assert len(sources) >= 4
    verdicts = evaluate_batch(reference, sources, EvalOptions(device="cuda", timeout_s=300))
    for source, verdict in zip(sources, verdicts, strict=True):
        recipe = Recipe.from_source(source)
        assert verdict.verdict == "correct", (recipe.to_json(), verdict.reason, verdict.error[-500:])
        if recipe.options.get("dtype"):  # a half-precision computation is seen and labelled
            assert verdict.precision and recipe.precision() in verdict.precision, recipe.to_json()
