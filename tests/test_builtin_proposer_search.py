"""The built-in proposer across a whole search: new ideas every round, retuning, combining seeds."""

from __future__ import annotations

import hashlib
from pathlib import Path

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import Node, ProposalContext, SearchConfig, TriedIdea
from search.proposers.builtin import BuiltinProposer
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.tuning import parse_settings

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def recipe_timed_evaluator(reference: str, sources: list[str], config: SearchConfig) -> list[dict]:
    """Every kernel correct, its time a fixed function of its recipe (0.3 to 1.3 ms)."""
    verdicts = []
    for source in sources:
        digest = hashlib.sha256(Recipe.from_source(source).to_json().encode()).hexdigest()
        ms = 0.3 + int(digest[:8], 16) / 2**32
        verdicts.append({"verdict": "correct", "reason": "", "checks": [], "ref_ms": 1.0,
                         "compile_ref_ms": 0.8, "cand_ms": ms, "speedup": 1.0 / ms,
                         "speedup_vs_compile": 0.8 / ms})
    return verdicts


def search(name: str, device: str) -> list[Node]:
    store = MemoryStore()
    run_search((EXAMPLES / name).read_text(), {}, SearchConfig(device=device), BuiltinProposer(device),
               recipe_timed_evaluator, store)
    return store.nodes()


def context(reference: str, device: str, seed: Node, history: list[TriedIdea]) -> ProposalContext:
    return ProposalContext(reference=reference, reference_info={}, seeds=[seed], history=history, round=2,
                           device=device, tolerance=1e-2, policy="any", unexplored_categories=[])


def test_a_default_search_on_the_cpu_softmax_proposes_new_ideas_in_every_round():
    nodes = search("softmax_manual.py", "cpu")
    ideas = [n for n in nodes if n.kind == "idea"]
    per_round = [sum(1 for i in ideas if i.round == r) for r in range(1, 6)]
    assert per_round[0] == 4 and all(count >= 2 for count in per_round), per_round


def test_a_default_search_on_the_study_convolution_runs_all_five_rounds():
    nodes = search("study/conv_relu_maxpool_alexnet1.py", "cuda")
    rounds = {n.round for n in nodes if n.kind == "idea"}
    assert rounds == {1, 2, 3, 4, 5}


def test_a_search_never_repeats_an_idea_or_a_kernel():
    for name, device in (("softmax_manual.py", "cpu"), ("study/layernorm_16x64x256x256.py", "cuda")):
        nodes = search(name, device)
        texts = [n.idea for n in nodes if n.kind == "idea"]
        recipes = [Recipe.from_source(n.source).to_json() for n in nodes if n.kind == "kernel"]
        assert len(texts) == len(set(texts))
        assert len(recipes) == len(set(recipes)), name


def test_retune_ideas_try_untried_settings_next_to_the_fastest_measured():
    reference = (EXAMPLES / "study/layernorm_16x64x256x256.py").read_text()
    proposer = BuiltinProposer("cuda")
    root = Node(kind="reference", round=0, id=1, key="ref", source=reference)
    first = context(reference, "cuda", root, [])
    split = next(i for i in proposer.propose_ideas(first, 4)[0] if i.text.startswith("Split each row"))
    impls = proposer.implement(first, root, split, 2)
    history = [TriedIdea(1, split.text, split.category, [
        {"key": "r1/ref/i0/k0", "status": "correct", "cand_ms": 0.33, "speedup": 25.0},
        {"key": "r1/ref/i0/k1", "status": "correct", "cand_ms": 0.40, "speedup": 20.0}])]
    seed = Node(kind="kernel", round=1, id=5, key="r1/ref/i0/k0", source=impls[0].source, status="correct",
                cand_ms=0.33)
    ideas, _ = proposer.propose_ideas(context(reference, "cuda", seed, history), 8)
    retunes = [i for i in ideas if i.text.startswith("Retune the ")]
    assert retunes and "0.33 ms" in retunes[0].text
    measured = {Recipe.from_source(impl.source).to_json() for impl in impls}
    for idea in retunes:
        assert parse_settings(idea.text.rsplit("; try ", 1)[-1])
        for impl in proposer.implement(context(reference, "cuda", seed, history), seed, idea, 3):
            assert Recipe.from_source(impl.source).to_json() not in measured


