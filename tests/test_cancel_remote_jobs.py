"""Scale-out: a cancel stops waiting for the GPU queue and revokes the jobs not yet answered."""

from __future__ import annotations

import threading

from gpurunner.stopping import STOPPED_REASON, Stop
from search.engine.types import SearchConfig
from search.evaluation import remote_evaluator
from tests.fixtures.services import redis_url  # noqa: F401
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_optimize_command import FAST, WRONG
from tests.test_scale_out_gpu_queue import gpu_queue  # noqa: F401


def test_a_stop_revokes_the_unanswered_jobs_instead_of_waiting(gpu_queue):  # noqa: F811
    stop = Stop()
    threading.Timer(0.5, stop.set).start()  # no GPU worker: nothing would answer for 60 s each
    verdicts = remote_evaluator(SOFTMAX_REFERENCE, [FAST, WRONG], SearchConfig(device="cpu"), wait_s=60,
                                stop=stop)
    assert [v["reason"] for v in verdicts] == [STOPPED_REASON, STOPPED_REASON]
    pending = gpu_queue.pending()
    assert len(pending) == 2 and all(gpu_queue.is_revoked(task) for task in pending)
