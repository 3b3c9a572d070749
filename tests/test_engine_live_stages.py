"""The engine streams each kernel's stages while its batch runs: every kernel of a round is
queued first, then moves through compiling, checking and timing to its verdict one at a time,
and each verdict is stored and streamed before the next kernel starts."""

from __future__ import annotations

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import SearchConfig
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, kernel, script

REFERENCE = "import torch\nclass Model(torch.nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n"
CONFIG = SearchConfig(proposer="scripted", rounds=1, ideas_per_round=1, impls_per_idea=2)


class StagedEvaluator(FakeEvaluator):
    """Reports stages the way gpurunner.evaluate_batch does, one candidate after another."""

    def __call__(self, reference, sources, config, on_stage=None):
        self.batches.append(list(sources))
        for i in range(len(sources)):
            on_stage(i, "queued", None)
        verdicts = []
        for i, source in enumerate(sources):
            for stage in ("compiling", "checking", "timing"):
                on_stage(i, stage, None)
            verdicts.append(self.verdict(source))
            on_stage(i, "verdict", verdicts[-1])
        return verdicts


def kernel_states(store: MemoryStore) -> list[tuple[str, str]]:
    return [(p["node"]["key"], p["node"]["status"]) for kind, p in store.events
            if kind == "node_updated" and p["node"]["kind"] == "kernel"]


def test_kernels_go_through_their_stages_one_at_a_time_before_the_round_ends():
    recording = script([[("Fuse the row passes.", "memory",
                          [kernel("a", 0.5), kernel("b", 0.9, "incorrect")])]])
    store = MemoryStore()
    run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording), StagedEvaluator(), store)
    a, b = "r1/ref/i0/k0", "r1/ref/i0/k1"
    assert kernel_states(store) == [
        (a, "queued"), (b, "queued"),
        (a, "compiling"), (a, "checking"), (a, "timing"), (a, "correct"),
        (b, "compiling"), (b, "checking"), (b, "timing"), (b, "incorrect"),
    ]
    kinds = [kind for kind, _ in store.events]
    assert kinds.index("round_finished") > len(kinds) - 4  # the verdicts came before the round's end


def test_an_evaluator_without_stages_still_gets_every_verdict():
    recording = script([[("Fuse the row passes.", "memory", [kernel("a", 0.5), kernel("b", 0.8)])]])
    store = MemoryStore()
    outcome = run_search(REFERENCE, {}, CONFIG, ScriptedProposer(recording), FakeEvaluator(), store)
    assert outcome.candidates == 2
    assert [s for _, s in kernel_states(store)] == ["queued", "queued", "correct", "correct"]
