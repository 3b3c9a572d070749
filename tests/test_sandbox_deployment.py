"""A multi-user site refuses to start where candidates cannot be contained; single-user mode
starts, accepts it in verdicts and says so on the page."""

from __future__ import annotations

import os

import pytest
from django.core import checks

from search import sandbox_status

NOT_ROOT = (False, "the runner is not root")


@pytest.fixture
def uncontained(monkeypatch):
    monkeypatch.setattr(sandbox_status, "available", lambda: NOT_ROOT)
    monkeypatch.delenv("GPURUNNER_UNCONFINED", raising=False)


def test_a_multi_user_site_without_containment_fails_the_system_checks(settings, uncontained):
    settings.LOCAL_MODE = False
    errors = [e for e in checks.run_checks() if e.id == "kernelweb.E010"]
    assert len(errors) == 1 and errors[0].level == checks.ERROR
    assert "the runner is not root" in errors[0].msg
    assert "run the web server and task consumers as root" in errors[0].hint


def test_single_user_mode_starts_and_accepts_running_uncontained(settings, uncontained):
    settings.LOCAL_MODE = True
    assert not [e for e in checks.run_checks() if e.id == "kernelweb.E010"]
    sandbox_status.accept_in_single_user_mode()
    assert os.environ.pop("GPURUNNER_UNCONFINED") == "1"


@pytest.mark.django_db
def test_the_page_says_candidates_run_with_the_users_rights(settings, uncontained, client):
    from search.local_user import local_user

    settings.LOCAL_MODE = True
    client.force_login(local_user())  # as the browser that opened the printed login link
    page = client.get("/").content.decode()
    assert "not sandboxed" in page
    assert "Candidates run with your own rights on this machine" in page


def test_no_notice_where_candidates_are_contained(monkeypatch):
    monkeypatch.setattr(sandbox_status, "available", lambda: (True, "contained"))
    assert sandbox_status.sandbox_notice(None) == {"sandbox_notice": ""}
