"""GET /api/searches/{id}, /events, /nodes/{id} and the listing: shapes and who may read them."""

import pytest

from search.models import SearchEvent


def test_it_returns_the_contract_fields_of_the_owners_search(owner_client, finished_search):
    response = owner_client.get(f"/api/searches/{finished_search.id}")
    assert response.status_code == 200
    data = response.json()
    assert {"id", "status", "round", "best", "nodes", "costs"} <= set(data)
    assert data["id"] == finished_search.id
    assert data["status"] == "finished"
    assert data["round"] == 1
    assert data["best"] == {"node_id": finished_search.best_node_id, "speedup": 1.5,
                            "speedup_vs_compile": 1.2, "speedup_ci": None,
                            "speedup_vs_compile_ci": None, "noisy": False}
    assert data["costs"]["candidates"] == 3 and data["costs"]["correct"] == 1
    kinds = [n["kind"] for n in data["nodes"]]
    assert kinds.count("kernel") == 3 and kinds.count("idea") == 2 and kinds[0] == "reference"
    assert "source" not in data["nodes"][0]  # sources are fetched per node


def test_it_answers_404_for_another_users_search(stranger_client, finished_search):
    assert stranger_client.get(f"/api/searches/{finished_search.id}").status_code == 404


def test_it_answers_401_to_an_anonymous_viewer(anonymous_client, finished_search):
    response = anonymous_client.get(f"/api/searches/{finished_search.id}")
    assert response.status_code == 401
    assert "Bearer" in response.json()["detail"]


def test_it_answers_404_for_a_missing_search(owner_client, db):
    assert owner_client.get("/api/searches/999999").status_code == 404


def test_it_lists_only_the_callers_searches(owner_client, finished_search, stranger):
    from tests.fixtures.web import make_finished_search

    make_finished_search(stranger)
    ids = [s["id"] for s in owner_client.get("/api/searches").json()]
    assert ids == [finished_search.id]


def test_it_returns_events_after_the_given_id_in_order(owner_client, finished_search):
    all_events = owner_client.get(f"/api/searches/{finished_search.id}/events").json()
    assert [e["id"] for e in all_events] == sorted(e["id"] for e in all_events)
    assert all_events[0]["kind"] == "search_status"
    cut = all_events[3]["id"]
    later = owner_client.get(f"/api/searches/{finished_search.id}/events?after={cut}").json()
    assert [e["id"] for e in later] == [e["id"] for e in all_events[4:]]
    assert SearchEvent.objects.filter(search=finished_search).count() == len(all_events)


def test_it_refuses_a_strangers_request_for_events(stranger_client, finished_search):
    assert stranger_client.get(f"/api/searches/{finished_search.id}/events").status_code == 404


def test_it_returns_a_node_with_source_parent_source_and_full_verdict(owner_client, finished_search):
    best = finished_search.best_node
    data = owner_client.get(f"/api/nodes/{best.id}").json()
    assert "class ModelNew" in data["source"]
    assert "class Model(" in data["parent_source"] or data["parent_source"] == ""
    assert data["verdict"]["verdict"] == "correct"
    assert [c["name"] for c in data["verdict"]["checks"]] == ["correctness", "inputs_unchanged", "roofline_floor"]
    assert data["speedup"] == 1.5


def test_it_answers_404_for_another_users_node(stranger_client, finished_search):
    assert stranger_client.get(f"/api/nodes/{finished_search.best_node_id}").status_code == 404


@pytest.mark.parametrize("path", ["/api/searches/abc", "/api/nodes/abc"])
def test_it_rejects_non_numeric_ids(owner_client, db, path):
    assert owner_client.get(path).status_code in (404, 422)


def test_local_mode_lets_the_local_users_session_read_its_search(client, local_mode, db):
    from search.local_user import local_user
    from tests.fixtures.web import make_finished_search

    search = make_finished_search(local_user())
    client.force_login(local_user())
    assert client.get(f"/api/searches/{search.id}").status_code == 200


def test_local_mode_treats_a_request_without_the_session_as_anonymous(client, local_mode, db):
    from search.local_user import local_user
    from tests.fixtures.web import make_finished_search

    search = make_finished_search(local_user())
    for address in ("203.0.113.5", "127.0.0.1", "::1"):
        assert client.get(f"/api/searches/{search.id}", REMOTE_ADDR=address).status_code == 401
        assert client.get(f"/searches/{search.id}/", REMOTE_ADDR=address).status_code == 302
