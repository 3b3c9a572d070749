"""Sequential revision: one candidate at a time, each written from the last."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore, SimulatedCrash
from search.engine.types import SearchConfig
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, kernel, script
from tests.test_engine_branching import REFERENCE

CONFIG = SearchConfig(strategy="sequential", rounds=1, ideas_per_round=2, impls_per_idea=2)


def recording():
    return script([
        [("Fuse the passes.", "memory", [kernel("s1", 0.8)])],
        [("Fix the indexing.", "control_flow", [kernel("s2", 0.5, "incorrect")])],
        [("Fix the mask from the last attempt.", "control_flow", [kernel("s3", 0.6)])],
        [("Vectorize.", "memory", [kernel("s4", 0.7)])],
    ])


def test_it_spends_the_same_candidates_as_branching_one_at_a_time():
    store, evaluator = MemoryStore(), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording()), evaluator, store)
    assert [len(b) for b in evaluator.batches] == [1, 1, 1, 1]  # rounds x K x M = 4 steps
    assert outcome.candidates == 4 and outcome.stop_reason == "completed"
    assert "# s3" in outcome.best.source


def test_each_step_revises_the_last_kernel_even_a_failed_one():
    store = MemoryStore()
    run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording()), FakeEvaluator(), store)
    nodes = {n.key: n for n in store.nodes()}
    ids = {n.id: n for n in nodes.values()}
    assert [ids[nodes[f"s{i}/i0"].parent_id].key for i in range(1, 5)] == [
        "ref", "s1/i0/k0", "s2/i0/k0", "s3/i0/k0"]
    assert nodes["s2/i0/k0"].status == "incorrect"


def test_the_fix_prompt_shows_why_the_last_kernel_failed():
    proposer = ScriptedProposer(recording())
    run_search(REFERENCE, {}, CONFIG, proposer, FakeEvaluator(), MemoryStore())
    third = proposer.prompts[2]
    assert "incorrect" in third and "allclose: max abs err 0.5 > 0.01" in third
    assert "# s2" in third  # the failed kernel is the seed to fix


def test_a_resumed_sequential_search_continues_from_the_last_result():
    store = MemoryStore(crash_after_results=3)
    with pytest.raises(SimulatedCrash):
        run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording()), FakeEvaluator(), store)
    store.revive()
    proposer, evaluator = ScriptedProposer(recording()), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, CONFIG, proposer, evaluator, store)
    keys = [n.key for n in store.nodes()]
    assert len(keys) == len(set(keys)) == 1 + 4 * 2
    assert [len(b) for b in evaluator.batches] == [1, 1]  # step 3 again (its result was lost), step 4
    assert proposer.idea_calls == 1  # only step 4's idea is new
    assert "# s3" in outcome.best.source