def test_a_retune_idea_is_rebuilt_from_its_text_by_a_fresh_proposer():
    reference = (EXAMPLES / "study/softmax_4096x65536.py").read_text()
    seed_source = BuiltinProposer("cuda").implement(
        context(reference, "cuda", Node(kind="reference", round=0, key="ref", source=reference), []),
        Node(kind="reference", round=0, key="ref", source=reference),
        BuiltinProposer("cuda").propose_ideas(
            context(reference, "cuda", Node(kind="reference", round=0, key="ref", source=reference), []), 1)[0][0],
        1)[0].source
    seed = Node(kind="kernel", round=1, id=3, key="r1/ref/i0/k0", source=seed_source, status="correct", cand_ms=0.8)
    ctx = context(reference, "cuda", seed, [])
    retune = next(i for i in BuiltinProposer("cuda").propose_ideas(ctx, 8)[0] if i.text.startswith("Retune"))
    impls = BuiltinProposer("cuda").implement(ctx, seed, retune, 2)  # a resumed search: no memory
    wanted = parse_settings(retune.text.rsplit("; try ", 1)[-1])[:2]
    assert [{k: Recipe.from_source(i.source).params[k] for k in w} for i, w in zip(impls, wanted, strict=True)] == wanted


def test_the_second_seed_is_combined_with_the_first():
    nodes = search("study/conv2d_alexnet1.py", "cuda")
    combined = [n for n in nodes if n.kind == "idea" and n.idea.startswith("Combine the seed")]
    assert combined
    kernels = [n for n in nodes if n.kind == "kernel" and n.parent_id == combined[0].id]
    assert kernels and all(not k.error for k in kernels)


def test_the_study_convolution_gets_space_to_depth_first():
    reference = (EXAMPLES / "study/conv2d_alexnet1.py").read_text()
    root = Node(kind="reference", round=0, key="ref", source=reference)
    proposer = BuiltinProposer("cuda")
    ctx = context(reference, "cuda", root, [])
    first = proposer.propose_ideas(ctx, 4)[0][0]
    assert "space-to-depth" in first.text and "precision:" in first.text
    impl = proposer.implement(ctx, root, first, 1)[0]
    recipe = Recipe.from_source(impl.source)
    assert recipe.params["s2d"] and recipe.options["dtype"] == "float16" and "_conv_s2d" in impl.source
    # On that seed, ideas that space-to-depth makes moot (padding, channels-last) are not offered.
    seed = Node(kind="kernel", round=1, id=4, key="r1/ref/i0/k0", source=impl.source, status="correct", cand_ms=0.3)
    texts = [i.text for i in proposer.propose_ideas(context(reference, "cuda", seed, []), 20)[0]]
    assert not [t for t in texts if t.startswith(("Pad the", "Store the 4-D"))]


def test_torch_compile_ideas_are_offered_by_default_in_each_mode():
    reference = (EXAMPLES / "softmax_manual.py").read_text()
    root = Node(kind="reference", round=0, key="ref", source=reference)
    proposer = BuiltinProposer("cpu")
    ctx = context(reference, "cpu", root, [])
    compiled = [i for i in proposer.propose_ideas(ctx, 20)[0] if i.text.startswith("Compile the forward")]
    assert compiled
    sources = [impl.source for impl in proposer.implement(ctx, root, compiled[0], 8)]
    modes = {Recipe.from_source(s).options["compile"] for s in sources}
    assert {"default", "max-autotune-no-cudagraphs", "max-autotune"} <= modes
