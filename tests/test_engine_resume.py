"""A search whose worker died continues from its last completed evaluation, without duplicates."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore, SimulatedCrash
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, two_round_script
from tests.test_engine_branching import CONFIG, REFERENCE


def crash_then_resume(crash_after: int):
    store = MemoryStore(crash_after_results=crash_after)
    first, second = ScriptedProposer(two_round_script()), ScriptedProposer(two_round_script())
    before, after = FakeEvaluator(), FakeEvaluator()
    with pytest.raises(SimulatedCrash):
        run_search(REFERENCE, {}, CONFIG, first, before, store)
    store.revive()
    outcome = run_search(REFERENCE, {}, CONFIG, second, after, store)
    return outcome, store, (first, second), (before, after)


def uninterrupted():
    store = MemoryStore()
    return run_search(REFERENCE, {}, CONFIG, ScriptedProposer(two_round_script()), FakeEvaluator(), store), store


@pytest.mark.parametrize("crash_after", [3, 8, 11])
def test_a_resumed_search_ends_like_an_uninterrupted_one_without_duplicate_nodes(crash_after):
    outcome, store, _, _ = crash_then_resume(crash_after)
    expected, clean = uninterrupted()
    keys = [n.key for n in store.nodes()]
    assert len(keys) == len(set(keys))
    assert sorted(keys) == sorted(n.key for n in clean.nodes())
    assert outcome.best.key == expected.best.key
    assert (outcome.candidates, outcome.correct) == (expected.candidates, expected.correct)
    assert all(n.status != "compiling" for n in store.nodes())


def test_kernels_with_a_result_are_not_evaluated_again():
    # the crash loses the third result of round 1: two kernels keep theirs
    _, store, _, (before, after) = crash_then_resume(3)
    assert len(before.evaluated) == 8
    assert after.batches[0] == before.batches[0][2:]  # the rest of round 1, in one batch
    assert len(after.batches) == 2 and len(after.batches[1]) == 8


def test_recorded_ideas_are_reused_not_proposed_again():
    _, _, (first, second), (before, after) = crash_then_resume(11)  # in round 2's batch
    assert first.idea_calls == 3  # round 1, then round 2's two seeds
    assert second.idea_calls == 0 and second.implement_calls == 0
    assert len(after.batches) == 1 and len(after.batches[0]) == 6


def test_a_crash_before_round_two_proposes_round_two_once():
    _, _, (first, second), _ = crash_then_resume(8)  # the last result of round 1 is lost
    assert first.idea_calls == 1
    assert second.idea_calls == 2  # round 2's seeds, each once


def test_the_checkpoint_records_the_last_completed_batch():
    store = MemoryStore(crash_after_results=11)
    with pytest.raises(SimulatedCrash):
        run_search(REFERENCE, {}, CONFIG, ScriptedProposer(two_round_script()), FakeEvaluator(), store)
    assert store.checkpoint["round"] == 1 and store.checkpoint["candidates"] == 8
