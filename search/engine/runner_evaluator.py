"""The evaluator that sends a batch of candidates to the trusted runner (gpurunner)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from search.engine.types import SearchConfig, StageCallback


def eval_options(config: SearchConfig) -> Any:
    """The runner's EvalOptions for a search's settings (tolerance is both atol and rtol;
    each kernel's profile, and on a GPU its registers and Nsight Compute's counters, go to the
    proposer's next prompt)."""
    from gpurunner import EvalOptions

    return EvalOptions(device=config.device, trials=config.trials, atol=config.tolerance,
                       rtol=config.tolerance, timeout_s=config.timeout_s, policy=config.policy,
                       compile_baseline=config.compile_baseline, profile=True,
                       counters=True)


def stage_callback(on_stage: StageCallback | None) -> Callable[[int, str, Any], None] | None:
    """The runner's stage callback for an engine's: the Verdict handed on as a dict."""
    if on_stage is None:
        return None

    def report(index: int, stage: str, verdict: Any) -> None:
        on_stage(index, stage, verdict.to_dict() if verdict is not None else None)
    return report


def runner_evaluator(reference: str, sources: list[str], config: SearchConfig,
                     on_stage: StageCallback | None = None,
                     time_left_s: float | None = None) -> list[dict[str, Any]]:
    """Evaluate all candidates of a batch with gpurunner.evaluate_batch; Verdict dicts in order
    (the batch stops after `time_left_s`, the search's remaining time budget)."""
    import gpurunner  # imported late: it imports torch, which the web process may not need yet

    verdicts = gpurunner.evaluate_batch(reference, list(sources), eval_options(config),
                                        on_stage=stage_callback(on_stage), time_left_s=time_left_s)
    return [v.to_dict() for v in verdicts]
