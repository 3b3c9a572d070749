"""POST /api/searches/{id}/cancel, /share and revoking: effects, events and permissions."""

from search.models import Search, SearchEvent
from tests.fixtures.web import make_finished_search


def test_it_cancels_a_queued_search_at_once(owner_client, owner):
    search = make_finished_search(owner, status="queued")
    Search.objects.filter(id=search.id).update(status="queued")
    response = owner_client.post(f"/api/searches/{search.id}/cancel")
    assert response.status_code == 200
    assert response.json()["status"] == "cancelled"
    last = SearchEvent.objects.filter(search=search).last()
    assert (last.kind, last.payload["status"]) == ("search_status", "cancelled")


def test_it_asks_a_running_search_to_stop_at_its_next_evaluation(owner_client, owner):
    search = make_finished_search(owner, status="running")
    response = owner_client.post(f"/api/searches/{search.id}/cancel")
    assert response.status_code == 200
    search.refresh_from_db()
    assert search.status == "running" and search.cancel_requested


def test_it_leaves_a_finished_search_finished_on_cancel(owner_client, finished_search):
    assert owner_client.post(f"/api/searches/{finished_search.id}/cancel").json()["status"] == "finished"


def test_it_refuses_to_cancel_another_users_search(stranger_client, owner):
    search = make_finished_search(owner, status="running")
    assert stranger_client.post(f"/api/searches/{search.id}/cancel").status_code == 404
    search.refresh_from_db()
    assert not search.cancel_requested


def test_it_shares_with_an_unguessable_url_that_stays_the_same(owner_client, finished_search):
    first = owner_client.post(f"/api/searches/{finished_search.id}/share")
    assert first.status_code == 200
    url = first.json()["url"]
    finished_search.refresh_from_db()
    assert url.endswith(f"/s/{finished_search.share_slug}") and url.startswith("http")
    assert len(finished_search.share_slug) >= 24
    assert owner_client.post(f"/api/searches/{finished_search.id}/share").json()["url"] == url


def test_it_revokes_a_share_and_a_new_share_gets_a_new_url(owner_client, finished_search):
    url = owner_client.post(f"/api/searches/{finished_search.id}/share").json()["url"]
    assert owner_client.delete(f"/api/searches/{finished_search.id}/share").status_code == 204
    finished_search.refresh_from_db()
    assert finished_search.share_slug is None
    assert owner_client.post(f"/api/searches/{finished_search.id}/share").json()["url"] != url


def test_it_revokes_through_post_unshare_too(owner_client, shared_search):
    assert owner_client.post(f"/api/searches/{shared_search.id}/unshare").status_code == 204
    shared_search.refresh_from_db()
    assert shared_search.share_slug is None


def test_it_refuses_to_share_or_revoke_another_users_search(stranger_client, shared_search):
    slug = shared_search.share_slug
    assert stranger_client.post(f"/api/searches/{shared_search.id}/share").status_code == 404
    assert stranger_client.delete(f"/api/searches/{shared_search.id}/share").status_code == 404
    shared_search.refresh_from_db()
    assert shared_search.share_slug == slug


def test_an_anonymous_caller_cannot_share(anonymous_client, finished_search):
    assert anonymous_client.post(f"/api/searches/{finished_search.id}/share").status_code == 401
