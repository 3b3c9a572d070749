"""What the proposer is told about tried kernels, and the runner options a search asks for."""

from __future__ import annotations

from search.engine.feedback import outcome_of, render_history, tried_ideas, unexplored_categories
from search.engine.runner_evaluator import eval_options
from search.engine.types import Node, SearchConfig, TriedIdea
from search.engine.verdicts import apply_verdict
from tests.fakes.engine import FakeEvaluator, kernel


def evaluated(key: str, source: str, parent_id: int = 2) -> Node:
    return apply_verdict(Node(kind="kernel", round=1, key=key, parent_id=parent_id, source=source),
                         FakeEvaluator.verdict(source))


def test_an_outcome_carries_every_measurement_the_proposer_needs():
    node = evaluated("k", kernel("k", 0.25))
    node.verdict.update(precision="bf16")
    outcome = outcome_of(node)
    assert outcome["status"] == "correct" and outcome["speedup"] == 4.0
    assert outcome["speedup_vs_compile"] == 3.2 and outcome["roofline_pct"] == 40.0
    assert outcome["max_abs_err"] == 1e-6 and outcome["precision"] == "bf16"
    text = render_history([TriedIdea(1, "Use bf16.", "precision", [outcome])])
    assert "4.00x eager, 3.20x torch.compile, 0.25 ms, 40% of roofline" in text
    assert "[Data type and precision] Use bf16." in text and "precision bf16" in text


def test_failures_show_the_failed_checks_and_the_compiler_error():
    wrong = outcome_of(evaluated("a", kernel("a", 1, "incorrect")))
    broken = outcome_of(evaluated("b", kernel("b", 1, "compile_error")))
    text = render_history([TriedIdea(2, "Tile it.", "memory", [wrong, broken])])
    assert "incorrect, max abs err 0.5" in text and "failed checks: allclose: max abs err 0.5 > 0.01" in text
    assert 'compile_error' in text
    assert ('error: the extension did not build\n      kernel.cu(12): error: identifier "blockDimx" is '
            'undefined') in text


def test_history_lists_ideas_of_earlier_rounds_with_their_implementations():
    idea1 = Node(kind="idea", round=1, id=2, parent_id=1, key="r1/ref/i0", idea="Fuse.", category="memory")
    idea2 = Node(kind="idea", round=2, id=5, parent_id=3, key="r2/x/i0", idea="Unroll.", category="control_flow")
    k1, k2 = evaluated("r1/ref/i0/k0", kernel("x", 0.5), 2), evaluated("r2/x/i0/k0", kernel("y", 0.5), 5)
    k1.id, k2.id = 3, 6
    history = tried_ideas([idea1, k1, idea2, k2], before_round=2)
    assert [(t.text, len(t.outcomes)) for t in history] == [("Fuse.", 1)]
    assert unexplored_categories(history) == ["async", "precision", "compute", "parallelism", "control_flow"]


def test_an_unknown_verdict_is_a_runtime_error():
    node = apply_verdict(Node(kind="kernel", round=1, key="k"), {"verdict": "exploded", "reason": "boom"})
    assert node.status == "runtime_error" and node.error == "boom"


def test_the_runner_options_come_from_the_search_settings():
    config = SearchConfig(device="cuda", trials=7, tolerance=1e-3, timeout_s=30.0, policy="custom-kernels",
                          compile_baseline=False)
    options = eval_options(config)
    assert (options.device, options.trials, options.atol, options.rtol) == ("cuda", 7, 1e-3, 1e-3)
    assert (options.timeout_s, options.policy, options.compile_baseline) == (30.0, "custom-kernels", False)


def test_a_wrong_kernel_shows_no_speedup():
    verdict = FakeEvaluator.verdict(kernel("w", 0.1, "incorrect")) | {"speedup": 10.0, "cand_ms": 0.1}
    node = apply_verdict(Node(kind="kernel", round=1, key="w"), verdict)
    assert node.status == "incorrect" and node.speedup is None and node.speedup_vs_compile is None
    assert node.verdict["speedup"] == 10.0


HARNESS_TRACEBACK = """Traceback (most recent call last):
  File "/srv/kernelweb/gpurunner/candidate.py", line 120, in run_candidate_job
    outputs = model(*inputs)
  File "/srv/kernelweb/.venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1751, in _call_impl
    return forward_call(*args, **kwargs)
  File "/var/lib/kernelweb/runner-cache/job-8f3a/candidate.py", line 14, in forward
    return torch.mm(x, self.weight)
RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x64 and 32x32)
"""


def test_a_runtime_error_reaches_the_model_as_the_candidates_own_exception_without_server_paths():
    node = apply_verdict(Node(kind="kernel", round=1, key="k", source="..."), {
        "verdict": "runtime_error", "checks": [], "error": HARNESS_TRACEBACK,
        "reason": "ModelNew raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x64 and 32x32) "
                  "(line 14)"})
    error = outcome_of(node)["error"]
    assert error == ("ModelNew raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x64 and 32x32) "
                     "(line 14)\ncandidate.py line 14, in forward: return torch.mm(x, self.weight)")
    assert "gpurunner" not in error and "/srv/" not in error and "/var/lib" not in error


def test_a_reason_naming_server_paths_reaches_the_model_without_them():
    node = apply_verdict(Node(kind="kernel", round=1, key="k", source="..."), {
        "verdict": "runtime_error", "checks": [],
        "reason": "import raised FileNotFoundError: [Errno 2] No such file: '/var/lib/kernelweb/data/x.bin'"})
    assert outcome_of(node)["error"] == ("import raised FileNotFoundError: [Errno 2] No such file: 'x.bin'")
