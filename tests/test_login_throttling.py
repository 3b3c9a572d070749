"""Failed logins are throttled per account and per address: after 40 wrong passwords even the
right one is refused, with a message that says why and for how long."""

from __future__ import annotations

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def quick_hashes(settings):
    """Forty logins with the real hasher take seconds; the throttle is what is tested."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def attempt(client: Client, username: str, password: str, address: str = "198.51.100.7"):
    return client.post("/accounts/login/", {"username": username, "password": password},
                       REMOTE_ADDR=address)


def test_forty_wrong_passwords_then_the_right_one_is_refused(production, alice):
    bob = Client()
    codes = [attempt(bob, "alice", f"guess-{i}").status_code for i in range(40)]
    assert codes[:5] == [200] * 5 and set(codes[5:]) == {429}
    response = attempt(bob, "alice", "alice-pass-123")
    assert response.status_code == 429
    text = response.content.decode()
    assert "Too many failed logins for this account" in text and "the limit is 5" in text
    assert "Try again in 15 minute(s)" in text
    assert bob.get("/searches/").status_code == 302  # not logged in


def test_the_account_lock_holds_from_any_address(production, alice):
    for i in range(5):
        attempt(Client(), "alice", f"guess-{i}", address=f"203.0.113.{i}")
    assert attempt(Client(), "alice", "alice-pass-123", address="192.0.2.1").status_code == 429


def test_one_address_guessing_many_accounts_is_stopped(production, alice, bob):
    attacker = Client()
    for i in range(20):
        attempt(attacker, f"user{i}", "password")
    response = attempt(attacker, "bob", "bob-pass-123")
    assert response.status_code == 429 and "your address" in response.content.decode()
    assert attempt(Client(), "bob", "bob-pass-123", address="192.0.2.50").status_code == 302


def test_a_right_password_before_the_limit_clears_the_accounts_count(production, alice):
    client = Client()
    for i in range(4):
        attempt(client, "alice", f"guess-{i}")
    assert attempt(client, "alice", "alice-pass-123").status_code == 302
    for i in range(4):
        attempt(Client(), "alice", f"guess-again-{i}")
    assert attempt(Client(), "alice", "alice-pass-123", address="192.0.2.9").status_code == 302


def test_the_window_comes_from_the_settings(production, alice, settings):
    settings.LOGIN_MAX_FAILURES_PER_ACCOUNT = 2
    settings.LOGIN_WINDOW_S = 120
    for i in range(2):
        attempt(Client(), "alice", f"guess-{i}")
    text = attempt(Client(), "alice", "alice-pass-123").content.decode()
    assert "2 in the last 2 minutes; the limit is 2" in text and "Try again in 2 minute(s)" in text
