"""The evaluator that sends a batch of candidates to the trusted runner (gpurunner)."""

from __future__ import annotations

from typing import Any

from search.engine.types import SearchConfig


def eval_options(config: SearchConfig) -> Any:
    """The runner's EvalOptions for a search's settings (tolerance is both atol and rtol)."""
    from gpurunner import EvalOptions

    return EvalOptions(device=config.device, trials=config.trials, atol=config.tolerance,
                       rtol=config.tolerance, timeout_s=config.timeout_s, policy=config.policy,
                       compile_baseline=config.compile_baseline)


def runner_evaluator(reference: str, sources: list[str], config: SearchConfig) -> list[dict[str, Any]]:
    """Evaluate all candidates of a batch with gpurunner.evaluate_batch; Verdict dicts in order."""
    import gpurunner  # imported late: it imports torch, which the web process may not need yet

    verdicts = gpurunner.evaluate_batch(reference, list(sources), eval_options(config))
    return [v.to_dict() for v in verdicts]
