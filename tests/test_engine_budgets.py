"""Budgets and cancel end a search cleanly, between evaluations, with its best so far."""

from __future__ import annotations

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import SearchConfig, Usage
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, two_round_script
from tests.test_engine_branching import CONFIG, REFERENCE


class PricedProposer(ScriptedProposer):
    """The scripted proposer, charging a fixed price per call like a paid model."""

    def __init__(self, recording, price: float) -> None:
        super().__init__(recording)
        self.price = price

    def propose_ideas(self, ctx, k):
        ideas, _ = super().propose_ideas(ctx, k)
        return ideas, Usage("paid", 100, 50, self.price)

    def implement(self, ctx, parent, idea, m):
        impls = super().implement(ctx, parent, idea, m)
        for impl in impls:
            impl.usage = Usage("paid", 100, 50, self.price)
        return impls


def kernels(store):
    return [n for n in store.nodes() if n.kind == "kernel"]


def test_it_stops_at_max_candidates_without_writing_extra_code():
    config = SearchConfig(**{**CONFIG.to_dict(), "max_candidates": 5})
    store, proposer, evaluator = MemoryStore(), ScriptedProposer(two_round_script()), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, config, proposer, evaluator, store)
    assert outcome.stop_reason == "max_candidates"
    assert outcome.candidates == 5 and len(evaluator.evaluated) == 5
    assert len(kernels(store)) == 5
    assert outcome.best is not None and outcome.best.round == 1
    assert not any(n.round == 2 for n in store.nodes())


def test_it_stops_at_the_money_limit_after_evaluating_what_was_paid_for():
    config = SearchConfig(**{**CONFIG.to_dict(), "max_cost_usd": 0.25})
    store, evaluator = MemoryStore(), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, config, PricedProposer(two_round_script(), 0.1), evaluator, store)
    assert outcome.stop_reason == "max_cost_usd"
    # the ideas call and the first idea's two implementations reach $0.30: no further call,
    # but the two kernels already paid for are still evaluated
    assert abs(outcome.usage.cost_usd - 0.3) < 1e-9
    assert len(evaluator.evaluated) == 2 and len(kernels(store)) == 2
    assert {k.status for k in kernels(store)} == {"correct"}


def test_usage_adds_up_over_the_whole_search():
    store, evaluator = MemoryStore(), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, CONFIG, PricedProposer(two_round_script(), 0.01), evaluator, store)
    ideas_calls, kernels_written = 1 + 2, 16  # one ideas call per seed: 1 in round 1, 2 in round 2
    assert abs(outcome.usage.cost_usd - 0.01 * (ideas_calls + kernels_written)) < 1e-9
    assert outcome.usage.input_tokens == 100 * (ideas_calls + kernels_written)
    assert sum(n.usage.output_tokens for n in store.nodes()) == 50 * (ideas_calls + kernels_written)


def test_it_stops_at_the_wall_clock_limit_between_rounds():
    now = [0.0]

    def tick(batch: int) -> None:
        now[0] += 10.0  # each batch takes ten seconds

    config = SearchConfig(**{**CONFIG.to_dict(), "rounds": 5, "max_wall_s": 15.0})
    store, evaluator = MemoryStore(), FakeEvaluator(on_call=tick)
    outcome = run_search(REFERENCE, {}, config, ScriptedProposer(two_round_script()), evaluator, store,
                         clock=lambda: now[0])
    assert outcome.stop_reason == "max_wall_s"
    assert len(evaluator.batches) == 2
    assert outcome.best is not None


def test_cancel_stops_before_the_next_round():
    store = MemoryStore()

    def cancel(batch: int) -> None:
        store.cancel = True

    evaluator = FakeEvaluator(on_call=cancel)
    proposer = ScriptedProposer(two_round_script())
    outcome = run_search(REFERENCE, {}, CONFIG, proposer, evaluator, store)
    assert outcome.stop_reason == "cancelled"
    assert len(evaluator.batches) == 1 and proposer.idea_calls == 1
    assert outcome.best is not None and outcome.best.round == 1
    assert store.events_of("round_started") == [{"round": 1}]


def test_cancel_while_writing_code_leaves_the_kernels_unevaluated_and_says_so():
    store = MemoryStore()

    class CancellingProposer(ScriptedProposer):
        def implement(self, ctx, parent, idea, m):
            store.cancel = True  # the owner presses cancel while code is being written
            return super().implement(ctx, parent, idea, m)

    evaluator = FakeEvaluator()
    outcome = run_search(REFERENCE, {}, CONFIG, CancellingProposer(two_round_script()), evaluator, store)
    assert outcome.stop_reason == "cancelled"
    assert evaluator.batches == []
    written = kernels(store)
    assert len(written) == 2  # the call in flight finished; no further call was made
    assert all(k.status == "failed" and "not evaluated" in k.error for k in written)
    assert outcome.best is None


def test_heartbeats_are_beaten_between_steps():
    store = MemoryStore()
    run_search(REFERENCE, {}, CONFIG, ScriptedProposer(two_round_script()), FakeEvaluator(), store)
    assert store.heartbeats >= 2 * (1 + 4 + 1)
    assert store.checkpoint["candidates"] == 16
