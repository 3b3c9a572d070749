"""The shared page's websocket: anyone with the slug reads the stream; revoking ends it."""

import pytest
from channels.db import database_sync_to_async

from search.consumers import REFUSED
from search.models import SearchEvent
from search.services import revoke_share
from tests.fixtures.web import make_finished_search
from tests.test_websocket_search_events import communicator, refusal_code

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]


@pytest.fixture(autouse=True)
def no_layer(settings):
    settings.CHANNEL_LAYERS = {}


async def test_anyone_with_the_slug_reads_the_shared_stream(owner, production):
    search = await database_sync_to_async(lambda: make_finished_search(owner, shared=True))()
    count = await database_sync_to_async(SearchEvent.objects.filter(search=search).count)()
    comm = communicator(f"/ws/share/{search.share_slug}/")
    assert (await comm.connect())[0]
    events = [await comm.receive_json_from(timeout=5) for _ in range(count)]
    assert events[-1]["kind"] == "search_status"
    await comm.disconnect()


async def test_an_unknown_slug_is_refused(owner, production):
    assert await refusal_code(communicator("/ws/share/not-a-real-slug/")) == REFUSED


async def test_a_revoked_slug_is_refused(owner, production):
    search = await database_sync_to_async(lambda: make_finished_search(owner, shared=True))()
    slug = search.share_slug
    await database_sync_to_async(revoke_share)(search)
    assert await refusal_code(communicator(f"/ws/share/{slug}/")) == REFUSED


async def test_revoking_closes_an_open_shared_stream(owner, production):
    search = await database_sync_to_async(lambda: make_finished_search(owner, shared=True))()
    count = await database_sync_to_async(SearchEvent.objects.filter(search=search).count)()
    comm = communicator(f"/ws/share/{search.share_slug}/?after=0")
    assert (await comm.connect())[0]
    for _ in range(count):
        await comm.receive_json_from(timeout=5)
    await database_sync_to_async(revoke_share)(search)
    closed = await comm.receive_output(timeout=5)
    assert closed["type"] == "websocket.close"
