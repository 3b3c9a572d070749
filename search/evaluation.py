"""The evaluator a search task hands to the engine.

Embedded default: gpurunner's process pool on this machine (as `search.engine.runner_evaluator`,
plus the deployment's RUNNER_CACHE_DIR and RUNNER_WORKERS).
Scale-out (`RUNNER_REMOTE=1`): one job per candidate on the GPU queue, verdicts gathered in
order; a job that does not answer in time counts as a timeout, never as a hang.
"""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings

from search.engine.types import Evaluator, SearchConfig, StageCallback

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


def stopped(device: str) -> dict[str, Any]:
    """The verdict of a candidate a cancel kept from being evaluated."""
    from gpurunner.stopping import stopped_verdict

    return stopped_verdict(device).to_dict()


def remote_evaluator(reference: str, sources: list[str], config: SearchConfig,
                     wait_s: float | None = None, stop: Any = None,
                     on_stage: StageCallback | None = None) -> list[dict[str, Any]]:
    """Enqueue one GPU job per candidate and gather their verdicts, in the sources' order;
    `on_stage` hears each verdict as it is gathered (the GPU hosts report no finer stages).
    Once `stop` is set, the jobs not yet answered are revoked."""
    from huey.exceptions import HueyException, TaskException

    from search.gpu_queue import evaluate_candidate

    options = eval_options(config)
    results = [evaluate_candidate(reference, source, options) for source in sources]
    limit = wait_s if wait_s is not None else config.timeout_s + 600.0 + QUEUE_WAIT_S
    verdicts = []
    for result in results:
        if stop is not None and not _wait_unless_stopped(result, limit, stop):
            result.revoke()
            verdicts.append(stopped(config.device))
            continue
        try:
            verdicts.append(result.get(blocking=True, timeout=limit))
        except TaskException as exc:  # the job itself crashed on the GPU host
            verdicts.append({"verdict": "runtime_error", "reason": "the GPU worker failed",
                             "checks": [], "device": config.device, "error": str(exc.metadata.get("error", exc))})
        except HueyException:
            result.revoke()
            verdicts.append(timeout_verdict(f"no GPU worker answered within {limit:.0f} s", config.device))
        if on_stage is not None:
            on_stage(len(verdicts) - 1, "verdict", verdicts[-1])
    return verdicts


def _wait_unless_stopped(result: Any, limit: float, stop: Any) -> bool:
    """Wait for a job's result until `limit`; False as soon as `stop` is set first."""
    from huey.exceptions import ResultTimeout, TaskException

    waited = 0.0
    while waited < limit:
        if stop.is_set():
            return False
        try:  # preserve: the caller's get() reads the same result (or error) again
            result.get(blocking=True, timeout=min(1.0, limit - waited), preserve=True)
            return True
        except TaskException:
            return True
        except ResultTimeout:
            waited += 1.0
    return True  # out of time: the caller's get() reports the timeout


def local_evaluator(reference: str, sources: list[str], config: SearchConfig,
                    stop: Any = None, on_stage: StageCallback | None = None,
                    ) -> list[dict[str, Any]]:
    """Evaluate on this machine through gpurunner's process pool (the embedded default), with
    the deployment's cache directory and worker count; `stop` interrupts the batch; stages
    reported as they happen."""
    import gpurunner
    from search.engine.runner_evaluator import stage_callback

    options = gpurunner.EvalOptions(**eval_options(config))
    verdicts = gpurunner.evaluate_batch(reference, list(sources), options,
                                        workers=settings.RUNNER_WORKERS, stop=stop,
                                        on_stage=stage_callback(on_stage))
    return [v.to_dict() for v in verdicts]


def make_evaluator(stop: Any = None) -> Evaluator:
    """The evaluator the settings ask for: GPU queues when RUNNER_REMOTE, else local. A
    `gpurunner.stopping.Stop` given here interrupts the batch in flight once set."""
    evaluator = remote_evaluator if settings.RUNNER_REMOTE else local_evaluator
    return functools.partial(evaluator, stop=stop) if stop is not None else evaluator
