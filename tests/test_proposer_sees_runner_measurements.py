"""What the runner measured reaches the proposer's prompts: the reference's eager time
estimated at validation in round 1, and each seed kernel's time per operator (profiled by
the runner) from round 2 on."""

from __future__ import annotations

import re

from gpurunner import evaluate
from search.engine.feedback import render_reference_info, render_seeds
from search.engine.runner_evaluator import eval_options
from search.engine.types import Node, SearchConfig
from search.engine.verdicts import apply_verdict
from tests.fixtures.runner import candidate_source, reference_source


def test_round_one_shows_the_eager_time_estimated_when_the_reference_was_checked():
    text = render_reference_info({"eager_ms_estimate": 1.234})
    assert "time per call: eager PyTorch about 1.234 ms" in text
    assert "not measured yet" not in text


def test_the_paired_time_replaces_the_estimate_once_measured():
    text = render_reference_info({"eager_ms_estimate": 1.234, "eager_ms": 0.9, "compile_ms": 0.5})
    assert "eager PyTorch 0.9 ms; torch.compile 0.5 ms" in text and "about" not in text


def test_a_search_asks_the_runner_for_profiles():
    assert eval_options(SearchConfig(device="cpu")).profile is True


def test_a_seeds_time_per_operator_comes_from_the_runners_profile(runner_options):
    verdict = evaluate(reference_source("softmax_rows"), candidate_source("softmax_torch_rewrite"),
                       runner_options(profile=True))
    assert verdict.verdict == "correct", verdict.reason
    assert verdict.profile and verdict.profile["total_us"] > 0
    assert any(name.startswith("aten::") for name in verdict.profile["ops"])
    seed = apply_verdict(Node(kind="kernel", round=1, key="r1/ref/i0/k0",
                              source=candidate_source("softmax_torch_rewrite")), verdict.to_dict())
    line = next(ln for ln in render_seeds([seed]).splitlines() if ln.startswith("Time per operator"))
    assert re.search(r"aten::\w+ [\d.]+ us \(\d+%\)", line), line


def test_a_search_asks_the_runner_for_hardware_counters():
    assert eval_options(SearchConfig(device="cuda")).counters is True


def test_a_seeds_kernels_show_their_registers_spills_and_counters():
    kernels = [{"name": "add", "registers": 56, "local_bytes": 0, "launches": 1,
                "duration_us": 43.4, "dram_pct": 77.7, "sm_pct": 5.8, "occupancy_pct": 47.5,
                "theoretical_occupancy_pct": 56.2},
               {"name": "spilling(float *)", "registers": 24, "local_bytes": 560}]
    seed = Node(kind="kernel", round=1, key="r1/ref/i0/k0", source="class ModelNew: ...",
                verdict={"kernels": kernels}, status="correct")
    text = render_seeds([seed])
    block = text.split("Per kernel", 1)[1].split("```", 1)[0]
    assert "Nsight Compute's counters for one call" in block
    assert ("- `add`: 56 registers/thread, no local memory (no spills), 43.4 us under ncu, "
            "DRAM throughput 77.7% of peak") in block
    assert "- `spilling(float *)`: 24 registers/thread, 560 B local memory/thread" in block


def test_a_seed_without_counters_says_why():
    seed = Node(kind="kernel", round=1, key="r1/ref/i0/k0", source="class ModelNew: ...",
                status="correct", verdict={"kernels": [{"name": "f", "registers": 8}],
                                           "kernels_note": "Nsight Compute did not finish"})
    text = render_seeds([seed])
    assert "(registers and local memory as ptxas compiled them):" in text
    assert "(no Nsight Compute counters: Nsight Compute did not finish)" in text
