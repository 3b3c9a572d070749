"""Accounts: sign-up, login, logout, and API tokens made on the token page."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from search.api_auth import hash_token
from search.models import ApiToken

pytestmark = pytest.mark.django_db


@pytest.fixture
def signup_open(settings):
    settings.SIGNUP_OPEN = True
    return settings


def test_sign_up_is_closed_unless_the_setting_opens_it(production, client):
    response = client.post("/accounts/signup/", {"username": "ada", "password1": "a-long-pass-42x",
                                                 "password2": "a-long-pass-42x"})
    assert response.status_code == 403 and "Sign-up is closed" in response.content.decode()
    assert not get_user_model().objects.filter(username="ada").exists()
    assert 'href="/accounts/signup/"' not in client.get("/accounts/login/").content.decode()


def test_sign_up_creates_an_account_and_logs_it_in(production, signup_open, client):
    response = client.post("/accounts/signup/", {"username": "ada", "password1": "a-long-pass-42x",
                                                 "password2": "a-long-pass-42x"})
    assert response.status_code == 302 and response["Location"] == "/"
    assert get_user_model().objects.filter(username="ada").exists()
    assert client.get("/").status_code == 200


def test_sign_up_refuses_the_single_user_name(production, signup_open, client):
    response = client.post("/accounts/signup/", {"username": "local", "password1": "a-long-pass-42x",
                                                 "password2": "a-long-pass-42x"})
    assert response.status_code == 400
    assert not get_user_model().objects.filter(username="local").exists()


def test_login_and_logout(production, owner, client):
    assert client.get("/accounts/login/").status_code == 200
    response = client.post("/accounts/login/", {"username": "owner", "password": "owner-pass-123"})
    assert response.status_code == 302
    assert client.get("/searches/").status_code == 200
    client.post("/accounts/logout/")
    assert client.get("/searches/").status_code == 302


def test_a_wrong_password_is_refused(production, owner, client):
    response = client.post("/accounts/login/", {"username": "owner", "password": "nope"})
    assert response.status_code == 200
    assert client.get("/searches/").status_code == 302


def test_the_token_page_shows_a_new_token_once_and_stores_its_hash(owner_client, owner):
    response = owner_client.post("/accounts/token/", {"action": "create", "name": "ci"})
    token = response.context["new_token"]
    assert token in response.content.decode()
    row = ApiToken.objects.get(user=owner)
    assert row.name == "ci" and row.token_hash == hash_token(token) and token not in row.token_hash
    assert token not in owner_client.get("/accounts/token/").content.decode()


def test_a_token_from_the_page_opens_the_api(owner_client, finished_search):
    token = owner_client.post("/accounts/token/", {"action": "create"}).context["new_token"]
    script = Client(headers={"Authorization": f"Bearer {token}"})
    response = script.get(f"/api/searches/{finished_search.id}")
    assert response.status_code == 200 and response.json()["id"] == finished_search.id


def test_revoking_all_removes_every_token(owner_client, owner):
    owner_client.post("/accounts/token/", {"action": "create"})
    owner_client.post("/accounts/token/", {"action": "revoke_all"})
    assert not ApiToken.objects.filter(user=owner).exists()


def test_revoking_one_token_keeps_the_others(owner_client, owner):
    owner_client.post("/accounts/token/", {"action": "create", "name": "ci"})
    owner_client.post("/accounts/token/", {"action": "create", "name": "laptop"})
    ci = ApiToken.objects.get(user=owner, name="ci")
    owner_client.post("/accounts/token/", {"action": "revoke", "token": ci.id})
    assert list(ApiToken.objects.filter(user=owner).values_list("name", flat=True)) == ["laptop"]


def test_a_user_cannot_revoke_another_users_token(owner_client, stranger):
    from search.api_auth import create_token

    create_token(stranger, name="theirs")
    theirs = ApiToken.objects.get(user=stranger)
    owner_client.post("/accounts/token/", {"action": "revoke", "token": theirs.id})
    assert ApiToken.objects.filter(id=theirs.id).exists()


def test_the_token_page_makes_a_named_read_token_that_expires(owner_client, owner):
    owner_client.post("/accounts/token/", {"action": "create", "name": "dash", "scope": "read",
                                           "expires_days": "7"})
    row = ApiToken.objects.get(user=owner)
    assert row.name == "dash" and row.scope == "read" and row.expires is not None


def test_the_token_page_refuses_a_bad_lifetime_with_the_number(owner_client, owner):
    response = owner_client.post("/accounts/token/", {"action": "create", "expires_days": "-3"})
    assert response.status_code == 422 and "not -3" in response.content.decode()
    assert not ApiToken.objects.exists()


def test_the_token_page_needs_login(anonymous_client):
    assert anonymous_client.get("/accounts/token/").status_code == 302
