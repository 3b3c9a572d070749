"""gpurunner: the trusted harness that validates references and evaluates candidate kernels.

Imports torch, never Django. Public API (used by the search app):

    check_reference(source, device="cpu") -> ReferenceReport
    evaluate(reference, candidate, options=EvalOptions()) -> Verdict
    evaluate_batch(reference, candidates, options=EvalOptions(), workers=None, stop=None,
                   on_stage=None, time_left_s=None) -> list[Verdict]
        (stop: a gpurunner.stopping.Stop that interrupts the batch; on_stage(index, stage,
        verdict) sees each candidate's stage as it happens; time_left_s: a search's remaining
        time budget, after which the batch stops as if `stop` were set)
"""

from collections.abc import Callable
from typing import Any

from gpurunner.report import BACKENDS, VERDICTS, Check, EvalOptions, ReferenceReport, Verdict

__all__ = [
    "BACKENDS",
    "VERDICTS",
    "Check",
    "EvalOptions",
    "ReferenceReport",
    "Verdict",
    "check_reference",
    "evaluate",
    "evaluate_batch",
]


def check_reference(source: str, device: str = "cpu", timeout_s: float = 300.0) -> ReferenceReport:
    from gpurunner.api import check_reference as _check

    return _check(source, device=device, timeout_s=timeout_s)


def evaluate(reference: str, candidate: str, options: EvalOptions | None = None) -> Verdict:
    from gpurunner.api import evaluate as _evaluate

    return _evaluate(reference, candidate, options or EvalOptions())


def evaluate_batch(
    reference: str,
    candidates: list[str],
    options: EvalOptions | None = None,
    workers: int | None = None,
    stop: Any = None,
    on_stage: Callable[[int, str, Verdict | None], None] | None = None,
    time_left_s: float | None = None,
) -> list[Verdict]:
    from gpurunner.api import evaluate_batch as _batch

    return _batch(reference, candidates, options or EvalOptions(), workers=workers, stop=stop,
                  on_stage=on_stage, time_left_s=time_left_s)
