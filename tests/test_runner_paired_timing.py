"""A speedup is the ratio of the reference's and the candidate's calls timed back to back by
the runner, with a confidence interval; pairing takes the machine's load out of the ratio."""

from __future__ import annotations

import pytest

from gpurunner import evaluate
from gpurunner.timing import paired_ratio
from tests.fixtures.runner import candidate_source, reference_source


def test_the_speedup_comes_with_its_interval_from_paired_calls(runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("softmax_torch_rewrite"),
                 runner_options())
    assert v.verdict == "correct", v.reason
    assert v.speedup == pytest.approx(v.ref_ms / v.cand_ms)
    low, high = v.speedup_ci
    assert low <= v.speedup <= high
    assert isinstance(v.noisy, bool)
    timing = next(c for c in v.checks if c.name == "timing")
    assert "paired calls" in timing.detail and "runner's clock" in timing.detail
    baselines = next(c for c in v.checks if c.name == "baselines")
    assert "interleaved with the candidate's calls" in baselines.detail


def test_load_shared_by_both_calls_of_a_pair_stays_out_of_the_interval():
    load = [1.0, 3.0, 1.5, 8.0, 1.1, 5.0, 2.0, 1.0, 6.0, 1.2, 4.0, 1.0]  # a busy machine
    reference = [2.0 * f for f in load]
    candidate = [1.0 * f * (1.01 if i % 2 else 0.99) for i, f in enumerate(load)]
    ratio, low, high = paired_ratio(reference, candidate)
    assert ratio == pytest.approx(2.0, rel=0.05)
    assert high / low < 1.1


def test_unrelated_noise_gives_a_wide_interval():
    reference = [1.0, 5.0, 1.2, 0.9, 4.0, 1.1, 6.0, 1.0, 0.8, 3.0, 1.0, 7.0]
    candidate = [1.0, 1.1, 6.0, 1.0, 0.9, 5.0, 1.0, 4.0, 1.2, 1.0, 8.0, 1.0]
    _, low, high = paired_ratio(reference, candidate)
    assert high / low > 1.5


def test_too_few_pairs_have_no_interval():
    _, low, high = paired_ratio([1.0, 1.0], [1.0, 1.0])
    assert low == 0.0 and high == float("inf")


def test_a_call_near_the_channels_round_trip_is_never_a_plain_speedup(runner_options):
    v = evaluate(reference_source("add_one_tiny"), candidate_source("add_one_tiny_same"),
                 runner_options(compile_baseline=False))
    assert v.verdict == "correct", v.reason
    assert v.noisy is True  # identical code read 0.47x to 1.08x before this rule
    timing = next(c for c in v.checks if c.name == "timing")
    assert "within 10x the harness's own empty call" in timing.detail, timing.detail
