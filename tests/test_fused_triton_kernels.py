"""Generated Triton kernels compute what the reference computes: checked on the CPU with
Triton's interpreter, on the graph kinds KernelBench holds, for a whole-row-in-registers
setting and a looped one.

The interpreter must be chosen before Triton is first imported, so the candidates run in one
child process with TRITON_INTERPRET=1 (this process, and any GPU test in it, keeps compiled
Triton). The candidates embed this suite's own references: no pasted code runs here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from search.proposers.builtin.analysis import analyze
from search.proposers.builtin.families import family
from search.proposers.builtin.families.fused_triton import points
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.render import render
from tests.fixtures.graphs import report
from tests.fixtures.runner import reference_source

pytest.importorskip("triton", reason="Triton is not installed: pip install triton (the test extras)")

KINDS = ["graph_linear_gelu_layernorm", "graph_conv_bias_relu_mean", "graph_conv_bias_swish",
         "graph_matmul_softmax_logsumexp", "graph_rmsnorm", "graph_matmul_sum_max_lse",
         "graph_conv_groupnorm_elu", "graph_conv_scale_tanh_pool"]
# Matrix products whose elementwise tail a Triton GEMM takes into its epilogue.
GEMMS = ["graph_linear_bias_gelu_clamp"]

# Loads each candidate file, runs Model and ModelNew from the same seed, prints what differs.
_CHECK = r"""
import importlib.util, json, sys
import torch

results = {}
for path in sys.argv[1:]:
    spec = importlib.util.spec_from_file_location(path.rsplit("/", 1)[-1][:-3], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    torch.manual_seed(0)
    reference = module.Model(*module.get_init_inputs())
    torch.manual_seed(0)
    candidate = module.ModelNew(*module.get_init_inputs())
    same_state = list(reference.state_dict()) == list(candidate.state_dict())
    inputs = module.get_inputs()
    with torch.no_grad():
        want, got = reference(*inputs), candidate(*inputs)
    results[path] = {"shape": list(got.shape) == list(want.shape), "same_state": same_state,
                     "error": float((got - want).abs().max()) if got.shape == want.shape else None}
print(json.dumps(results))
"""


def settings(shape) -> list[dict]:
    found = points(shape)[:1]
    program = shape.program
    if program.reduce is not None and program.length > 16:  # a row in several tiles
        found.append({**found[0], "block_r": 16, "stages": 2})
    return found


@pytest.fixture(scope="module")
def interpreted(tmp_path_factory) -> dict[str, dict]:
    """Per candidate file (named <reference>_<k>.py): shape match, parameter names, max error."""
    folder: Path = tmp_path_factory.mktemp("triton-candidates")
    paths = []
    for name in KINDS:
        source = reference_source(name)
        shape = analyze(source, report(source))
        for k, setting in enumerate(settings(shape)):
            path = folder / f"{name}_{k}.py"
            path.write_text(render(Recipe("fused_triton", setting, {}), shape, source))
            paths.append(str(path))
    for name in GEMMS:
        source = reference_source(name)
        shape = analyze(source, report(source))
        for k, setting in enumerate(family("triton_gemm").points(shape)[:2]):
            path = folder / f"{name}_gemm{k}.py"
            path.write_text(render(Recipe("triton_gemm", setting, {}), shape, source))
            paths.append(str(path))
    env = {**os.environ, "TRITON_INTERPRET": "1"}
    done = subprocess.run([sys.executable, "-c", _CHECK, *paths], env=env, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return {Path(p).stem: r for p, r in json.loads(done.stdout.strip().splitlines()[-1]).items()}


@pytest.mark.parametrize("name", KINDS)
def test_the_generated_triton_kernel_matches_the_reference(name, interpreted):
    runs = {stem: r for stem, r in interpreted.items() if stem.rsplit("_", 1)[0] == name}
    assert runs
    for stem, result in runs.items():
        assert result["shape"], stem
        assert result["error"] is not None and result["error"] < 1e-4, (stem, result["error"])


def test_the_triton_gemm_computes_the_elementwise_tail_in_its_epilogue(interpreted):
    runs = {stem: r for stem, r in interpreted.items() if stem.startswith("graph_linear_bias_gelu_clamp_gemm")}
    assert len(runs) == 2
    assert all(r["shape"] and r["error"] is not None and r["error"] < 1e-4 for r in runs.values()), runs


def test_a_row_longer_than_the_tile_is_reduced_in_a_loop(interpreted):
    assert "graph_linear_gelu_layernorm_1" in interpreted  # BLOCK_R 16 over rows of 96


def test_the_candidate_owns_the_references_parameters_under_their_own_names(interpreted):
    assert all(r["same_state"] for r in interpreted.values())
