"""Validation runs inside the request, so it is capped: per user and in all. Beyond the cap, and
beyond the per-user queue limit, a request gets 429 with the numbers and its reference back."""

from __future__ import annotations

import json
from contextlib import ExitStack

import pytest
from django.test import Client

from search.api_auth import create_token
from search.models import Search
from search.quotas import TooBusy, validation_slot
from search.services import create_search
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_pages_new_search import SETTINGS
from tests.test_tasks_search_run import INFO

pytestmark = pytest.mark.django_db


def start(user) -> object:
    client = Client(headers={"Authorization": f"Bearer {create_token(user)}"})
    return client.post("/api/searches", json.dumps({"reference": SOFTMAX_REFERENCE, "device": "cpu"}),
                       content_type="application/json")


def test_a_users_third_concurrent_validation_is_refused_with_the_numbers(alice, settings):
    settings.VALIDATION_MAX_PER_USER = 2
    with ExitStack() as held:
        held.enter_context(validation_slot(alice.pk))
        held.enter_context(validation_slot(alice.pk))
        with pytest.raises(TooBusy, match=r"already validating 2 references \(the limit is 2 at a time\)"):
            held.enter_context(validation_slot(alice.pk))
    with validation_slot(alice.pk):  # every slot is given back
        pass


def test_bobs_validations_do_not_use_alices_slots_but_count_towards_the_servers(alice, bob, settings):
    settings.VALIDATION_MAX_PER_USER = 2
    settings.VALIDATION_MAX_TOTAL = 3
    with ExitStack() as held:
        held.enter_context(validation_slot(bob.pk))
        held.enter_context(validation_slot(bob.pk))
        held.enter_context(validation_slot(alice.pk))
        with pytest.raises(TooBusy, match="The server is already validating 3 references"):
            held.enter_context(validation_slot(alice.pk))


def test_the_api_answers_429_and_gives_the_reference_back(alice, production, settings):
    settings.VALIDATION_MAX_PER_USER = 1
    with validation_slot(alice.pk):
        response = start(alice)
    assert response.status_code == 429
    assert "the limit is 1 at a time" in response.json()["detail"]
    assert response.json()["reference"] == SOFTMAX_REFERENCE
    assert not Search.objects.exists()


def test_the_page_answers_429_and_keeps_the_pasted_text(alice_client, alice, settings):
    settings.VALIDATION_MAX_PER_USER = 1
    with validation_slot(alice.pk):
        response = alice_client.post("/", {"reference": SOFTMAX_REFERENCE, **SETTINGS})
    assert response.status_code == 429
    assert "the limit is 1 at a time" in response.content.decode()
    assert "torch.softmax" in response.context["form"]["reference"].value()


def test_a_full_queue_is_refused_before_anything_runs(alice, production, settings):
    settings.SEARCH_MAX_QUEUED_PER_USER = 2
    from search.engine.types import SearchConfig

    for _ in range(2):
        create_search(alice, SOFTMAX_REFERENCE, SearchConfig(device="cpu"), INFO)
    response = start(alice)
    assert response.status_code == 429 and "2 searches waiting in the queue (the limit is 2)" in response.json()["detail"]
    assert Search.objects.count() == 2
