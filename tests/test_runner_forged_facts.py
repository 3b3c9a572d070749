"""Candidates that forge what their own process reports (messages, the result file, clocks,
lazy outputs, foreseen inputs) are judged on what the trusted side measured: not correct, or
correct at their true, slow speed. One batch, so it also shows a broken worker costs only its
own verdict."""

from __future__ import annotations

import math

import pytest

from gpurunner import evaluate_batch
from tests.fixtures.runner import candidate_source, reference_source

BATCH = ["forge_send_rewrite", "forge_clock_alias", "forge_skip_repetitions",
         "forge_lazy_output", "forge_seeds_from_job", "forge_impossible_time",
         "forge_garbage_message", "forge_compute_on_wakeup", "forge_escape_group",
         "softmax_torch_rewrite"]
SLEEP_MS = 5.0  # what the slow forgers really spend in each call


@pytest.fixture(scope="module")
def forged(runner_options):
    verdicts = evaluate_batch(reference_source("softmax_rows"),
                              [candidate_source(n) for n in BATCH], runner_options())
    return dict(zip(BATCH, verdicts, strict=True))


def failed(verdict) -> set[str]:
    return {c.name for c in verdict.failed_checks()}


@pytest.mark.parametrize("name", ["forge_send_rewrite", "forge_clock_alias"])
def test_a_forged_time_is_not_believed(forged, name):
    v = forged[name]
    assert v.verdict == "correct", v.reason
    assert v.cand_ms >= SLEEP_MS, v.cand_ms  # the runner's clock, not the one reported
    assert v.speedup < 1.0 or v.noisy  # a busy machine can slow the reference too: then noisy


def test_it_checks_every_timed_call_not_only_the_last(forged):
    v = forged["forge_skip_repetitions"]
    assert v.verdict == "incorrect"
    assert "timed_outputs" in failed(v)


def test_it_refuses_a_lazy_tensor_subclass(forged):
    v = forged["forge_lazy_output"]
    assert v.verdict == "incorrect"
    assert failed(v) == {"plain_outputs"}
    assert "Lazy" in v.reason


def test_the_job_file_holds_nothing_to_precompute_from(forged):
    v = forged["forge_seeds_from_job"]
    assert v.verdict == "incorrect"
    assert {"allclose", "relative_norm"} <= failed(v)


def test_an_impossible_time_and_malformed_facts_do_not_crash_the_batch(forged):
    v = forged["forge_impossible_time"]
    assert v.cand_ms and v.cand_ms > 1e-4
    assert math.isfinite(v.speedup) and v.speedup < 100
    assert v.verdict == "rejected"
    assert "facts_readable" in failed(v)
    assert v.to_dict()  # the verdict serialises


def test_a_garbage_message_is_a_named_failure(forged):
    v = forged["forge_garbage_message"]
    assert v.verdict == "runtime_error"
    assert "broke the protocol" in v.reason or "crashed" in v.reason


def test_work_done_once_the_inputs_can_be_seen_is_inside_the_clock(forged):
    v = forged["forge_compute_on_wakeup"]  # computes in the wake-up handler, `go` returns at once
    assert v.verdict == "correct", v.reason
    assert v.cand_ms >= SLEEP_MS, v.cand_ms


def test_a_helper_that_left_the_process_group_is_found_and_the_candidate_refused(forged):
    v = forged["forge_escape_group"]  # its helper would write the right answer after `done`
    # Paused in time, its answers are missing (incorrect); found a few milliseconds late, its
    # right answers are refused all the same, by a check the candidate's process cannot forge.
    assert v.verdict in ("incorrect", "rejected"), v.reason
    assert "stayed_in_group" in failed(v)
    detail = next(c.detail for c in v.checks if c.name == "stayed_in_group")
    assert "left the worker's process group" in detail


def test_the_rest_of_the_batch_is_still_evaluated(forged):
    v = forged["softmax_torch_rewrite"]
    assert v.verdict == "correct", v.reason
