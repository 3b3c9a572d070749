"""The search's best and its seeds are the kernels with the best measured ratio (each kernel's
own paired speedup), whatever times other rounds measured; a noisy one is never a seed and is
the best only when every correct kernel is noisy, labelled as an estimate."""

from __future__ import annotations

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.speedups import Speedup, speedup_of
from search.engine.types import SearchConfig
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, kernel, script

REFERENCE = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n"
CONFIG = SearchConfig(proposer="scripted", rounds=2, ideas_per_round=2, impls_per_idea=2,
                      seeds_per_round=2)


def run(recording):
    store = MemoryStore()
    outcome = run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording), FakeEvaluator(), store)
    return outcome, store


def seeds_of_round_two(store: MemoryStore) -> set[str]:
    ids = {n.id: n for n in store.nodes()}
    return {ids[n.parent_id].key for n in store.nodes() if n.kind == "idea" and n.round == 2}


def test_the_best_is_the_best_ratio_not_the_fastest_time():
    # Each kernel's reference was timed beside it: f (1.5 ms beside a 4 ms reference, 2.67x)
    # beats a (0.5 ms beside 1 ms, 2x) and g (0.45 ms beside 0.5 ms, 1.11x), though both ran
    # in less time.
    outcome, store = run(script([
        [("Fuse.", "memory", [kernel("a", 0.5), kernel("b", 0.9)]),
         ("Tile.", "memory", [kernel("c", 0.8), kernel("d", 0.95)])],
        [("Vectorize.", "memory", [kernel("e", 2.0, ref_ms=4.0), kernel("f", 1.5, ref_ms=4.0)]),
         ("Unroll.", "control_flow", [kernel("g", 0.45, ref_ms=0.5), kernel("h", 3.0, ref_ms=4.0)])],
    ]))
    assert "# f" in outcome.best.source  # 1.5 ms: slower than a, g, but the best ratio
    assert outcome.best.speedup == 4.0 / 1.5
    fastest = min((n for n in store.nodes() if n.kind == "kernel"), key=lambda n: n.cand_ms)
    assert "# g" in fastest.source and fastest.speedup < outcome.best.speedup
    changes = [p for kind, p in store.events if kind == "best_changed"]
    assert changes[-1]["node_id"] == outcome.best.id and changes[-1]["speedup"] == 4.0 / 1.5


def test_a_noisy_kernel_is_neither_the_best_nor_a_seed():
    outcome, store = run(script([
        [("Fuse.", "memory", [kernel("loud", 0.1, noisy=True), kernel("a", 0.5)]),
         ("Tile.", "memory", [kernel("b", 0.6), kernel("c", 0.9)])],
        [("Vectorize.", "memory", [kernel("d", 0.7), kernel("e", 0.8)]),
         ("Unroll.", "control_flow", [kernel("loud2", 0.05, noisy=True), kernel("f", 0.95)])],
    ]))
    nodes = {n.source.splitlines()[0][2:]: n for n in store.nodes() if n.kind == "kernel"}
    assert nodes["loud"].status == "correct" and speedup_of(nodes["loud"]).noisy
    assert seeds_of_round_two(store) == {nodes["a"].key, nodes["b"].key}
    assert "# a" in outcome.best.source
    changes = [p for kind, p in store.events if kind == "best_changed"]
    assert all(not c["noisy"] and c["node_id"] not in (nodes["loud"].id, nodes["loud2"].id)
               for c in changes)


def test_when_every_correct_kernel_is_noisy_the_best_estimate_is_the_best_and_says_so():
    outcome, store = run(script([
        [("Fuse.", "memory", [kernel("loud", 0.5, noisy=True), kernel("louder", 0.25, noisy=True)]),
         ("Tile.", "memory", [kernel("wrong", 0.1, verdict="incorrect"), kernel("slow", 2.0, noisy=True)])],
        [("Vectorize.", "memory", [kernel("d", 0.7, verdict="incorrect")]),
         ("Unroll.", "control_flow", [kernel("e", 0.8, verdict="incorrect")])],
    ]))
    assert "# louder" in outcome.best.source and speedup_of(outcome.best).noisy
    assert seeds_of_round_two(store) == {"ref"}  # an estimate never seeds a round
    changes = [p for kind, p in store.events if kind == "best_changed"]
    assert changes[-1]["node_id"] == outcome.best.id and changes[-1]["noisy"] is True


def test_a_noisy_speedup_reads_as_an_estimate_with_its_interval():
    noisy = Speedup(1.93, 1.1, (1.2, 2.8), None, noisy=True)
    assert noisy.text() == "≈1.9× (noisy, CI 1.2–2.8)"
    assert noisy.text(short=True) == "≈1.9×" and noisy.text("compile") == "≈1.1× (noisy)"
    assert not noisy.rankable
    plain = Speedup(2.314, None, (2.25, 2.37))
    assert plain.text() == "2.31× (CI 2.25–2.37)" and plain.text(times="x", short=True) == "2.31x"
    assert plain.text("compile") == "—"
    assert Speedup.from_json(noisy.to_dict()) == noisy
