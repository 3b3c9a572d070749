"""DjangoStore keeps the engine's Store promises on the database and streams every change."""

import pytest

from search.engine.types import Node as EngineNode
from search.engine.types import Usage
from search.models import Node, Search, SearchEvent
from search.store import DjangoStore
from tests.test_tasks_search_run import new_search


@pytest.fixture
def store(owner):
    search = new_search(owner)
    Search.objects.filter(id=search.id).update(status="running")
    return DjangoStore(search.id, claim=0)


def kinds(store) -> list[str]:
    return list(SearchEvent.objects.filter(search_id=store.search_id).values_list("kind", flat=True))


def test_add_node_assigns_an_id_and_streams_node_added(store):
    root = store.add_node(EngineNode(kind="reference", round=0, key="r0", source="ref"))
    assert root.id == Node.objects.get(search_id=store.search_id, key="r0").id
    assert kinds(store)[-1] == "node_added"


def test_adding_a_known_key_returns_the_stored_node_without_a_duplicate(store):
    root = store.add_node(EngineNode(kind="reference", round=0, key="r0", source="ref"))
    done = EngineNode(kind="kernel", round=1, key="r1/k0", parent_id=root.id, source="a")
    done = store.add_node(done)
    done.status, done.speedup = "correct", 2.0
    store.update_node(done)
    again = store.add_node(EngineNode(kind="kernel", round=1, key="r1/k0", parent_id=root.id, source="other"))
    assert (again.id, again.status, again.speedup, again.source) == (done.id, "correct", 2.0, "a")
    assert Node.objects.filter(search_id=store.search_id).count() == 2
    assert kinds(store).count("node_added") == 2


def test_update_node_saves_the_verdict_and_usage_and_streams_node_updated(store):
    node = store.add_node(EngineNode(kind="kernel", round=1, key="k", source="s"))
    node.status, node.verdict, node.error = "incorrect", {"verdict": "incorrect", "checks": []}, "bad\nmore"
    node.usage = Usage("gpt-x", 100, 50, 0.02)
    store.update_node(node)
    row = Node.objects.get(id=node.id)
    assert (row.status, row.verdict["verdict"], row.model, row.input_tokens, row.cost_usd) == (
        "incorrect", "incorrect", "gpt-x", 100, 0.02)
    last = SearchEvent.objects.filter(search_id=store.search_id).last()
    assert last.kind == "node_updated" and last.payload["node"]["error"] == "bad"  # first line only
    assert [n.usage for n in store.nodes()] == [Usage("gpt-x", 100, 50, 0.02)]


def test_summary_events_are_kept_on_the_search_row(store):
    node = store.add_node(EngineNode(kind="kernel", round=1, key="k", source="s"))
    store.emit("round_started", {"round": 3})
    store.emit("best_changed", {"node_id": node.id, "speedup": 2.0, "speedup_vs_compile": 1.1})
    store.emit("costs", {"candidates": 7, "correct": 2, "input_tokens": 10, "output_tokens": 5,
                         "cost_usd": 0.5, "gpu_seconds": 3.0})
    search = Search.objects.get(id=store.search_id)
    assert (search.round, search.best_node_id, search.candidates, search.correct, search.cost_usd) == (
        3, node.id, 7, 2, 0.5)


def test_checkpoint_round_trips_and_cancel_is_read_from_the_row(store):
    assert store.load_checkpoint() is None
    store.save_checkpoint({"round": 2, "elapsed_s": 1.5})
    assert store.load_checkpoint() == {"round": 2, "elapsed_s": 1.5}
    assert not store.cancel_requested()
    Search.objects.filter(id=store.search_id).update(cancel_requested=True)
    assert store.cancel_requested()


def test_the_listener_sees_every_event_after_it_is_stored(store):
    seen = []
    store.listener = lambda event: seen.append((event.id is not None, event.kind))
    store.add_node(EngineNode(kind="reference", round=0, key="r0"))
    store.emit("round_started", {"round": 1})
    assert seen == [(True, "node_added"), (True, "round_started")]
