"""API tokens are named, scoped, expiring and revoked one by one: a read token cannot start,
cancel or share a search; an expired or revoked token opens nothing."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.utils import timezone

from search.api_auth import create_token, revoke_token
from search.models import ApiToken
from tests.fixtures.web import SOFTMAX_REFERENCE

pytestmark = pytest.mark.django_db


def script(token: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {token}"})


def test_a_read_token_reads_but_cannot_start_cancel_or_share(production, finished_search):
    token = create_token(finished_search.owner, name="dashboard", scope="read")
    client = script(token)
    assert client.get(f"/api/searches/{finished_search.id}").status_code == 200
    started = client.post("/api/searches", {"reference": SOFTMAX_REFERENCE}, content_type="application/json")
    assert started.status_code == 403 and "scope 'read'" in started.json()["detail"]
    assert "dashboard" in started.json()["detail"]
    assert client.post(f"/api/searches/{finished_search.id}/cancel").status_code == 403
    assert client.post(f"/api/searches/{finished_search.id}/share").status_code == 403
    finished_search.refresh_from_db()
    assert finished_search.share_slug is None


def test_a_write_token_may_share(owner, production, finished_search):
    client = script(create_token(owner, scope="write"))
    assert client.post(f"/api/searches/{finished_search.id}/share").status_code == 200


def test_an_expired_token_is_refused(owner, production, finished_search):
    token = create_token(owner, expires_in_days=1)
    assert script(token).get(f"/api/searches/{finished_search.id}").status_code == 200
    ApiToken.objects.update(expires=timezone.now() - timedelta(seconds=1))
    assert script(token).get(f"/api/searches/{finished_search.id}").status_code == 401


def test_revoking_one_token_leaves_the_other_working(owner, production, finished_search):
    old, new = create_token(owner, name="old"), create_token(owner, name="new")
    assert revoke_token(owner, ApiToken.objects.get(name="old").id)
    assert script(old).get(f"/api/searches/{finished_search.id}").status_code == 401
    assert script(new).get(f"/api/searches/{finished_search.id}").status_code == 200


def test_bob_cannot_revoke_alices_token(alice, bob):
    create_token(alice, name="alice's")
    assert not revoke_token(bob, ApiToken.objects.get().id)
    assert ApiToken.objects.filter(user=alice).exists()


def test_a_bad_scope_or_lifetime_is_refused_with_the_value(owner):
    with pytest.raises(ValueError, match="'admin'"):
        create_token(owner, scope="admin")
    with pytest.raises(ValueError, match="not 0"):
        create_token(owner, expires_in_days=0)


def test_the_command_makes_lists_and_revokes_named_scoped_tokens(owner, production, finished_search):
    out = StringIO()
    call_command("api_token", "owner", "--name", "ci", "--scope", "read", "--expires-days", "30", stdout=out)
    token = out.getvalue().strip()
    assert script(token).get(f"/api/searches/{finished_search.id}").status_code == 200
    listing = StringIO()
    call_command("api_token", "owner", "--list", stdout=listing)
    row = ApiToken.objects.get()
    assert f"{row.id}\t{row.prefix}…\tread\texpires " in listing.getvalue() and "\tci" in listing.getvalue()
    call_command("api_token", "owner", "--revoke", str(row.id), stdout=StringIO())
    assert script(token).get(f"/api/searches/{finished_search.id}").status_code == 401
    with pytest.raises(CommandError, match="no token with id"):
        call_command("api_token", "owner", "--revoke", str(row.id), stdout=StringIO())
