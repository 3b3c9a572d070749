"""What the runner measured reaches the proposer's prompts: the reference's eager time
estimated at validation in round 1, and each seed kernel's time per operator (profiled by
the runner) from round 2 on."""

from __future__ import annotations

import re

from gpurunner import evaluate
from search.engine.feedback import render_reference_info, render_seeds
from search.engine.runner_evaluator import eval_options
from search.engine.types import Node, SearchConfig
from search.engine.verdicts import apply_verdict
from tests.fixtures.runner import candidate_source, reference_source


def test_round_one_shows_the_eager_time_estimated_when_the_reference_was_checked():
    text = render_reference_info({"eager_ms_estimate": 1.234})
    assert "time per call: eager PyTorch about 1.234 ms" in text
    assert "not measured yet" not in text


def test_the_paired_time_replaces_the_estimate_once_measured():
    text = render_reference_info({"eager_ms_estimate": 1.234, "eager_ms": 0.9, "compile_ms": 0.5})
    assert "eager PyTorch 0.9 ms; torch.compile 0.5 ms" in text and "about" not in text


def test_a_search_asks_the_runner_for_profiles():
    assert eval_options(SearchConfig(device="cpu")).profile is True


def test_a_seeds_time_per_operator_comes_from_the_runners_profile(runner_options):
    verdict = evaluate(reference_source("softmax_rows"), candidate_source("softmax_torch_rewrite"),
                       runner_options(profile=True))
    assert verdict.verdict == "correct", verdict.reason
    assert verdict.profile and verdict.profile["total_us"] > 0
    assert any(name.startswith("aten::") for name in verdict.profile["ops"])
    seed = apply_verdict(Node(kind="kernel", round=1, key="r1/ref/i0/k0",
                              source=candidate_source("softmax_torch_rewrite")), verdict.to_dict())
    line = next(ln for ln in render_seeds([seed]).splitlines() if ln.startswith("Time per operator"))
    assert re.search(r"aten::\w+ [\d.]+ us \(\d+%\)", line), line
