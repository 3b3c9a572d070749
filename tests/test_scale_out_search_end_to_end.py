"""The scale-out set-up end to end: PostgreSQL, RedisHuey, a web-side worker process that runs
the search (its model: the OpenAI SDK against the local fake server) and a GPU-queue worker
process that evaluates its candidates."""

import subprocess
import sys
import time

from tests.fakes.llm_server import Canned, FakeLLMServer, openai_reply
from tests.fixtures.services import ROOT, django_env, postgres_url, redis_url, run_django  # noqa: F401
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_optimize_command import FAST, IDEA, WRONG, code

CREATE = """
import json, sys
from django.contrib.auth import get_user_model
from search.engine.types import SearchConfig
from search.services import create_search
from search.tasks import run_search_task
user = get_user_model().objects.create(username="owner")
config = SearchConfig(proposer="openai", model="gpt-4.1", rounds=1, ideas_per_round=1, impls_per_idea=2,
                      device="cpu", trials=2, compile_baseline=False, use_library=False)
info = {"ok": True, "operators": ["aten::_softmax"], "input_shapes": [[8, 64]], "input_dtypes": ["float32"],
        "output_shapes": [[8, 64]], "output_dtypes": ["float32"]}
search = create_search(user, open(sys.argv[1]).read(), config, info)
run_search_task(search.id)
print(search.id)
"""


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def test_a_search_runs_on_redis_queues_and_postgresql(postgres_url, redis_url, tmp_path):  # noqa: F811
    import psycopg

    llm = FakeLLMServer().start()
    llm.queue_openai(Canned(200, openai_reply(IDEA)), code(FAST), code(WRONG))
    ref = tmp_path / "ref.py"
    ref.write_text(SOFTMAX_REFERENCE)
    extra = {"REDIS_URL": str(redis_url), "HUEY_NAME": redis_url.prefix, "HUEY_GPU_NAME": f"{redis_url.prefix}-gpu",
             "CHANNELS_PREFIX": redis_url.prefix, "RUNNER_REMOTE": "1", "RUNNER_DEVICE": "cpu",
             "KERNELWEB_DATA_DIR": str(tmp_path), "HUEY_WORKERS": "1",
             "RUNNER_CACHE_DIR": str(tmp_path / "runner-cache"),
             "OPENAI_BASE_URL": llm.url + "/v1", "OPENAI_API_KEY": "sk-test"}
    env = django_env(postgres_url, **extra)
    search_id = int(run_django(postgres_url, CREATE.replace("sys.argv[1]", repr(str(ref))), **extra).strip())
    gpu_env = {k: v for k, v in env.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    workers = [
        subprocess.Popen([sys.executable, "manage.py", "run_huey"], cwd=ROOT, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
        subprocess.Popen([sys.executable, "-m", "huey.bin.huey_consumer", "search.gpu_queue.gpu_huey", "-w", "1",
                          "-k", "thread"], cwd=tmp_path, env={**gpu_env, "PYTHONPATH": str(ROOT)},
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
    ]
    try:
        with psycopg.connect(postgres_url, autocommit=True) as db:
            status = "queued"
            deadline = time.monotonic() + 400
            while status in ("queued", "running") and time.monotonic() < deadline:
                time.sleep(1)
                status = db.execute("SELECT status FROM search_search WHERE id = %s", (search_id,)).fetchone()[0]
            row = db.execute("SELECT s.status, s.status_reason, s.candidates, s.correct, n.source FROM search_search s "
                             "LEFT JOIN search_node n ON n.id = s.best_node_id WHERE s.id = %s", (search_id,)).fetchone()
            correct = [src for (src,) in db.execute("SELECT source FROM search_node WHERE search_id = %s "
                                                    "AND kind = 'kernel' AND status = 'correct'", (search_id,))]
            kinds = [k for (k,) in db.execute("SELECT kind FROM search_searchevent WHERE search_id = %s ORDER BY id",
                                              (search_id,))]
            verdicts = db.execute("SELECT key, status, verdict::text FROM search_node WHERE search_id = %s "
                                  "AND kind = 'kernel'", (search_id,)).fetchall()
    finally:
        for proc in workers:
            stop(proc)
        llm.stop()
    assert row[0] == "finished", row[1]
    assert (row[2], row[3], correct) == (2, 1, [FAST]), verdicts
    assert row[4] == FAST, verdicts  # the best, even where this machine's load left it noisy
    assert kinds[0] == "search_status" and "node_added" in kinds and kinds[-1] == "search_status"
