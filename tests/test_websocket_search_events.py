"""The search event websocket: replay after `after`, live events, several viewers, both set-ups
(no channel layer: polling; in-memory layer: wake-ups), and who may subscribe."""

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from search.consumers import REFUSED, SearchEventsConsumer
from search.events import emit
from search.models import SearchEvent
from tests.fixtures.web import make_finished_search

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.asyncio]

ORIGIN = [(b"origin", b"http://127.0.0.1:8000")]


def communicator(path: str, user=None, client: str = "127.0.0.1") -> WebsocketCommunicator:
    """A client of the real ASGI application (origin check and session middleware included),
    connecting from `client` (daphne puts the peer's address in the scope)."""
    from kernelweb.asgi import application

    comm = WebsocketCommunicator(application, path, headers=ORIGIN)
    comm.scope["client"] = [client, 50123]
    if user is not None:
        # Stands in for a logged-in session: the auth middleware keeps a user already in scope.
        comm.scope["user"] = user
    return comm


async def refusal_code(comm: WebsocketCommunicator) -> int | None:
    """The close code of a refused connection. The server accepts first and then closes, so a
    browser sees the code (a close before accepting reaches it as a bare HTTP 403)."""
    connected, _ = await comm.connect()
    assert connected, "closed before accepting: the browser gets HTTP 403, not the close code"
    message = await comm.receive_output(timeout=5)
    return message.get("code") if message["type"] == "websocket.close" else None


async def receive_all(comm: WebsocketCommunicator, count: int) -> list[dict]:
    return [await comm.receive_json_from(timeout=5) for _ in range(count)]


@pytest.fixture
def no_layer(settings):
    settings.CHANNEL_LAYERS = {}
    return settings


@pytest.fixture
def memory_layer(settings):
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    return settings


@pytest.fixture
def search(owner):
    return make_finished_search(owner, status="running")


def event_ids(search) -> list[int]:
    return list(SearchEvent.objects.filter(search=search).values_list("id", flat=True))


async def test_it_replays_every_event_after_the_given_id(owner, search, production, no_layer):
    ids = await database_sync_to_async(event_ids)(search)
    comm = communicator(f"/ws/searches/{search.id}/?after={ids[2]}", owner)
    connected, _ = await comm.connect()
    assert connected
    events = await receive_all(comm, len(ids) - 3)
    assert [e["id"] for e in events] == ids[3:]
    assert {"id", "kind", "payload", "created"} <= set(events[0])
    assert await comm.receive_nothing(timeout=0.6)
    await comm.disconnect()


async def test_a_late_viewer_gets_the_whole_tree(owner, search, production, no_layer):
    ids = await database_sync_to_async(event_ids)(search)
    comm = communicator(f"/ws/searches/{search.id}/", owner)
    assert (await comm.connect())[0]
    events = await receive_all(comm, len(ids))
    added = [e["payload"]["node"]["key"] for e in events if e["kind"] == "node_added"]
    assert added == ["ref", "r1/ref/i0", "r1/ref/i0/k0", "r1/ref/i0/k1", "r1/ref/i1", "r1/ref/i1/k0"]
    await comm.disconnect()


async def test_it_streams_new_events_by_polling_without_a_layer(owner, search, production, no_layer):
    ids = await database_sync_to_async(event_ids)(search)
    comm = communicator(f"/ws/searches/{search.id}/?after={ids[-1]}", owner)
    assert (await comm.connect())[0]
    assert await comm.receive_nothing(timeout=0.4)
    await database_sync_to_async(emit)(search.id, "round_started", {"round": 2})
    event = await comm.receive_json_from(timeout=5)
    assert (event["kind"], event["payload"]) == ("round_started", {"round": 2})
    await comm.disconnect()


