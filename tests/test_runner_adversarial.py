"""The adversarial corpus: each cheat in tests/candidates/ gets the right verdict on the CPU,
and legitimate candidates (a torch rewrite, a C++ extension) are correct."""

from __future__ import annotations

import json
import os

import pytest

from gpurunner import evaluate, evaluate_batch
from gpurunner.sandbox import can_drop_user
from tests.fixtures.runner import candidate_source, reference_source

FAKE_KEY = "sk-test-0123456789abcdef"
FAKE_DB_PASSWORD = "hunter2-db-password"

CORPUS = [
    "softmax_torch_rewrite", "softmax_cpp", "softmax_bf16", "softmax_zeros", "softmax_uniform",
    "softmax_cached", "softmax_cached_by_pointer", "softmax_zero_input", "softmax_stale_memory",
    "softmax_patched_timer", "softmax_background_thread", "softmax_child_process",
    "softmax_segfault", "softmax_exit", "softmax_reads_secrets", "softmax_network",
    "softmax_wrong_shape", "softmax_syntax_error", "softmax_cpp_error",
]


@pytest.fixture(scope="session")
def corpus(runner_options):
    """Verdicts for the whole corpus, evaluated in one batch with secrets in the environment."""
    saved = {k: os.environ.get(k) for k in ("KERNELWEB_TEST_API_KEY", "DATABASE_URL")}
    os.environ["KERNELWEB_TEST_API_KEY"] = FAKE_KEY
    os.environ["DATABASE_URL"] = f"postgres://app:{FAKE_DB_PASSWORD}@127.0.0.1:5432/app"
    try:
        verdicts = evaluate_batch(reference_source("softmax_rows"),
                                  [candidate_source(n) for n in CORPUS], runner_options())
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return dict(zip(CORPUS, verdicts, strict=True))


def failed(verdict) -> set[str]:
    return {c.name for c in verdict.failed_checks()}


def test_it_accepts_a_torch_rewrite(corpus):
    v = corpus["softmax_torch_rewrite"]
    assert v.verdict == "correct", v.reason
    assert v.backend == "torch"
    assert v.cand_ms and v.ref_ms and v.speedup == pytest.approx(v.ref_ms / v.cand_ms)
    assert v.compile_ref_ms is None and v.speedup_vs_compile is None  # baseline skipped
    assert v.roofline_pct is None  # no ceilings on the CPU
    assert v.rel_err < 1e-4
    names = {c.name for c in v.checks}
    assert {"allclose", "relative_norm", "timed_outputs", "inputs_unchanged", "timer_untouched",
            "no_leftover_threads", "no_child_processes", "sandbox"} <= names


def test_it_accepts_a_cpu_cpp_extension(corpus):
    v = corpus["softmax_cpp"]
    assert v.verdict == "correct", v.reason + v.error
    assert v.backend == "cpu_cpp"


def test_it_labels_a_bf16_computation_that_stays_within_tolerance(corpus):
    v = corpus["softmax_bf16"]
    assert v.verdict == "correct", v.reason
    assert v.precision == "bf16"


@pytest.mark.parametrize("name", ["softmax_zeros", "softmax_uniform"])
def test_it_rejects_zeros_and_constants_for_softmax(corpus, name):
    v = corpus[name]
    assert v.verdict == "incorrect"
    assert {"allclose", "relative_norm"} <= failed(v)


def test_it_catches_an_output_cached_across_calls(corpus):
    v = corpus["softmax_cached"]
    assert v.verdict == "incorrect"
    assert "trial 2" in v.reason


def test_it_catches_an_output_cached_on_the_input_pointer(corpus):
    v = corpus["softmax_cached_by_pointer"]
    assert v.verdict == "incorrect"
    assert "timed_outputs" in failed(v) or "allclose" in failed(v)


def test_it_rejects_an_input_zeroed_in_place(corpus):
    v = corpus["softmax_zero_input"]
    assert v.verdict == "rejected"
    assert failed(v) == {"inputs_unchanged"}


def test_it_poisons_stale_memory_returned_by_empty_like(corpus):
    v = corpus["softmax_stale_memory"]
    assert v.verdict == "incorrect"
    assert "finite" in failed(v)


