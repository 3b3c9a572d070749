"""The scripted demo recording, searched with the real runner on the CPU: every kind of outcome."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from search.engine import run_search, runner_evaluator
from search.engine.memory_store import MemoryStore
from search.engine.types import SearchConfig
from search.proposers.scripted import ScriptedProposer

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(importlib.util.find_spec("gpurunner.api") is None,
                                reason="the runner's API is not installed in this checkout")


def test_the_demo_recording_gives_correct_wrong_broken_and_refused_kernels():
    recording = json.loads((ROOT / "examples" / "scripted" / "softmax.json").read_text())
    recording["rounds"][0]["ideas"] = recording["rounds"][0]["ideas"][1:]  # the ideas that fail somehow
    config = SearchConfig(proposer="scripted", rounds=1, ideas_per_round=3, device="cpu", trials=2,
                          compile_baseline=False)
    store = MemoryStore()
    outcome = run_search((ROOT / "examples" / "softmax.py").read_text(), {}, config,
                         ScriptedProposer(recording), runner_evaluator, store)
    statuses = {n.key: n.status for n in store.nodes() if n.kind == "kernel"}
    assert statuses == {
        "r1/ref/i0/k0": "correct", "r1/ref/i0/k1": "incorrect",  # normalises the wrong dimension
        "r1/ref/i1/k0": "correct", "r1/ref/i1/k1": "compile_error",  # a syntax error
        "r1/ref/i2/k0": "failed", "r1/ref/i2/k1": "failed",  # the recorded refusal
    }
    assert outcome.candidates == 4 and outcome.correct == 2
    assert outcome.best is not None and outcome.best.speedup > 0
    assert store.node("ref").cand_ms > 0  # the eager time, from the runner
