"""The branching search: tree shape, seeds by measured time, history in prompts, events."""

from __future__ import annotations

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import SearchConfig
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, kernel, script, two_round_script

REFERENCE = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n"
CONFIG = SearchConfig(proposer="scripted", rounds=2, ideas_per_round=4, impls_per_idea=2, seeds_per_round=2)


def run(config: SearchConfig = CONFIG, recording=None, **kwargs):
    store, proposer, evaluator = MemoryStore(), ScriptedProposer(recording or two_round_script()), FakeEvaluator()
    outcome = run_search(REFERENCE, {}, config, proposer, evaluator, store, **kwargs)
    return outcome, store, proposer, evaluator


def by_key(store: MemoryStore):
    return {n.key: n for n in store.nodes()}


def test_ideas_hang_under_kernels_and_implementations_under_ideas():
    _, store, _, _ = run()
    nodes = store.nodes()
    ids = {n.id: n for n in nodes}
    assert [n.key for n in nodes if n.kind == "reference"] == ["ref"]
    for node in nodes:
        if node.kind == "idea":
            assert ids[node.parent_id].kind in ("reference", "kernel")
        if node.kind == "kernel":
            assert ids[node.parent_id].kind == "idea"
            assert node.key.startswith(ids[node.parent_id].key + "/k")
    round1 = [n for n in nodes if n.kind == "idea" and n.round == 1]
    assert [n.key for n in round1] == ["r1/ref/i0", "r1/ref/i1", "r1/ref/i2", "r1/ref/i3"]
    assert sum(1 for n in nodes if n.kind == "kernel") == 16  # 2 rounds x K=4 x M=2


def test_each_round_is_evaluated_as_one_batch():
    _, _, _, evaluator = run()
    assert [len(b) for b in evaluator.batches] == [8, 8]


def test_next_round_is_seeded_with_the_fastest_correct_kernels():
    _, store, _, _ = run()
    nodes = by_key(store)
    ids = {n.id: n for n in nodes.values()}
    parents = {ids[n.parent_id].key for n in nodes.values() if n.kind == "idea" and n.round == 2}
    # b0 (0.40 ms) and a0 (0.50 ms) are fastest; b1 is faster still but incorrect
    assert parents == {"r1/ref/i1/k0", "r1/ref/i0/k0"}
    assert "r2/r1i1k0/i0" in nodes and "r2/r1i0k0/i2" in nodes


def test_it_returns_the_fastest_correct_kernel_and_why_it_stopped():
    outcome, store, _, _ = run()
    assert outcome.best.key in {"r2/r1i1k0/i0/k0", "r2/r1i0k0/i2/k0"}  # e0, 0.30 ms
    assert "# e0" in outcome.best.source
    assert outcome.best.speedup == 1.0 / 0.30
    assert outcome.stop_reason == "completed"
    assert (outcome.candidates, outcome.correct) == (16, 14)  # round 1 has one incorrect and one compile error


def test_round_two_prompt_contains_round_one_ideas_and_outcomes():
    _, _, proposer, _ = run()
    first, later = proposer.prompts[0], proposer.prompts[1:]
    assert "No ideas have been tried yet." in first
    round2 = next(p for p in later if "Round 1 [" in p)
    assert "Fuse the max, exp and sum into one pass over each row." in round2
    assert "Use one warp per row with shuffle reductions." in round2
    assert "2.50x eager" in round2  # b0: 1.0 / 0.40
    assert "allclose: max abs err 0.5 > 0.01" in round2  # b1's failed check
    assert 'identifier "blockDimx" is undefined' in round2  # c1's compiler error
    assert "Categories not explored yet" in round2 and "`async`" in round2


def test_the_seed_and_its_measurements_are_in_the_prompt():
    _, _, proposer, _ = run()
    round2 = proposer.prompts[-1]
    assert "# b0" in round2 or "# a0" in round2
    assert "x torch.compile" in round2


def test_it_emits_round_and_best_events():
    outcome, store, _, _ = run()
    assert store.events_of("round_started") == [{"round": 1}, {"round": 2}]
    finished = store.events_of("round_finished")
    assert [f["round"] for f in finished] == [1, 2]
    assert finished[-1]["best_node_id"] == outcome.best.id
    best_events = store.events_of("best_changed")
    assert best_events[-1]["node_id"] == outcome.best.id
    assert len(best_events) == 2  # b0 after round 1, e0 after round 2
    assert store.events_of("costs")[-1]["candidates"] == 16


