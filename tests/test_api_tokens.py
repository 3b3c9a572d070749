"""Per-user API tokens: Bearer authentication for scripts, stored hashed, CSRF for sessions."""

from django.test import Client

from search.api_auth import create_token, user_for_token
from search.models import ApiToken


def test_a_token_reads_its_owners_search(token_client, finished_search):
    assert token_client.get(f"/api/searches/{finished_search.id}").status_code == 200


def test_a_token_does_not_read_another_users_search(stranger, production, finished_search):
    client = Client(headers={"Authorization": f"Bearer {create_token(stranger)}"})
    assert client.get(f"/api/searches/{finished_search.id}").status_code == 404


def test_a_wrong_token_is_refused(production, finished_search):
    client = Client(headers={"Authorization": "Bearer kw_not-a-real-token"})
    assert client.get(f"/api/searches/{finished_search.id}").status_code == 401


def test_tokens_are_stored_hashed_and_shown_once(owner):
    token = create_token(owner)
    row = ApiToken.objects.get(user=owner)
    assert token not in (row.token_hash, row.prefix) and row.token_hash != token
    assert token.startswith(row.prefix)
    assert user_for_token(token) == owner
    row.refresh_from_db()
    assert row.last_used is not None


def test_an_inactive_users_token_is_refused(owner):
    token = create_token(owner)
    owner.is_active = False
    owner.save()
    assert user_for_token(token) is None


def test_a_session_post_without_csrf_token_is_refused(owner, production, finished_search):
    client = Client(enforce_csrf_checks=True)
    client.force_login(owner)
    assert client.post(f"/api/searches/{finished_search.id}/share").status_code == 403


def test_a_token_post_needs_no_csrf_token(owner_token, production, finished_search):
    client = Client(enforce_csrf_checks=True, headers={"Authorization": f"Bearer {owner_token}"})
    assert client.post(f"/api/searches/{finished_search.id}/share").status_code == 200


def test_the_openapi_schema_lists_the_contract_paths(client, db):
    paths = client.get("/api/openapi.json").json()["paths"]
    for path in ("/api/searches", "/api/searches/{search_id}", "/api/searches/{search_id}/cancel",
                 "/api/searches/{search_id}/share", "/api/searches/{search_id}/events", "/api/nodes/{node_id}"):
        assert path in paths, path
    assert client.get("/api/docs").status_code == 200


def test_the_api_token_command_prints_a_working_token(owner, production, finished_search):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("api_token", "owner", stdout=out)
    client = Client(headers={"Authorization": f"Bearer {out.getvalue().strip()}"})
    assert client.get(f"/api/searches/{finished_search.id}").status_code == 200
