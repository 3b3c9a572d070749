"""The GPU evaluation queue (scale-out): one job per candidate, a JSON verdict back.

No Django here: a GPU host runs only this queue's consumer, one per GPU, and needs neither the
database nor the web app's settings:

    REDIS_URL=redis://queue-host:6379/0 CUDA_VISIBLE_DEVICES=0 \\
        huey_consumer search.gpu_queue.gpu_huey --workers 1

A job carries the reference and candidate source and the evaluation options, so the verdict
depends on nothing but the job.
"""

from __future__ import annotations

import os
from typing import Any

from huey import RedisHuey

DEFAULT_NAME = "kernelweb-gpu"


def make_gpu_huey(url: str | None = None, name: str | None = None) -> RedisHuey:
    """The queue the web app's workers enqueue evaluations on and GPU hosts consume."""
    return RedisHuey(
        name or os.environ.get("HUEY_GPU_NAME", DEFAULT_NAME),
        url=url or os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0",
        results=True,
    )


gpu_huey = make_gpu_huey()


def evaluate_job(reference: str, source: str, options: dict[str, Any]) -> dict[str, Any]:
    """Evaluate one candidate in the runner's sandbox on this host; the Verdict as a dict."""
    import gpurunner
    from gpurunner.report import EvalOptions

    known = EvalOptions.__dataclass_fields__
    opts = EvalOptions(**{k: v for k, v in options.items() if k in known})
    # The GPU host's own build and reference cache, never a path from the web side.
    opts.cache_dir = os.environ.get("RUNNER_CACHE_DIR") or None
    return gpurunner.evaluate(reference, source, opts).to_dict()


evaluate_candidate = gpu_huey.task(name="evaluate_candidate")(evaluate_job)
