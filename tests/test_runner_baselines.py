"""Eager PyTorch is timed again for each evaluation (unless this runner timed it moments ago),
so a speedup compares times taken under the same conditions; the cached report keeps the
first time."""

from __future__ import annotations

from gpurunner import evaluate
from gpurunner.api import prepare_problem
from tests.fixtures.runner import candidate_source, reference_source


def test_it_times_eager_again_for_each_evaluation(runner_options):
    options = runner_options(eager_fresh_s=0.0)
    reference = reference_source("softmax_rows")
    first, _ = prepare_problem(reference, options)
    again, _ = prepare_problem(reference, options)
    assert first is not None and again is not None
    assert again.report.get("eager_retimed") is True
    assert again.report["eager"]["median_ms"] > 0
    assert again.report["eager"] is not first.report["eager"]
    v = evaluate(reference, candidate_source("softmax_torch_rewrite"), options)
    baselines = next(c for c in v.checks if c.name == "baselines")
    assert "eager timed for this evaluation" in baselines.detail


def test_it_reuses_an_eager_time_taken_moments_ago(runner_options):
    options = runner_options(eager_fresh_s=600.0)
    reference = reference_source("softmax_rows")
    timed, _ = prepare_problem(reference, runner_options(eager_fresh_s=0.0))
    again, _ = prepare_problem(reference, options)
    assert timed is not None and again is not None
    assert again.report["eager"] == timed.report["eager"]
    assert 0 < again.report["eager_age_s"] < 600
    v = evaluate(reference, candidate_source("softmax_torch_rewrite"), options)
    baselines = next(c for c in v.checks if c.name == "baselines")
    assert "s ago in a trusted process" in baselines.detail


def test_it_can_reuse_the_cached_eager_time(runner_options):
    options = runner_options(retime_eager=False)
    reference = reference_source("softmax_rows")
    first, _ = prepare_problem(reference, options)
    again, _ = prepare_problem(reference, options)
    assert first is not None and again is not None
    assert "eager_retimed" not in again.report
    assert again.report["eager"] == first.report["eager"]
