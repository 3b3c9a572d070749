"""Turn a runner verdict (gpurunner Verdict.to_dict()) into a kernel node's status and numbers."""

from __future__ import annotations

from typing import Any

from gpurunner.report import NOT_EVALUATED
from search.engine.statuses import PENDING_STATUSES, NodeStatus
from search.engine.types import KERNEL_STATUSES, Node

# Statuses the evaluator can give; anything else the runner says is treated as a runtime error.
_EVALUATED = set(KERNEL_STATUSES) - {*PENDING_STATUSES, "failed"}


def status_of(verdict: dict[str, Any]) -> str:
    """The kernel status for a verdict string; unknown verdicts become `runtime_error`, and a
    candidate the runner was stopped before judging is `failed` (not evaluated)."""
    if str(verdict.get("reason") or "").startswith(NOT_EVALUATED):
        return NodeStatus.FAILED
    status = str(verdict.get("verdict", ""))
    return status if status in _EVALUATED else "runtime_error"


def first_lines(text: str, lines: int = 3, chars: int = 600) -> str:
    """The first few non-empty lines of a log, short enough for a prompt or a node's summary."""
    kept = [line for line in (text or "").splitlines() if line.strip()][:lines]
    out = "\n".join(kept)
    return out if len(out) <= chars else out[: chars - 3] + "..."


def apply_verdict(node: Node, verdict: dict[str, Any]) -> Node:
    """Record a verdict on a kernel node: status, backend, timings, the error, and the speedups
    when the kernel is correct (a wrong kernel's speed means nothing)."""
    node.verdict = verdict
    node.status = status_of(verdict)
    node.backend = verdict.get("backend") or node.backend
    node.cand_ms = verdict.get("cand_ms")
    # A speedup is shown only when it can be trusted; the verdict keeps the raw numbers.
    trusted = node.status == "correct"
    node.speedup = verdict.get("speedup") if trusted else None
    node.speedup_vs_compile = verdict.get("speedup_vs_compile") if trusted else None
    if node.status == "correct":
        node.error = ""
    else:
        node.error = (verdict.get("reason") or "").strip() or first_lines(
            verdict.get("error") or verdict.get("compile_log") or ""
        ) or node.status
    return node


def runner_failure(node: Node, error: str) -> Node:
    """Record that the runner itself failed on a kernel (not the candidate's fault alone)."""
    node.status = "runtime_error"
    node.error = f"the runner failed: {error}"
    node.verdict = {"verdict": "runtime_error", "reason": node.error, "checks": []}
    return node
