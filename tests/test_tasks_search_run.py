"""A search driven through DjangoStore: statuses through emit(), the Search row's summary,
failures that never leave a search running, cancelling, and the kernel library.

The engine is the real one; the proposer and evaluator are small stand-ins written here, so
no model or runner is involved (the runner has its own tests; end to end: test_optimize_command).
"""

from typing import Any

import pytest

from search.engine.types import Idea, Implementation, SearchConfig, Usage
from search.execution import claim_queued, execute_search
from search.models import LibraryKernel, Node, Search, SearchEvent
from search.services import create_search
from tests.fixtures.web import SOFTMAX_REFERENCE, correct_verdict

INFO = {"ok": True, "device": "cpu", "input_shapes": [[8, 64]], "input_dtypes": ["float32"],
        "output_shapes": [[8, 64]], "output_dtypes": ["float32"], "operators": ["aten::_softmax"]}


class TwoIdeas:
    """Writes ideas `speed <n>`; each implementation's source states its speedup in a comment."""

    name = "test"

    def propose_ideas(self, ctx, k):
        return [Idea(f"speed {ctx.round + i + 1}", "memory") for i in range(k)], Usage("test", 10, 20, 0.01)

    def implement(self, ctx, parent, idea, m):
        speed = float(idea.text.split()[1])
        return [Implementation(f"# speed {speed + j / 10}\n# round {ctx.round}\nclass ModelNew: pass\n",
                               usage=Usage("test", 5, 5, 0.001))
                for j in range(m)]


def evaluate_by_comment(reference: str, sources: list[str], config: SearchConfig) -> list[dict[str, Any]]:
    """Verdicts read off each source's `# speed` comment: no code runs."""
    out = []
    for source in sources:
        first = source.splitlines()[0] if source else ""
        out.append(correct_verdict(float(first.split()[2])) if first.startswith("# speed") else correct_verdict(1.0))
    return out


def new_search(owner, **config) -> Search:
    cfg = SearchConfig(rounds=2, ideas_per_round=2, impls_per_idea=2, seeds_per_round=1, device="cpu",
                       use_library=False, **config)
    return create_search(owner, SOFTMAX_REFERENCE, cfg, INFO)


def statuses(search: Search) -> list[str]:
    return [e.payload["status"] for e in SearchEvent.objects.filter(search=search, kind="search_status")]


@pytest.fixture
def owner_search(owner):
    return new_search(owner)


def test_a_queued_search_runs_to_finished_with_its_best_kernel(owner_search):
    claim = claim_queued(owner_search.id)
    status = execute_search(owner_search.id, claim, proposer=TwoIdeas(), evaluator=evaluate_by_comment)
    assert status == "finished"
    owner_search.refresh_from_db()
    assert owner_search.status == "finished" and owner_search.finished is not None
    assert statuses(owner_search) == ["queued", "running", "finished"]
    assert owner_search.best_node.speedup == max(
        Node.objects.filter(search=owner_search, kind="kernel").values_list("speedup", flat=True))
    assert owner_search.candidates == Node.objects.filter(search=owner_search, kind="kernel", status="correct").count()
    assert owner_search.correct == owner_search.candidates > 0
    assert owner_search.input_tokens > 0 and owner_search.cost_usd > 0
    assert owner_search.round == 2


def test_every_stored_node_was_streamed_as_node_added(owner_search):
    execute_search(owner_search.id, claim_queued(owner_search.id), proposer=TwoIdeas(), evaluator=evaluate_by_comment)
    added = [e.payload["node"]["id"] for e in SearchEvent.objects.filter(search=owner_search, kind="node_added")]
    assert sorted(added) == list(Node.objects.filter(search=owner_search).values_list("id", flat=True))
    final = {e.payload["node"]["id"]: e.payload["node"]["status"]
             for e in SearchEvent.objects.filter(search=owner_search, kind="node_updated")}
    for node in Node.objects.filter(search=owner_search, kind="kernel"):
        assert final[node.id] == node.status == "correct"


def test_an_engine_error_ends_failed_with_the_message(owner_search):
    def engine_with_a_bug(*args, **kwargs):
        raise RuntimeError("engine bug")

    status = execute_search(owner_search.id, claim_queued(owner_search.id), proposer=TwoIdeas(),
                            evaluator=evaluate_by_comment, engine=engine_with_a_bug)
    owner_search.refresh_from_db()
    assert status == "failed" and owner_search.status == "failed"
    assert owner_search.status_reason == "RuntimeError: engine bug"
    assert statuses(owner_search)[-1] == "failed"


def test_a_cancel_request_stops_the_search_as_cancelled(owner_search):
    class CancelsAfterFirstBatch:
        calls = 0

        def __call__(self, reference, sources, config):
            self.calls += 1
            Search.objects.filter(id=owner_search.id).update(cancel_requested=True)
            return evaluate_by_comment(reference, sources, config)

    evaluator = CancelsAfterFirstBatch()
    status = execute_search(owner_search.id, claim_queued(owner_search.id), proposer=TwoIdeas(), evaluator=evaluator)
    owner_search.refresh_from_db()
    assert status == "cancelled" and owner_search.status == "cancelled"
    assert evaluator.calls == 1
    assert Node.objects.filter(search=owner_search, round=2).count() == 0


def test_a_cancelled_queued_search_is_never_claimed(owner_search):
    from search.services import cancel_search

    cancel_search(owner_search)
    assert claim_queued(owner_search.id) is None


def test_a_search_is_claimed_from_the_queue_once(owner_search):
    assert claim_queued(owner_search.id) == 0
    assert claim_queued(owner_search.id) is None


def test_a_finished_search_keeps_its_best_kernel_in_the_library_and_the_next_search_starts_from_it(owner):
    first = new_search(owner)
    execute_search(first.id, claim_queued(first.id), proposer=TwoIdeas(), evaluator=evaluate_by_comment)
    kept = LibraryKernel.objects.get(search=first)
    first.refresh_from_db()
    assert kept.source == first.best_node.source and kept.speedup == first.best_node.speedup
    assert kept.signature == first.problem.signature and kept.signature.startswith("ops=")

    second = create_search(owner, SOFTMAX_REFERENCE, SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=1,
                                                                   device="cpu", use_library=True), INFO)
    execute_search(second.id, claim_queued(second.id), proposer=TwoIdeas(), evaluator=evaluate_by_comment)
    round0 = Node.objects.filter(search=second, kind="kernel", round=0)
    assert kept.source in [n.source for n in round0]
