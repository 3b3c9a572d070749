"""Single-user mode belongs to the OS user who started kernelweb, not to an address: another
OS user on the same host (or anything behind a proxy sending `Host: 127.0.0.1`) reaches the
server from 127.0.0.1 too, yet cannot act as the local user or mint its API token."""

from __future__ import annotations

import os
import stat
import subprocess
import tempfile
from pathlib import Path

import pytest

from search.local_user import key_path, local_user, login_key, login_link
from search.models import ApiToken

pytestmark = pytest.mark.django_db

LOOPBACK = {"REMOTE_ADDR": "127.0.0.1", "HTTP_HOST": "127.0.0.1"}


def test_another_os_user_on_this_host_is_anonymous(local_mode, client):
    response = client.get("/", **LOOPBACK)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")
    assert client.get("/api/searches", **LOOPBACK).status_code == 401


def test_another_os_user_cannot_mint_the_local_users_api_token(local_mode, client):
    local_user()
    response = client.post("/accounts/token/", {"action": "create"}, **LOOPBACK)
    assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert not ApiToken.objects.exists()


def test_a_guessed_key_is_refused(local_mode, client):
    login_key()
    response = client.get("/accounts/local/", {"key": "guessed"}, **LOOPBACK)
    assert response.status_code == 403 and "not valid" in response.content.decode()
    assert client.get("/", **LOOPBACK).status_code == 302


def test_the_printed_link_logs_the_browser_in_as_the_local_user(local_mode, client):
    response = client.get(login_link("http://127.0.0.1"), **LOOPBACK)
    assert response.status_code == 302 and response["Location"] == "/"
    assert client.get("/", **LOOPBACK).status_code == 200
    token = client.post("/accounts/token/", {"action": "create"}, **LOOPBACK).context["new_token"]
    assert ApiToken.objects.get().user == local_user() and token.startswith("kw_")


def test_the_link_redirects_only_within_the_site(local_mode, client):
    key = login_key()
    assert client.get("/accounts/local/", {"key": key, "next": "/searches/"})["Location"] == "/searches/"
    assert client.get("/accounts/local/", {"key": key, "next": "https://evil.example/"})["Location"] == "/"


def test_the_link_does_nothing_with_accounts_required(production, client):
    key = login_key()
    assert client.get("/accounts/local/", {"key": key}).status_code == 404


def test_the_key_is_readable_by_its_os_user_only(local_mode):
    login_key()
    assert stat.S_IMODE(os.stat(key_path()).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(key_path().parent).st_mode) == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="switching to another OS user needs root")
def test_another_os_user_cannot_read_the_key(local_mode):
    login_key()
    nobody = 65534
    denied = subprocess.run(["cat", str(key_path())], user=nobody, capture_output=True, text=True)
    assert denied.returncode != 0 and login_key() not in denied.stdout
    # The same command reads a file that is not private: the refusal above is the key's mode.
    control = Path(tempfile.mkdtemp())
    try:
        control.chmod(0o755)
        (control / "open").write_text("readable")
        (control / "open").chmod(0o644)
        readable = subprocess.run(["cat", str(control / "open")], user=nobody, capture_output=True, text=True)
        assert readable.stdout == "readable"
    finally:
        (control / "open").unlink()
        control.rmdir()


def test_the_local_link_command_prints_a_working_link(local_mode, client):
    from io import StringIO

    from django.core.management import call_command

    out = StringIO()
    call_command("local_link", "--base", "http://testserver", stdout=out)
    assert client.get(out.getvalue().strip()).status_code == 302
    assert client.get("/").status_code == 200


def test_the_local_link_command_refuses_with_accounts_required(production):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="single-user mode is off"):
        call_command("local_link")
