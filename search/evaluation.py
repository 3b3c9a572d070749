"""The evaluator a search task hands to the engine.

Embedded default: gpurunner's process pool on this machine (as `search.engine.runner_evaluator`,
plus the deployment's RUNNER_CACHE_DIR and RUNNER_WORKERS).
Scale-out (`RUNNER_REMOTE=1`): one job per candidate on the GPU queue, verdicts gathered in
order; a job that does not answer in time counts as a timeout, never as a hang.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings

from search.engine.types import Evaluator, SearchConfig

# Beyond the candidate's own limits: queueing behind other searches' jobs on busy GPUs.
QUEUE_WAIT_S = 1800.0


def eval_options(config: SearchConfig) -> dict[str, Any]:
    """gpurunner EvalOptions (as a dict) for a search's settings, with this deployment's cache."""
    from search.engine.runner_evaluator import eval_options as runner_options

    options = runner_options(config).to_dict()
    options["cache_dir"] = settings.RUNNER_CACHE_DIR or None
    return options


def timeout_verdict(reason: str, device: str) -> dict[str, Any]:
    """A Verdict dict for a candidate whose job never answered."""
    return {"verdict": "timeout", "reason": reason, "checks": [], "device": device, "error": reason}


def remote_evaluator(reference: str, sources: list[str], config: SearchConfig,
                     wait_s: float | None = None) -> list[dict[str, Any]]:
    """Enqueue one GPU job per candidate and gather their verdicts, in the sources' order."""
    from huey.exceptions import HueyException, TaskException

    from search.gpu_queue import evaluate_candidate

    options = eval_options(config)
    results = [evaluate_candidate(reference, source, options) for source in sources]
    limit = wait_s if wait_s is not None else config.timeout_s + 600.0 + QUEUE_WAIT_S
    verdicts = []
    for result in results:
        try:
            verdicts.append(result.get(blocking=True, timeout=limit))
        except TaskException as exc:  # the job itself crashed on the GPU host
            verdicts.append({"verdict": "runtime_error", "reason": "the GPU worker failed",
                             "checks": [], "device": config.device, "error": str(exc.metadata.get("error", exc))})
        except HueyException:
            result.revoke()
            verdicts.append(timeout_verdict(f"no GPU worker answered within {limit:.0f} s", config.device))
    return verdicts


def local_evaluator(reference: str, sources: list[str], config: SearchConfig) -> list[dict[str, Any]]:
    """Evaluate on this machine through gpurunner's process pool (the embedded default), with
    the deployment's cache directory and worker count."""
    import gpurunner

    options = gpurunner.EvalOptions(**eval_options(config))
    verdicts = gpurunner.evaluate_batch(reference, list(sources), options, workers=settings.RUNNER_WORKERS)
    return [v.to_dict() for v in verdicts]


def make_evaluator() -> Evaluator:
    """The evaluator the settings ask for: GPU queues when RUNNER_REMOTE, else local."""
    return remote_evaluator if settings.RUNNER_REMOTE else local_evaluator
