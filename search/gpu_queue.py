"""The GPU evaluation queue (scale-out): one job per candidate, a JSON verdict back.

No Django here: a GPU host runs only this queue's consumer, one per GPU, and needs neither the
database nor the web app's settings:

    REDIS_URL=redis://queue-host:6379/0 CUDA_VISIBLE_DEVICES=0 \\
        huey_consumer search.gpu_queue.gpu_huey --workers 1

A job carries the reference and candidate source and the evaluation options, so the verdict
depends on nothing but the job. While it runs, the job appends the runner's stages (compiling,
checking, timing) to a Redis list the web side named (`stage_key`), which the web side reads
to show them live.
"""

from __future__ import annotations

import os
from typing import Any

from huey import RedisHuey

DEFAULT_NAME = "kernelweb-gpu"
STAGE_TTL_S = 3600  # a stage list outlives any job that writes it, then goes


def make_gpu_huey(url: str | None = None, name: str | None = None) -> RedisHuey:
    """The queue the web app's workers enqueue evaluations on and GPU hosts consume."""
    return RedisHuey(
        name or os.environ.get("HUEY_GPU_NAME", DEFAULT_NAME),
        url=url or os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        results=True,
    )


gpu_huey = make_gpu_huey()


def evaluate_job(reference: str, source: str, options: dict[str, Any],
                 stage_key: str | None = None) -> dict[str, Any]:
    """Evaluate one candidate in the runner's sandbox on this host; the Verdict as a dict.
    With `stage_key`, each stage the candidate reaches is appended to that Redis list."""
    import gpurunner
    from gpurunner.report import EvalOptions

    known = EvalOptions.__dataclass_fields__
    opts = EvalOptions(**{k: v for k, v in options.items() if k in known})
    # The GPU host's own build and reference cache, never a path from the web side.
    opts.cache_dir = os.environ.get("RUNNER_CACHE_DIR") or None
    on_stage = None
    if stage_key and stage_key.startswith(stage_prefix()):  # only lists of this queue's own

        def on_stage(index: int, stage: str, verdict: Any) -> None:
            if stage not in ("queued", "verdict"):  # the web side knows these already
                conn = gpu_huey.storage.conn
                conn.rpush(stage_key, stage)
                conn.expire(stage_key, STAGE_TTL_S)

    return gpurunner.evaluate_batch(reference, [source], opts, on_stage=on_stage)[0].to_dict()


def stage_prefix() -> str:
    """Where this queue's stage lists live in Redis."""
    return f"{gpu_huey.storage.name}:stages:"


def read_stages(key: str, seen: int) -> list[str]:
    """The stages appended to `key` after the first `seen`."""
    return [s.decode() if isinstance(s, bytes) else str(s)
            for s in gpu_huey.storage.conn.lrange(key, seen, -1)]


evaluate_candidate = gpu_huey.task(name="evaluate_candidate")(evaluate_job)
