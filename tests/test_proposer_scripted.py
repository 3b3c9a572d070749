"""The scripted proposer replays a recorded file of ideas and code."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from search.engine.types import Idea, Node, ProposalContext, ProposerError
from search.proposers.scripted import ScriptedProposer

DEMO = Path(__file__).resolve().parent.parent / "examples" / "scripted" / "softmax.json"


def ctx(round_: int) -> ProposalContext:
    return ProposalContext(reference="class Model: ...", reference_info={}, seeds=[], history=[], round=round_,
                           device="cpu", tolerance=1e-2, policy="any", unexplored_categories=[])


def parent() -> Node:
    return Node(kind="reference", round=0, key="ref", source="class Model: ...")


def test_the_demo_recording_holds_python_files_defining_model_new():
    recording = json.loads(DEMO.read_text())
    sources = [impl for r in recording["rounds"] for idea in r["ideas"] for impl in idea["implementations"]
               if isinstance(impl, str)]
    assert len(sources) >= 6
    parsed = 0
    for source in sources:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue  # the demo keeps one broken file on purpose
        parsed += 1
        assert any(isinstance(n, ast.ClassDef) and n.name == "ModelNew" for n in tree.body)
    assert parsed == len(sources) - 1


def test_it_replays_a_rounds_ideas_in_order_and_wraps_around():
    proposer = ScriptedProposer(DEMO)
    first, _ = proposer.propose_ideas(ctx(1), 3)
    second, _ = proposer.propose_ideas(ctx(1), 2)
    assert [i.category for i in first] == ["memory", "compute", "precision"]
    assert second[0].text.startswith("Write a hand-tuned AVX-512") and second[1] == first[0]


def test_later_rounds_reuse_the_last_recorded_round():
    proposer = ScriptedProposer(DEMO)
    ideas, _ = proposer.propose_ideas(ctx(7), 1)
    assert ideas[0].text.startswith("Process the rows in chunks")


def test_implementations_are_replayed_and_recorded_errors_become_failures():
    proposer = ScriptedProposer(DEMO)
    ideas, _ = proposer.propose_ideas(ctx(1), 4)
    two = proposer.implement(ctx(1), parent(), ideas[0], 3)
    assert two[0].source != two[1].source and two[2].source == two[0].source
    [refused] = proposer.implement(ctx(1), parent(), ideas[3], 1)
    assert refused.source == "" and refused.error.startswith("the model refused")
    [unknown] = proposer.implement(ctx(1), parent(), Idea("never recorded", "memory"), 1)
    assert unknown.error == "no recorded implementation for this idea"


def test_an_error_round_fails_the_ideas_call(tmp_path):
    proposer = ScriptedProposer({"rounds": [{"error": "HTTP 429 from the model server"}]})
    with pytest.raises(ProposerError, match="429"):
        proposer.propose_ideas(ctx(1), 2)


def test_sources_may_live_in_files_next_to_the_recording(tmp_path):
    (tmp_path / "k.py").write_text("class ModelNew: ...\n")
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"rounds": [{"ideas": [{"idea": "A", "category": "memory",
                                                       "implementations": [{"file": "k.py"}]}]}]}))
    proposer = ScriptedProposer(path)
    [impl] = proposer.implement(ctx(1), parent(), Idea("A", "memory"), 1)
    assert impl.source == "class ModelNew: ...\n"


def test_it_keeps_the_prompt_a_model_would_have_been_sent():
    proposer = ScriptedProposer(DEMO)
    proposer.propose_ideas(ctx(1), 2)
    assert "Task: propose 2 optimization ideas" in proposer.prompts[0]
    assert "class Model: ..." in proposer.prompts[0]
