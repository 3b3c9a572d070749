"""The evaluator a search task hands to the engine.

Embedded default: gpurunner's process pool on this machine (as `search.engine.runner_evaluator`,
plus the deployment's RUNNER_CACHE_DIR and RUNNER_WORKERS).
Scale-out (`RUNNER_REMOTE=1`): one job per candidate on the GPU queue, verdicts gathered in
order; a job that does not answer in time counts as a timeout, never as a hang.
"""

from __future__ import annotations

import functools
import uuid
from typing import Any

from django.conf import settings

from search.engine.statuses import LIVE_STAGES
from search.engine.types import Evaluator, SearchConfig, StageCallback

# Beyond the candidate's own limits: queueing behind other searches' jobs on busy GPUs.
QUEUE_WAIT_S = 1800.0
LIVE_STAGES_NAMES = frozenset(s.value for s in LIVE_STAGES)


def eval_options(config: SearchConfig) -> dict[str, Any]:
    """gpurunner EvalOptions (as a dict) for a search's settings, with this deployment's cache."""
    from search.engine.runner_evaluator import eval_options as runner_options

    options = runner_options(config).to_dict()
    options["cache_dir"] = settings.RUNNER_CACHE_DIR or None
    return options


def timeout_verdict(reason: str, device: str) -> dict[str, Any]:
    """A Verdict dict for a candidate whose job never answered."""
    return {"verdict": "timeout", "reason": reason, "checks": [], "device": device, "error": reason}


def stopped(device: str, stop: Any = None) -> dict[str, Any]:
    """The verdict of a candidate a cancel (or the time budget) kept from being evaluated."""
    from gpurunner.stopping import STOPPED_REASON, stopped_verdict

    return stopped_verdict(device, getattr(stop, "reason", STOPPED_REASON)).to_dict()


def remote_evaluator(reference: str, sources: list[str], config: SearchConfig,
                     wait_s: float | None = None, stop: Any = None,
                     on_stage: StageCallback | None = None,
                     time_left_s: float | None = None) -> list[dict[str, Any]]:
    """Enqueue one GPU job per candidate and gather their verdicts, in the sources' order;
    `on_stage` hears each candidate's stages as the GPU hosts report them (read from Redis
    about once a second) and each verdict as it is gathered. Once `stop` is set, or
    `time_left_s` (the search's remaining time budget) has passed, the jobs not yet answered
    are revoked."""
    from gpurunner.stopping import within

    with within(time_left_s, stop) as stop:
        return _gather_remote(reference, sources, config, wait_s, stop, on_stage)


def _gather_remote(reference: str, sources: list[str], config: SearchConfig, wait_s: float | None,
                   stop: Any, on_stage: StageCallback | None) -> list[dict[str, Any]]:
    from huey.exceptions import HueyException, TaskException

    from search.gpu_queue import evaluate_candidate, stage_prefix

    options = eval_options(config)
    keys = [f"{stage_prefix()}{uuid.uuid4().hex}" for _ in sources]
    results = [evaluate_candidate(reference, source, options, key) for source, key in zip(sources, keys, strict=True)]
    stages = _RemoteStages(keys, on_stage)
    limit = wait_s if wait_s is not None else config.timeout_s + 600.0 + QUEUE_WAIT_S
    verdicts = []
    for index, result in enumerate(results):
        if not _wait(result, limit, stop, stages.poll):
            result.revoke()
            verdicts.append(stopped(config.device, stop))
        else:
            try:
                verdicts.append(result.get(blocking=True, timeout=1.0))
            except TaskException as exc:  # the job itself crashed on the GPU host
                verdicts.append({"verdict": "runtime_error", "reason": "the GPU worker failed",
                                 "checks": [], "device": config.device,
                                 "error": str(exc.metadata.get("error", exc))})
            except HueyException:
                result.revoke()
                verdicts.append(timeout_verdict(f"no GPU worker answered within {limit:.0f} s",
                                                config.device))
        stages.done.add(index)
        if on_stage is not None:
            on_stage(index, "verdict", verdicts[-1])
    return verdicts


class _RemoteStages:
    """The stages GPU hosts appended to each job's Redis list, handed to `on_stage` once each."""

    def __init__(self, keys: list[str], on_stage: StageCallback | None):
        self.keys, self.on_stage = keys, on_stage
        self.seen = [0] * len(keys)
        self.done: set[int] = set()

    def poll(self) -> None:
        if self.on_stage is None:
            return
        from search.gpu_queue import read_stages

        for index, key in enumerate(self.keys):
            if index in self.done:
                continue
            try:
                new = read_stages(key, self.seen[index])
            except Exception:  # noqa: BLE001 - a missed stage is cosmetic; the verdict still comes
                return
            self.seen[index] += len(new)
            for stage in new:
                if stage in LIVE_STAGES_NAMES:
                    self.on_stage(index, stage, None)


def _wait(result: Any, limit: float, stop: Any, poll: Any) -> bool:
    """Wait for a job's result until `limit`, calling `poll()` about once a second; False as
    soon as `stop` is set first."""
    from huey.exceptions import ResultTimeout, TaskException

    waited = 0.0
    while waited < limit:
        poll()
        if stop is not None and stop.is_set():
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
                    time_left_s: float | None = None) -> list[dict[str, Any]]:
    """Evaluate on this machine through gpurunner's process pool (the embedded default), with
    the deployment's cache directory and worker count; `stop` interrupts the batch, and so
    does the end of `time_left_s` (the search's remaining time budget); stages reported as
    they happen."""
    import gpurunner
    from search.engine.runner_evaluator import stage_callback

    options = gpurunner.EvalOptions(**eval_options(config))
    verdicts = gpurunner.evaluate_batch(reference, list(sources), options,
                                        workers=settings.RUNNER_WORKERS, stop=stop,
                                        on_stage=stage_callback(on_stage), time_left_s=time_left_s)
    return [v.to_dict() for v in verdicts]


def make_evaluator(stop: Any = None) -> Evaluator:
    """The evaluator the settings ask for: GPU queues when RUNNER_REMOTE, else local. A
    `gpurunner.stopping.Stop` given here interrupts the batch in flight once set."""
    evaluator = remote_evaluator if settings.RUNNER_REMOTE else local_evaluator
    return functools.partial(evaluator, stop=stop) if stop is not None else evaluator