async def test_a_second_viewer_gets_the_same_live_events(owner, search, production, no_layer):
    ids = await database_sync_to_async(event_ids)(search)
    first = communicator(f"/ws/searches/{search.id}/?after={ids[-1]}", owner)
    second = communicator(f"/ws/searches/{search.id}/?after={ids[-1]}", owner)
    assert (await first.connect())[0] and (await second.connect())[0]
    await database_sync_to_async(emit)(search.id, "round_started", {"round": 2})
    await database_sync_to_async(emit)(search.id, "round_finished", {"round": 2, "best_speedup": 1.5, "best_node_id": 1})
    got_first = [e["kind"] for e in await receive_all(first, 2)]
    got_second = [e["kind"] for e in await receive_all(second, 2)]
    assert got_first == got_second == ["round_started", "round_finished"]
    await first.disconnect()
    await second.disconnect()


async def test_a_wake_up_through_the_in_memory_layer_delivers_new_events(
        owner, search, production, memory_layer, monkeypatch):
    # Without the wake-up the consumer would not look again for a minute.
    monkeypatch.setattr(SearchEventsConsumer, "safety_interval_s", 60.0)
    ids = await database_sync_to_async(event_ids)(search)
    comm = communicator(f"/ws/searches/{search.id}/?after={ids[-1]}", owner)
    assert (await comm.connect())[0]
    assert await comm.receive_nothing(timeout=0.3)
    await database_sync_to_async(emit)(search.id, "round_started", {"round": 2})
    event = await comm.receive_json_from(timeout=5)
    assert event["kind"] == "round_started"
    await comm.disconnect()


async def test_a_reconnect_with_the_last_seen_id_loses_nothing(owner, search, production, no_layer):
    ids = await database_sync_to_async(event_ids)(search)
    comm = communicator(f"/ws/searches/{search.id}/?after={ids[-1]}", owner)
    assert (await comm.connect())[0]
    await database_sync_to_async(emit)(search.id, "round_started", {"round": 2})
    seen = (await comm.receive_json_from(timeout=5))["id"]
    await comm.disconnect()
    # Events land while the viewer is away.
    await database_sync_to_async(emit)(search.id, "round_finished", {"round": 2, "best_speedup": 1.5, "best_node_id": 1})
    await database_sync_to_async(emit)(search.id, "search_status", {"status": "finished", "round": 2, "reason": ""})
    again = communicator(f"/ws/searches/{search.id}/?after={seen}", owner)
    assert (await again.connect())[0]
    assert [e["kind"] for e in await receive_all(again, 2)] == ["round_finished", "search_status"]
    await again.disconnect()


async def test_a_stranger_is_refused(stranger, search, production, no_layer):
    assert await refusal_code(communicator(f"/ws/searches/{search.id}/", stranger)) == REFUSED


async def test_an_anonymous_viewer_is_refused_in_production(search, production, no_layer):
    assert await refusal_code(communicator(f"/ws/searches/{search.id}/")) == REFUSED


async def test_a_missing_search_is_refused(owner, production, no_layer):
    assert await refusal_code(communicator("/ws/searches/999999/", owner)) == REFUSED


async def test_a_foreign_origin_is_refused(owner, search, production, no_layer):
    from kernelweb.asgi import application

    comm = WebsocketCommunicator(application, f"/ws/searches/{search.id}/", headers=[(b"origin", b"http://evil.example")])
    comm.scope["user"] = owner
    connected, _ = await comm.connect()
    assert not connected


async def test_local_mode_lets_the_local_users_session_watch_its_search(local_mode, no_layer):
    from search.local_user import local_user

    user = await database_sync_to_async(local_user)()
    search = await database_sync_to_async(lambda: make_finished_search(user))()
    comm = communicator(f"/ws/searches/{search.id}/", user)
    assert (await comm.connect())[0]
    assert (await comm.receive_json_from(timeout=5))["kind"] == "search_status"
    await comm.disconnect()


async def test_local_mode_refuses_an_anonymous_viewer_even_on_this_machine(local_mode, no_layer):
    """Another OS user on this host connects from 127.0.0.1 too: the address proves nothing."""
    from search.local_user import local_user

    search = await database_sync_to_async(lambda: make_finished_search(local_user()))()
    comm = communicator(f"/ws/searches/{search.id}/", client="127.0.0.1")
    assert await refusal_code(comm) == REFUSED