def test_nodes_are_set_queued_before_evaluation():
    _, store, _, _ = run()
    updates = [p["node"] for k, p in store.events if k == "node_updated" and p["node"]["kind"] == "kernel"]
    first_status = {}
    for node in updates:
        first_status.setdefault(node["key"], node["status"])
    assert set(first_status.values()) == {"queued"}


def test_a_failed_idea_call_is_a_failed_node_and_the_search_goes_on():
    recording = two_round_script()
    recording["rounds"][1] = {"error": "HTTP 429 from the model server (gave up after 4 tries)"}
    outcome, store, _, _ = run(recording=recording)
    failed = [n for n in store.nodes() if n.kind == "idea" and n.status == "failed"]
    assert len(failed) == 2  # one per round-2 seed
    assert "429" in failed[0].error
    assert outcome.stop_reason == "completed" and outcome.best is not None


def test_an_implementation_error_is_a_failed_kernel_that_is_not_evaluated():
    recording = script([[("Try a refusal.", "compute", [{"error": "the model refused: no"}, kernel("x", 0.5)])]])
    config = SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=2, seeds_per_round=1)
    outcome, store, _, evaluator = run(config, recording)
    nodes = by_key(store)
    assert nodes["r1/ref/i0/k0"].status == "failed"
    assert nodes["r1/ref/i0/k0"].error == "the model refused: no"
    assert evaluator.evaluated == [kernel("x", 0.5)]
    assert outcome.best.key == "r1/ref/i0/k1"


def test_a_runner_failure_marks_the_batch_and_does_not_crash_the_search():
    def broken(reference, sources, config):
        raise RuntimeError("worker pool died")

    store, proposer = MemoryStore(), ScriptedProposer(two_round_script())
    outcome = run_search(REFERENCE, {}, CONFIG, proposer, broken, store)
    kernels = [n for n in store.nodes() if n.kind == "kernel"]
    assert {k.status for k in kernels} == {"runtime_error"}
    assert "worker pool died" in kernels[0].error
    assert outcome.best is None and outcome.correct == 0


def test_keys_stay_short_over_many_rounds():
    config = SearchConfig(rounds=12, ideas_per_round=4, impls_per_idea=2, seeds_per_round=2)
    _, store, _, _ = run(config)
    assert max(len(n.key) for n in store.nodes()) <= 64
    assert len({n.key for n in store.nodes()}) == len(store.nodes())


def test_idea_nodes_show_their_best_implementation():
    _, store, _, _ = run()
    idea = by_key(store)["r1/ref/i1"]
    assert idea.speedup == 1.0 / 0.40


def test_library_seeds_are_evaluated_first_under_the_reference_and_can_seed_round_one():
    config = SearchConfig(rounds=1, ideas_per_round=2, impls_per_idea=1, seeds_per_round=1)
    outcome, store, _, evaluator = run(config, library_seeds=[kernel("kept", 0.2), kernel("kept-bad", 0.1, "incorrect")])
    nodes = by_key(store)
    assert nodes["lib/0"].round == 0 and nodes["lib/0"].parent_id == nodes["ref"].id
    assert evaluator.batches[0] == [kernel("kept", 0.2), kernel("kept-bad", 0.1, "incorrect")]
    ideas = [n for n in nodes.values() if n.kind == "idea"]
    assert {n.parent_id for n in ideas} == {nodes["lib/0"].id}
    assert outcome.best.key == "lib/0"


def test_a_proposer_with_nothing_left_to_try_ends_the_search_early():
    recording = two_round_script()
    recording["rounds"][1] = {"ideas": []}
    config = SearchConfig(rounds=5, ideas_per_round=4, impls_per_idea=2, seeds_per_round=2)
    outcome, store, proposer, evaluator = run(config, recording)
    assert outcome.stop_reason == "completed" and len(evaluator.batches) == 1
    assert not any(n.status == "failed" for n in store.nodes() if n.kind == "idea")
    assert [e["round"] for e in store.events_of("round_finished")] == [1, 2]
