"""The built-in proposer: what it reads from a reference, which ideas it writes, how it builds code."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from search.engine.types import Idea, Node, ProposalContext, TriedIdea
from search.proposers.builtin import BuiltinProposer
from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.catalogue import load_catalogue
from search.proposers.builtin.families.cuda_softmax_rows import row_variants as softmax_row_variants
from search.proposers.builtin.recipe import Recipe

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def context(reference: str, device: str = "cpu", tolerance: float = 1e-2, history=None,
            seeds=None, unexplored=None) -> ProposalContext:
    root = Node(kind="reference", round=0, id=1, key="root", source=reference)
    return ProposalContext(reference=reference, reference_info={}, seeds=seeds or [root],
                           history=history or [], round=1, device=device, tolerance=tolerance,
                           policy="any", unexplored_categories=unexplored or [])


def example(name: str) -> str:
    return (EXAMPLES / name).read_text()


@pytest.mark.parametrize("name, pattern", [
    ("softmax.py", "softmax"), ("softmax_manual.py", "softmax_manual"), ("layernorm.py", "layernorm"),
    ("rmsnorm.py", "rmsnorm_manual"), ("matmul.py", "matmul"), ("conv.py", "conv"),
    ("conv_relu_maxpool.py", "conv_relu_maxpool"), ("study/softmax_4096x65536.py", "softmax"),
    ("study/layernorm_16x64x256x256.py", "layernorm"), ("study/matmul_4096.py", "matmul"),
    ("study/conv2d_alexnet1.py", "conv"), ("study/conv_relu_maxpool_alexnet1.py", "conv_relu_maxpool"),
])
def test_it_recognizes_the_pattern_of_each_example(name, pattern):
    assert analyze(example(name)).pattern == pattern


def test_it_reads_the_layernorm_row_from_the_init_inputs():
    shape = analyze(example("study/layernorm_16x64x256x256.py"))
    assert (shape.row_length, shape.rows) == (64 * 256 * 256, 16)


def test_it_never_runs_the_reference(tmp_path):
    marker = tmp_path / "ran"
    reference = example("softmax_manual.py") + f"\nopen({str(marker)!r}, 'w').write('x')\n"
    proposer = BuiltinProposer()
    ctx = context(reference)
    ideas, _ = proposer.propose_ideas(ctx, 4)
    proposer.implement(ctx, ctx.seeds[0], ideas[0], 2)
    assert not marker.exists()


def test_an_unreadable_reference_gets_framework_ideas_only():
    ideas, _ = BuiltinProposer(device="cuda").propose_ideas(context("class Model(:", device="cuda"), 8)
    assert ideas and all(i.text.startswith(("Compile the forward", "Capture the forward")) for i in ideas)


def test_every_idea_is_tagged_with_a_study_category():
    from search.engine.types import CATEGORIES

    assert {spec.category for spec in load_catalogue()} <= set(CATEGORIES)


def test_it_writes_cpu_ideas_for_the_manual_softmax():
    ideas, _ = BuiltinProposer().propose_ideas(context(example("softmax_manual.py")), 4)
    texts = " ".join(i.text for i in ideas)
    assert "torch.softmax" in texts and "C++" in texts


def test_it_does_not_repeat_an_idea_already_tried():
    ctx = context(example("softmax_manual.py"))
    first, _ = BuiltinProposer().propose_ideas(ctx, 1)
    ctx.history = [TriedIdea(1, first[0].text, first[0].category, [{"status": "correct", "speedup": 3.0}])]
    again, _ = BuiltinProposer().propose_ideas(ctx, 8)
    assert first[0].text not in [i.text for i in again]


def test_it_prefers_categories_not_explored_yet():
    reference = example("study/softmax_4096x65536.py")
    plain, _ = BuiltinProposer("cuda").propose_ideas(context(reference, device="cuda"), 1)
    nudged, _ = BuiltinProposer("cuda").propose_ideas(
        context(reference, device="cuda", unexplored=["control_flow"]), 1)
    assert plain[0].category == "memory"
    # Online softmax (control flow) gains the exploration bonus over torch.compile and graphs.
    ranked, _ = BuiltinProposer("cuda").propose_ideas(
        context(reference, device="cuda", unexplored=["control_flow"]), 2)
    assert [i.category for i in ranked] == ["memory", "control_flow"] and nudged[0].category == "memory"


def test_precision_ideas_are_labelled_and_need_a_loose_enough_tolerance():
    reference = example("study/matmul_4096.py")
    loose, _ = BuiltinProposer("cuda").propose_ideas(context(reference, device="cuda", tolerance=1e-2), 8)
    tight, _ = BuiltinProposer("cuda").propose_ideas(context(reference, device="cuda", tolerance=1e-4), 8)
    precision = [i for i in loose if i.category == "precision"]
    assert precision and all("precision:" in i.text for i in precision)
    assert not [i for i in tight if i.category == "precision"]


def test_each_implementation_of_an_idea_uses_another_variant():
    reference = example("study/softmax_4096x65536.py")
    ctx = context(reference, device="cuda")
    ideas, _ = BuiltinProposer("cuda").propose_ideas(ctx, 1)
    impls = BuiltinProposer("cuda").implement(ctx, ctx.seeds[0], ideas[0], 3)
    assert len(impls) == 3 and len({i.source for i in impls}) == 3
    assert all(not i.error for i in impls)


def test_every_candidate_is_valid_python_defining_modelnew():
    for name in ("softmax_manual.py", "rmsnorm.py", "layernorm.py", "conv_relu_maxpool.py",
                 "study/softmax_4096x65536.py", "study/conv_relu_maxpool_alexnet1.py"):
        reference = example(name)
        for device in ("cpu", "cuda"):
            ctx = context(reference, device=device)
            ideas, _ = BuiltinProposer(device).propose_ideas(ctx, 20)
            for idea in ideas:
                for impl in BuiltinProposer(device).implement(ctx, ctx.seeds[0], idea, 4):
                    tree = ast.parse(impl.source)
                    assert "ModelNew" in {n.name for n in tree.body if isinstance(n, ast.ClassDef)}, idea.text


def test_an_idea_on_a_seed_stacks_on_what_the_seed_already_does():
    reference = example("study/conv_relu_maxpool_alexnet1.py")
    proposer = BuiltinProposer("cuda")
    ctx = context(reference, device="cuda")
    half = next(i for i in proposer.propose_ideas(ctx, 20)[0] if i.text.startswith("Cast the operands"))
    seed_source = proposer.implement(ctx, ctx.seeds[0], half, 1)[0].source
    seed = Node(kind="kernel", round=1, id=7, key="r1/root/i0/k0", source=seed_source, status="correct")
    ctx2 = context(reference, device="cuda", seeds=[seed])
    ideas, _ = proposer.propose_ideas(ctx2, 20)
    fused = next(i for i in ideas if i.text.startswith("Fuse the ReLU"))
    assert "Stacked on the seed kernel" in fused.text
    recipe = Recipe.from_source(proposer.implement(ctx2, seed, fused, 1)[0].source)
    assert recipe.core == "cuda_conv" and recipe.params["fused_pool"] and recipe.options["dtype"] == "float16"
    # The seed already runs in fp16: offered again, the precision idea only writes its bf16 variant.
    again = [i for i in ideas if i.text.startswith(half.text)]
    for impl in proposer.implement(ctx2, seed, again[0], 2) if again else []:
        assert Recipe.from_source(impl.source).options["dtype"] == "bfloat16"


def test_an_idea_it_does_not_know_becomes_an_implementation_error():
    ctx = context(example("softmax.py"))
    impls = BuiltinProposer().implement(ctx, ctx.seeds[0], Idea("Rewrite it in Fortran", "compute"), 2)
    assert len(impls) == 1 and impls[0].error and not impls[0].source


def test_softmax_launch_shapes_cover_the_row_exactly_within_the_register_budget():
    for cols in (4096, 65536):
        variants = softmax_row_variants(cols)
        assert variants
        for v in variants:
            assert v["cluster"] * v["threads"] * v["items"] * 4 == cols
            assert v["items"] * 4 + 24 <= 65536 // v["threads"]
    assert softmax_row_variants(4097) == []


def test_an_idea_whose_every_implementation_failed_is_not_offered_again_on_another_seed():
    reference = example("softmax_manual.py")
    ctx = context(reference)
    def proposer() -> BuiltinProposer:
        return BuiltinProposer(extra_ideas=["torch_compile_cpu"])

    compile_idea = next(i for i in proposer().propose_ideas(ctx, 8)[0] if "torch.compile" in i.text)
    ctx.history = [TriedIdea(1, compile_idea.text, "compute", [{"status": "rejected"}])]
    seed_idea = next(i for i in proposer().propose_ideas(ctx, 8)[0] if "torch.softmax" in i.text)
    seed = Node(kind="kernel", round=1, id=5, key="k", status="correct",
                source=proposer().implement(ctx, ctx.seeds[0], seed_idea, 1)[0].source)
    ideas, _ = proposer().propose_ideas(context(reference, seeds=[seed], history=ctx.history), 8)
    assert ideas and not [i for i in ideas if "torch.compile" in i.text]
