"""Scale-out evaluation: one huey job per candidate on the GPU queue (RedisHuey), consumed by a
separate worker process that needs no database; each candidate's stages are seen live, and
verdicts come back in the candidates' order."""

import os
import subprocess
import sys

import pytest
from huey.storage import RedisStorage

from search.engine.types import SearchConfig
from search.evaluation import remote_evaluator
from tests.fixtures.services import ROOT, redis_url  # noqa: F401
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_optimize_command import FAST, WRONG


@pytest.fixture
def gpu_queue(redis_url):  # noqa: F811
    """The GPU queue pointed at this run's own Redis name; restored afterwards."""
    from search.gpu_queue import gpu_huey

    saved = gpu_huey.storage
    gpu_huey.storage = RedisStorage(redis_url.prefix, url=str(redis_url))
    yield gpu_huey
    gpu_huey.storage.flush_all()
    gpu_huey.storage = saved


def test_without_a_gpu_worker_each_candidate_times_out_instead_of_hanging(gpu_queue):
    config = SearchConfig(device="cpu", timeout_s=1.0)
    verdicts = remote_evaluator(SOFTMAX_REFERENCE, [FAST, WRONG], config, wait_s=0.3)
    assert [v["verdict"] for v in verdicts] == ["timeout", "timeout"]
    assert "no GPU worker answered" in verdicts[0]["reason"]


def test_a_worker_process_evaluates_the_jobs_and_verdicts_come_back_in_order(gpu_queue, redis_url, tmp_path):  # noqa: F811
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env.update({"REDIS_URL": str(redis_url), "HUEY_GPU_NAME": redis_url.prefix, "PYTHONPATH": str(ROOT),
                "RUNNER_CACHE_DIR": str(tmp_path / "runner-cache")})
    consumer = subprocess.Popen([sys.executable, "-m", "huey.bin.huey_consumer", "search.gpu_queue.gpu_huey",
                                 "--workers", "1", "--worker-type", "thread"], cwd=tmp_path, env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        config = SearchConfig(device="cpu", trials=2, timeout_s=120.0, compile_baseline=False)
        heard: list[tuple[int, str]] = []
        verdicts = remote_evaluator(SOFTMAX_REFERENCE, [FAST, WRONG], config, wait_s=300,
                                    on_stage=lambda index, stage, verdict: heard.append((index, stage)))
    finally:
        consumer.terminate()
        try:
            consumer.wait(timeout=20)
        except subprocess.TimeoutExpired:
            consumer.kill()
            consumer.wait()
    assert [v["verdict"] for v in verdicts] == ["correct", "incorrect"], consumer.stderr.read()[-2000:]
    assert verdicts[0]["speedup"] is not None
    # The GPU host's stages arrived through Redis before each verdict, in the runner's order.
    assert [s for i, s in heard if i == 0] == ["compiling", "checking", "timing", "verdict"], heard
    assert [s for i, s in heard if i == 1][-1] == "verdict" and (1, "compiling") in heard, heard


def test_the_gpu_queue_module_does_not_need_django(tmp_path, redis_url):  # noqa: F811
    code = "import sys, search.gpu_queue\nassert 'django' not in sys.modules, sorted(m for m in sys.modules if 'django' in m)"
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
