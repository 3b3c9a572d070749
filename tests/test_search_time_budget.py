"""A search's time budget ends the batch in flight: the candidate still running when the budget
runs out is killed, the rest are not started, each says the budget ran out (not evaluated, not
counted as evaluated), and the search finishes for that reason instead of after its slowest
candidate."""

from __future__ import annotations

import threading

import pytest

from search.engine.types import SearchConfig
from search.execution import claim_queued, execute_search
from search.models import Node, Search
from search.services import create_search
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_cancel_stops_batch import Sleepers
from tests.test_tasks_search_run import INFO

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def local_runner(settings, runner_cache):
    settings.RUNNER_CACHE_DIR = str(runner_cache)
    settings.RUNNER_REMOTE = False


def test_the_time_budget_stops_a_candidate_that_never_finishes(owner, local_runner):
    config = SearchConfig(rounds=2, ideas_per_round=1, impls_per_idea=2, device="cpu", timeout_s=900.0,
                          use_library=False, compile_baseline=False, max_wall_s=20.0)
    search = create_search(owner, SOFTMAX_REFERENCE, config, INFO)
    outcome: list[str] = []
    run = threading.Thread(target=lambda: outcome.append(
        execute_search(search.id, claim_queued(search.id), proposer=Sleepers())))
    run.start()
    run.join(timeout=180)  # each candidate sleeps 600 s: only the budget can end this
    try:
        assert not run.is_alive(), "the batch ran past the search's time budget"
    finally:
        if run.is_alive():
            Search.objects.filter(id=search.id).update(cancel_requested=True)
            run.join(timeout=900)
    search.refresh_from_db()
    assert outcome == ["finished"] and search.status_reason == "max_wall_s", (
        outcome, search.status_reason, [k.error for k in Node.objects.filter(search=search)])
    kernels = list(Node.objects.filter(search=search, kind="kernel"))
    assert len(kernels) == 2  # round 2 never started
    assert all("time budget ran out" in k.error for k in kernels), [k.error for k in kernels]
    # Not judged, so not counted as evaluated: the search evaluated nothing.
    assert [k.status for k in kernels] == ["failed", "failed"] and search.candidates == 0
