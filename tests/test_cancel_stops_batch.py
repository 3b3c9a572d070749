"""Cancel stops the batch in flight: the runner's worker running a candidate is killed, the
candidates after it are not started, and the search ends `cancelled` (not after the batch)."""

from __future__ import annotations

import threading
import time

import pytest

from search.engine.types import Idea, Implementation, SearchConfig, Usage
from search.execution import claim_queued, execute_search
from search.models import Node, Search
from search.services import cancel_search, create_search
from tests.fixtures.runner import candidate_source
from tests.fixtures.web import SOFTMAX_REFERENCE
from tests.test_tasks_search_run import INFO

pytestmark = pytest.mark.django_db(transaction=True)

SLEEPER = '''import time
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(600)  # far beyond any test: only a kill ends it
        return torch.softmax(x, dim=-1)
'''


class Sleepers:
    """One idea, implemented as candidates that never finish on their own."""

    name = "test"

    def __init__(self, source: str = SLEEPER) -> None:
        self.source = source

    def propose_ideas(self, ctx, k):
        return [Idea("sleep", "other")], Usage("test", 1, 1, 0.0)

    def implement(self, ctx, parent, idea, m):
        return [Implementation(self.source + f"# copy {j} {time.time()}\n") for j in range(m)]


def wait_until(condition, limit_s: float) -> bool:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


def cancel_while_evaluating(owner, proposer, impls: int) -> tuple[list[str], list[Node]]:
    """Run a search with `proposer` in a thread, cancel it once its batch is under way, and
    return (the outcome, its kernel nodes)."""
    config = SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=impls, device="cpu", timeout_s=900.0,
                          use_library=False, compile_baseline=False)
    search = create_search(owner, SOFTMAX_REFERENCE, config, INFO)
    outcome: list[str] = []
    run = threading.Thread(target=lambda: outcome.append(
        execute_search(search.id, claim_queued(search.id), proposer=proposer)))
    run.start()
    try:
        assert wait_until(lambda: Node.objects.filter(search=search, kind="kernel", status="compiling").exists(),
                          120), "the batch never started"
        time.sleep(3)  # the first worker is up: building, or sleeping in forward()
        cancel_search(Search.objects.get(id=search.id))
        run.join(timeout=120)  # a batch left to run would take many minutes
        assert not run.is_alive(), "the batch was not interrupted"
    finally:
        if run.is_alive():
            Search.objects.filter(id=search.id).update(cancel_requested=True)
            run.join(timeout=900)
    return outcome, list(Node.objects.filter(search=search, kind="kernel").order_by("key"))


@pytest.fixture
def local_runner(settings, runner_cache):
    settings.RUNNER_CACHE_DIR = str(runner_cache)
    settings.RUNNER_REMOTE = False
    settings.SEARCH_CANCEL_POLL_S = 0.2


def test_cancel_kills_the_running_candidate_and_skips_the_rest(owner, local_runner):
    outcome, kernels = cancel_while_evaluating(owner, Sleepers(), impls=3)
    assert outcome == ["cancelled"]
    assert len(kernels) == 3
    assert all("the search was cancelled" in k.error for k in kernels), [k.error for k in kernels]


@pytest.mark.slow
def test_cancel_kills_the_builds_in_flight(owner, local_runner):
    outcome, kernels = cancel_while_evaluating(owner, Sleepers(candidate_source("softmax_cpp")), impls=2)
    assert outcome == ["cancelled"]
    assert all("the search was cancelled" in k.error for k in kernels), [k.error for k in kernels]
