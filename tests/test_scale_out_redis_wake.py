"""Scale-out streaming: a wake-up sent from another process through channels_redis reaches a
websocket consumer in this one, which then reads the new row from the table."""

import subprocess
import sys

import pytest
from channels.db import database_sync_to_async

from search.consumers import SearchEventsConsumer
from search.models import SearchEvent
from tests.fixtures.services import ROOT, django_env, django_script, redis_url  # noqa: F401
from tests.fixtures.web import make_finished_search
from tests.test_websocket_search_events import communicator

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


async def test_a_wake_up_from_another_process_reaches_the_consumer(owner, production, settings, redis_url,  # noqa: F811
                                                                   monkeypatch, tmp_path):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [str(redis_url)], "prefix": redis_url.prefix}}}
    monkeypatch.setattr(SearchEventsConsumer, "safety_interval_s", 60.0)  # only the wake-up can deliver
    search = await database_sync_to_async(lambda: make_finished_search(owner, status="running"))()
    last = await database_sync_to_async(lambda: SearchEvent.objects.filter(search=search).last().id)()
    comm = communicator(f"/ws/searches/{search.id}/?after={last}", owner)
    assert (await comm.connect())[0]
    assert await comm.receive_nothing(timeout=0.5)

    # The row lands (here: this process's database), the wake-up comes from another process.
    event = await database_sync_to_async(SearchEvent.objects.create)(search=search, kind="round_started",
                                                                     payload={"round": 2})
    env = django_env(f"sqlite:///{tmp_path / 'unused.sqlite3'}", REDIS_URL=str(redis_url),
                     CHANNELS_PREFIX=redis_url.prefix, KERNELWEB_DATA_DIR=str(tmp_path))
    code = django_script(f"from search.events import wake\nwake({search.id}, {event.id})\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr

    received = await comm.receive_json_from(timeout=10)
    assert (received["id"], received["kind"]) == (event.id, "round_started")
    await comm.disconnect()
