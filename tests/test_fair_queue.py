"""Bob's searches cannot starve Alice's: the queue is claimed round-robin by owner, and one
owner runs at most SEARCH_MAX_RUNNING_PER_USER searches at once."""

from __future__ import annotations

import pytest
from django.utils import timezone

from search.engine.types import SearchConfig
from search.models import Search
from search.quotas import claim_next
from search.services import create_search
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_tasks_search_run import INFO

pytestmark = pytest.mark.django_db


def queue(user, title: str) -> Search:
    return create_search(user, SOFTMAX_REFERENCE, SearchConfig(device="cpu"), INFO, title=title)


def finish(search_id: int) -> None:
    Search.objects.filter(id=search_id).update(status="finished", finished=timezone.now())


def title(claimed: tuple[int, int] | None) -> str | None:
    return Search.objects.get(id=claimed[0]).title if claimed else None


def test_alices_search_runs_beside_bobs_instead_of_after_all_of_them(alice, bob, settings):
    settings.SEARCH_MAX_RUNNING_PER_USER = 1
    for i in range(3):
        queue(bob, f"bob{i}")
    queue(alice, "alice0")
    assert title(first := claim_next()) == "bob0"
    assert title(claim_next()) == "alice0"  # Bob is at his limit: Alice's turn, not Bob's next
    assert claim_next() is None  # both at their limit; a worker stays free rather than unfair
    finish(first[0])
    assert title(claim_next()) == "bob1"


def test_owners_take_turns_when_both_may_run(alice, bob, settings):
    settings.SEARCH_MAX_RUNNING_PER_USER = 2
    for i in range(3):
        queue(bob, f"bob{i}")
    for i in range(2):
        queue(alice, f"alice{i}")
    order = []
    for _ in range(5):
        claimed = claim_next()
        order.append(title(claimed))
        finish(claimed[0])  # one worker: each search ends before the next is claimed
    assert order == ["bob0", "alice0", "bob1", "alice1", "bob2"]


def test_a_claimed_search_is_running_and_claimed_once(alice):
    search = queue(alice, "only")
    assert claim_next() == (search.id, 0)
    search.refresh_from_db()
    assert search.status == "running" and claim_next() is None


def test_the_task_runs_the_queue_in_fair_order(alice, bob, settings, monkeypatch):
    """One worker's task keeps claiming until nothing may run; the order is the fair one."""
    import search.tasks as tasks

    settings.SEARCH_MAX_RUNNING_PER_USER = 1
    ran: list[str] = []

    def run(search_id: int, claim: int) -> str:  # stands in for the engine: finish at once
        ran.append(Search.objects.get(id=search_id).title)
        finish(search_id)
        return "finished"

    monkeypatch.setattr(tasks, "execute_search", run)
    first = queue(bob, "bob0")
    queue(bob, "bob1")
    queue(alice, "alice0")
    tasks.run_search_task.call_local(first.id)
    assert ran == ["bob0", "alice0", "bob1"]
