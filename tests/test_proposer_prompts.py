"""What a model is told: the tolerance exactly as the runner enforces it, the hardware, the
reference's times and roofline floor, a worked example per backend, and errors in the
candidate's own words; the sample prompts in docs/prompts/ are what the templates render."""

from __future__ import annotations

from pathlib import Path

import torch

from gpurunner.checks import compare_outputs
from search.engine.types import Idea, Node, ProposalContext
from search.proposers import sample_prompts, templates

DOCS = Path(__file__).resolve().parent.parent / "docs" / "prompts"


def test_the_sample_prompts_in_docs_are_what_the_templates_render():
    for name, text in sample_prompts.render().items():
        assert (DOCS / name).read_text() == text, f"run python -m search.proposers.sample_prompts ({name})"


def test_round_one_shows_hardware_tolerance_floor_and_an_example_per_backend():
    first, _ = sample_prompts.contexts()
    ideas = templates.ideas_prompt(first, 4)
    assert "compute capability 9.0 (sm_90a, Hopper)" in ideas and "wgmma" in ideas and "TMA" in ideas
    assert "132 SMs" in ideas and "L2 cache: 50 MiB" in ideas and "227 KiB per block opted in" in ideas
    assert "roofline floor: 0.005603 ms" in ideas and "time per call: eager PyTorch about 0.0637 ms" in ideas
    assert "atol' = min(0.01,\nrtol * max|ref|)" in ideas and "at most 0.01" in ideas
    implement = templates.implement_prompt(first, first.seeds[0], Idea("Fuse.", "memory"))
    assert 'cpp_source = "torch::Tensor scale(torch::Tensor x, double s);"' in implement
    assert "torch::Tensor scale(torch::Tensor x, double s) {" in implement  # the matching definition
    assert "torch.cuda._compile_kernel(SOURCE, \"scale\")" in implement and "@triton.jit" in implement


def test_round_two_shows_the_times_to_beat_and_the_failure_as_the_model_reads_it():
    _, second = sample_prompts.contexts()
    text = templates.ideas_prompt(second, 4)
    assert "time per call: eager PyTorch 0.6392 ms; torch.compile 0.8465 ms" in text
    assert "candidate.py line 28, in forward: x = x.view(-1, 64)" in text
    assert "Time per operator in one call: layernorm_rows 5.6 us (100%)" in text
    assert "- `layernorm_rows`: 63 registers/thread, no local memory (no spills)" in text
    assert "DRAM throughput 26% of peak" in text
    assert "/srv/" not in text and "gpurunner" not in text and "/var/lib" not in text


def test_the_tolerance_said_is_the_tolerance_enforced():
    """An output everywhere below atol: zeros are within atol = 0.01 but not within the rule the
    prompt states (atol' = min(atol, rtol * max|ref|)), and the runner refuses them too."""
    said = templates.tolerance_text(0.01)
    assert "atol' = min(0.01,\nrtol * max|ref|)" in said
    ref = torch.full((4, 4096), 1 / 4096)
    checks = {c.name: c.passed for c in compare_outputs([ref], [torch.zeros_like(ref)], 0.01, 0.01).checks}
    assert checks["allclose"] is False


def test_the_cpu_prompt_welcomes_openmp_and_forbids_only_leftover_threads():
    ctx = ProposalContext(reference="class Model: ...", reference_info={}, seeds=[], history=[], round=1,
                          device="cpu", tolerance=1e-2, policy="any", unexplored_categories=[])
    parent = Node(kind="reference", round=0, key="ref", source="class Model: ...")
    implement = templates.implement_prompt(ctx, parent, Idea("Use OpenMP.", "parallelism"))
    text = templates.system_prompt() + implement
    assert "#pragma omp parallel for" in text and "-fopenmp" in text
    assert "start threads" not in text and "leave threads or processes running after a call returns" in text
    assert "_compile_kernel" not in implement and "@triton.jit" not in implement
