"""Crash resume: a search whose worker died (heartbeat gone stale) is re-claimed by exactly one
worker with one atomic UPDATE, resumed from its stored nodes, and the stale worker is fenced off."""

from datetime import timedelta

import pytest
from django.utils import timezone

from search.execution import claim_queued, execute_search, reclaim_stale
from search.models import Node, Search, SearchEvent
from search.store import DjangoStore
from search.tasks import resume_stale
from tests.test_tasks_search_run import TwoIdeas, evaluate_by_comment, new_search


class WorkerKilled(BaseException):
    """Stands for kill -9: nothing catches it, the search stays `running` as a dead worker leaves it."""


def make_stale(search: Search, seconds: int = 3600) -> None:
    Search.objects.filter(id=search.id).update(heartbeat=timezone.now() - timedelta(seconds=seconds))


@pytest.fixture
def running_search(owner):
    search = new_search(owner)
    claim_queued(search.id)
    return search


def test_a_stale_running_search_is_claimed_once(running_search):
    make_stale(running_search)
    assert reclaim_stale() == [(running_search.id, 1)]
    assert reclaim_stale() == []  # the claim refreshed its heartbeat
    running_search.refresh_from_db()
    assert running_search.resumes == 1 and running_search.status == "running"


def test_a_search_that_keeps_killing_its_worker_fails_after_the_last_resume(running_search, settings):
    settings.SEARCH_MAX_RESUMES = 2
    for claim in (1, 2):
        make_stale(running_search)
        assert reclaim_stale() == [(running_search.id, claim)]
    make_stale(running_search)
    assert reclaim_stale() == []
    running_search.refresh_from_db()
    assert running_search.status == "failed" and "died 3 times" in running_search.status_reason
    last = SearchEvent.objects.filter(search=running_search).order_by("-id").first()
    assert last.kind == "search_status" and last.payload["status"] == "failed"


def test_a_fresh_heartbeat_is_not_reclaimed(running_search, settings):
    settings.SEARCH_STALE_AFTER_S = 120
    make_stale(running_search, seconds=30)
    assert reclaim_stale() == []


def test_two_claimers_who_saw_the_same_stale_row_cannot_both_win(running_search):
    make_stale(running_search)
    seen = Search.objects.values_list("resumes", "heartbeat").get(id=running_search.id)
    # Both claimers issue the same conditional UPDATE for the row they read.
    wins = [Search.objects.filter(id=running_search.id, status="running", resumes=seen[0], heartbeat=seen[1])
            .update(resumes=seen[0] + 1, heartbeat=timezone.now()) for _ in range(2)]
    assert wins == [1, 0]


def test_a_killed_search_resumes_without_duplicating_nodes_and_finishes(running_search):
    class DiesInSecondBatch:
        batches = 0

        def __call__(self, reference, sources, config):
            self.batches += 1
            if self.batches == 2:
                raise WorkerKilled()
            return evaluate_by_comment(reference, sources, config)

    with pytest.raises(WorkerKilled):
        execute_search(running_search.id, 0, proposer=TwoIdeas(), evaluator=DiesInSecondBatch())
    running_search.refresh_from_db()
    assert running_search.status == "running"  # as a dead worker leaves it
    before = {n.key: n.id for n in Node.objects.filter(search=running_search)}
    evaluated_before = set(Node.objects.filter(search=running_search, kind="kernel", status="correct")
                           .values_list("key", flat=True))

    make_stale(running_search)
    [(search_id, claim)] = reclaim_stale()
    seen_by_evaluator: list[str] = []

    def remembering(reference, sources, config):
        seen_by_evaluator.extend(sources)
        return evaluate_by_comment(reference, sources, config)

    assert execute_search(search_id, claim, proposer=TwoIdeas(), evaluator=remembering) == "finished"
    after = {n.key: n.id for n in Node.objects.filter(search=running_search)}
    assert {k: after[k] for k in before} == before  # the same rows, no duplicates
    assert len(after) == Node.objects.filter(search=running_search).values("key").distinct().count()
    sources = dict(Node.objects.filter(search=running_search).values_list("key", "source"))
    assert not {sources[k] for k in evaluated_before} & set(seen_by_evaluator)  # nothing judged twice
    running_search.refresh_from_db()
    assert running_search.status == "finished" and running_search.resumes == 1
    reasons = [e.payload["reason"] for e in SearchEvent.objects.filter(search=running_search, kind="search_status")]
    assert "resumed after a worker stopped" in reasons


def test_the_stale_worker_is_fenced_off_after_a_reclaim(running_search):
    old_store = DjangoStore(running_search.id, claim=0)
    assert not old_store.cancel_requested()
    make_stale(running_search)
    reclaim_stale()
    old_store.heartbeat()
    assert old_store.cancel_requested()  # it stops at its next evaluation boundary
    heartbeat = Search.objects.get(id=running_search.id).heartbeat
    old_store.save_checkpoint({"round": 99})
    running_search.refresh_from_db()
    assert running_search.checkpoint != {"round": 99} and running_search.heartbeat == heartbeat


def test_the_periodic_task_queues_the_resumption(running_search, task_queue_in_memory):
    make_stale(running_search)
    assert resume_stale() == [running_search.id]
    pending = task_queue_in_memory.pending()
    assert [(t.name.split(".")[-1], t.args) for t in pending] == [("run_search_task", (running_search.id, 1))]
