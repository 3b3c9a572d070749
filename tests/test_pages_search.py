"""The search page, the list of searches, and the owner's controls (cancel, share, revoke)."""

from __future__ import annotations

import json

import pytest

from search.models import Search
from tests.fixtures.web import make_finished_search

pytestmark = pytest.mark.django_db


def page_data(response) -> dict:
    html = response.content.decode()
    start = html.index('<script id="page-data" type="application/json">') + len('<script id="page-data" type="application/json">')
    return json.loads(html[start:html.index("</script>", start)])


def test_the_page_embeds_every_event_and_the_stream_to_resume_from(owner_client, finished_search):
    response = owner_client.get(f"/searches/{finished_search.id}/")
    assert response.status_code == 200
    data = page_data(response)
    ids = [e["id"] for e in data["events"]]
    assert ids == sorted(ids) and len(ids) == finished_search.events.count()
    assert data["ws_path"] == f"/ws/searches/{finished_search.id}/"
    assert data["panel_url"] == f"/searches/{finished_search.id}/nodes/{{id}}/panel"
    kinds = {e["kind"] for e in data["events"]}
    assert {"node_added", "best_changed", "costs", "search_status"} <= kinds


def test_the_header_shows_best_speedups_and_counts(owner_client, finished_search):
    html = owner_client.get(f"/searches/{finished_search.id}/").content.decode()
    assert "1.50×" in html and "1.20×" in html
    assert 'id="stat-candidates">3 <small>1 correct' in html


def test_a_finished_search_has_no_cancel_button(owner_client, finished_search):
    html = owner_client.get(f"/searches/{finished_search.id}/").content.decode()
    assert 'id="cancel"' not in html


def test_another_users_search_is_not_found(stranger_client, finished_search):
    assert stranger_client.get(f"/searches/{finished_search.id}/").status_code == 404


def test_an_anonymous_viewer_is_sent_to_login(anonymous_client, finished_search):
    response = anonymous_client.get(f"/searches/{finished_search.id}/")
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]


def test_the_list_shows_only_the_users_own_searches(owner_client, finished_search, stranger):
    other = make_finished_search(stranger)
    html = owner_client.get("/searches/").content.decode()
    assert f'href="/searches/{finished_search.id}/"' in html
    assert f'href="/searches/{other.id}/"' not in html


def test_the_owner_cancels_a_running_search(owner_client, owner):
    search = make_finished_search(owner, status="running")
    html = owner_client.get(f"/searches/{search.id}/").content.decode()
    assert 'id="cancel"' in html
    response = owner_client.post(f"/searches/{search.id}/cancel")
    assert response.status_code == 302
    search.refresh_from_db()
    assert search.cancel_requested


def test_cancel_refuses_get_and_strangers(owner, stranger_client, owner_client):
    search = make_finished_search(owner, status="running")
    assert owner_client.get(f"/searches/{search.id}/cancel").status_code == 405
    assert stranger_client.post(f"/searches/{search.id}/cancel").status_code == 404
    search.refresh_from_db()
    assert not search.cancel_requested


def test_share_then_revoke(owner_client, finished_search):
    owner_client.post(f"/searches/{finished_search.id}/share")
    finished_search.refresh_from_db()
    slug = finished_search.share_slug
    assert slug and len(slug) >= 24
    html = owner_client.get(f"/searches/{finished_search.id}/").content.decode()
    assert f"/s/{slug}" in html and 'id="revoke"' in html
    owner_client.post(f"/searches/{finished_search.id}/revoke")
    assert Search.objects.get(id=finished_search.id).share_slug is None


def test_a_stranger_cannot_share_or_revoke(stranger_client, shared_search):
    assert stranger_client.post(f"/searches/{shared_search.id}/revoke").status_code == 404
    assert Search.objects.get(id=shared_search.id).share_slug == shared_search.share_slug