def test_it_rejects_a_patched_timer(corpus):
    v = corpus["softmax_patched_timer"]
    assert v.verdict == "rejected"
    assert "timer_untouched" in failed(v)
    assert "time.perf_counter" in v.reason


def test_it_rejects_a_background_thread(corpus):
    v = corpus["softmax_background_thread"]
    assert v.verdict == "rejected"
    assert "no_leftover_threads" in failed(v)
    assert "helper" in v.reason


def test_it_rejects_a_leftover_child_process(corpus):
    v = corpus["softmax_child_process"]
    assert v.verdict == "rejected"
    assert "no_child_processes" in failed(v)


def test_it_survives_a_segfault(corpus):
    v = corpus["softmax_segfault"]
    assert v.verdict == "runtime_error"
    assert "SIGSEGV" in v.reason


def test_it_survives_os_exit(corpus):
    v = corpus["softmax_exit"]
    assert v.verdict == "runtime_error"
    assert "exited with code 0" in v.reason


def test_it_hides_secrets_from_the_candidate(corpus):
    v = corpus["softmax_reads_secrets"]
    assert v.verdict == "correct", v.reason
    dumped = json.dumps(v.to_dict())
    assert FAKE_KEY not in dumped and FAKE_DB_PASSWORD not in dumped


@pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")
def test_it_cuts_the_network_when_root(corpus):
    v = corpus["softmax_network"]
    assert v.verdict == "correct", v.reason
    assert "no network" in next(c.detail for c in v.checks if c.name == "sandbox")


def test_it_reports_a_wrong_shape(corpus):
    v = corpus["softmax_wrong_shape"]
    assert v.verdict == "incorrect"
    assert "shape_dtype" in failed(v)


def test_it_reports_a_python_syntax_error_with_its_line(corpus):
    v = corpus["softmax_syntax_error"]
    assert v.verdict == "compile_error"
    assert "line 7" in v.reason


def test_it_reports_a_cpp_compile_error_with_the_source_line(corpus):
    v = corpus["softmax_cpp_error"]
    assert v.verdict == "compile_error"
    assert "cpp_sources line 6" in v.reason
    assert "undeclared_helper" in v.compile_log


def test_it_kills_a_hanging_candidate_at_the_timeout(runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("softmax_hang"),
                 runner_options(timeout_s=3.0))
    assert v.verdict == "timeout"
    assert "3 s" in v.reason


@pytest.mark.skipif(not can_drop_user(), reason="process limits need a sandbox user id")
def test_it_survives_a_fork_bomb(runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("softmax_fork_bomb"),
                 runner_options(timeout_s=3.0))
    assert v.verdict in ("timeout", "runtime_error")


def test_custom_kernels_policy_rejects_a_fallback_to_the_reference_op(runner_options):
    names = ["softmax_fallback", "softmax_cpp"]
    fallback, cpp = evaluate_batch(reference_source("softmax_rows"),
                                   [candidate_source(n) for n in names],
                                   runner_options(policy="custom-kernels"))
    assert fallback.verdict == "rejected"
    assert failed(fallback) == {"custom_kernels"}
    assert "aten::_softmax" in fallback.reason
    assert cpp.verdict == "correct", cpp.reason


def test_the_default_policy_accepts_plain_torch(corpus):
    assert "custom_kernels" not in {c.name for c in corpus["softmax_torch_rewrite"].checks}


def test_weights_match_under_the_init_seed(runner_options):
    v = evaluate(reference_source("linear_relu"), candidate_source("linear_relu_rewrite"),
                 runner_options())
    assert v.verdict == "correct", v.reason


def test_it_hides_the_reference_outputs_from_the_candidate(runner_options, runner_cache):
    source = candidate_source("softmax_reads_reference_cache")
    v = evaluate(reference_source("softmax_rows"),
                 source.replace("__RUNNER_CACHE__", str(runner_cache)), runner_options())
    assert any((runner_cache / "ref").rglob("*")), "the cache holds reference results"
    assert v.verdict == "correct", v.error or v.reason


def test_it_accepts_a_torch_compile_candidate(runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("softmax_torch_compile"),
                 runner_options(timeout_s=300.0))
    assert v.verdict == "correct", v.error or v.reason
    assert "harness_untouched" not in failed(v)
