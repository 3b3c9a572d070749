"""The prompts a model sees in rounds 1 and 2 of a CUDA search, rendered from the real templates
for docs/prompts/ (`python -m search.proposers.sample_prompts` rewrites them).

The search is made up so that every part of a prompt shows: an H100 as gpurunner.hardware
describes one, the reference's times, a kernel that failed at run time (its error as the model
reads it), one that did not compile, and a correct seed whose verdict (times, per-operator
profile, registers and Nsight Compute counters) was measured on an H100.
"""

from __future__ import annotations

import json
from pathlib import Path

from search.engine.feedback import tried_ideas, unexplored_categories
from search.engine.types import Idea, Node, ProposalContext
from search.engine.verdicts import apply_verdict
from search.proposers import templates

ROOT = Path(__file__).resolve().parents[2]
# TWO_PASS evaluated against examples/layernorm.py on an H100 (`python -m gpurunner evaluate
# ... --device cuda --profile --counters --json`): a real verdict, with its kernels' figures.
SEED_VERDICT = ROOT / "docs" / "prompts" / "seed_verdict_h100.json"
REFERENCE = (ROOT / "examples" / "layernorm.py").read_text()

H100 = {
    "kind": "cuda", "name": "NVIDIA H100 80GB HBM3", "compute_capability": "9.0", "sm": "sm_90a",
    "architecture": "Hopper", "features": "wgmma (warpgroup tensor-core MMA), TMA (bulk async copies with "
    "tensor maps), thread-block clusters with distributed shared memory, fp8", "sm_count": 132,
    "memory_bytes": 85_520_809_984, "cuda": "13.0", "warp_size": 32, "max_threads_per_sm": 2048,
    "registers_per_sm": 65536, "shared_memory_per_sm": 233_472, "shared_memory_per_block": 49_152,
    "shared_memory_per_block_optin": 232_448, "l2_bytes": 52_428_800, "peak_bandwidth": 3.35e12,
    "measured_bandwidth": 3.0e12, "flops_fp32": 55e12, "flops_tf32": 400e12, "flops_bf16": 798e12,
    "torch": "2.11.0+cu130", "triton": "3.6.0",
}
INFO = {
    "ok": True, "device": "cuda", "input_shapes": [[16, 32, 64, 64]], "input_dtypes": ["float32"],
    "output_shapes": [[16, 32, 64, 64]], "output_dtypes": ["float32"], "init_inputs": [[64, 64]],
    "flops": 1.6777e7, "bytes": 1.6810e7, "operators": ["aten::native_layer_norm"], "parameters": 8192,
    "eager_ms_estimate": 0.0637, "hardware": H100,
}

TWO_PASS = '''import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layernorm_rows(x_ptr, w_ptr, b_ptr, out_ptr, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    centered = tl.where(mask, x - mean, 0.0)
    var = tl.sum(centered * centered, axis=0) / n_cols
    w = tl.load(w_ptr + cols, mask=mask)
    b = tl.load(b_ptr + cols, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, centered * tl.rsqrt(var + eps) * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x):
        x = x.contiguous()
        out = torch.empty_like(x)
        n_cols = self.ln.weight.numel()
        layernorm_rows[(x.numel() // n_cols,)](x, self.ln.weight, self.ln.bias, out, n_cols, self.ln.eps,
                                               BLOCK=triton.next_power_of_2(n_cols))
        return out
'''
WRONG_VIEW = TWO_PASS.replace("        x = x.contiguous()\n", "        x = x.view(-1, 64)\n")
TRACEBACK = """Traceback (most recent call last):
  File "/srv/kernelweb/gpurunner/candidate.py", line 131, in run_candidate_job
    outputs = model(*inputs)
  File "/srv/kernelweb/.venv/lib/python3.12/site-packages/torch/nn/modules/module.py", line 1775, in _call_impl
    return forward_call(*args, **kwargs)
  File "/var/lib/kernelweb/runner-cache/job-3f9c/candidate.py", line 28, in forward
    x = x.view(-1, 64)
RuntimeError: view size is not compatible with input tensor's size and stride (at least one dimension spans \
across two contiguous subspaces). Use .reshape(...) instead.
"""


def _kernel(key: str, node_id: int, parent: int, source: str, verdict: dict) -> Node:
    return apply_verdict(Node(kind="kernel", round=1, id=node_id, parent_id=parent, key=key, source=source),
                         verdict)


def round_two_tree() -> list[Node]:
    """Round 1 as it ended: a failed and a correct implementation of one idea, a build error."""
    measured = json.loads(SEED_VERDICT.read_text())
    root = Node(kind="reference", round=0, id=1, key="ref", source=REFERENCE, status="correct",
                cand_ms=measured["ref_ms"])
    fuse = Node(kind="idea", round=1, id=2, parent_id=1, key="r1/ref/i0", category="memory",
                idea="One Triton program per (64, 64) slab: load it once, compute mean and variance in "
                     "registers, write the normalized output once.")
    vector = Node(kind="idea", round=1, id=5, parent_id=1, key="r1/ref/i1", category="compute",
                  idea="A CUDA kernel with one warp per row and float4 loads, reducing with __shfl_xor_sync.")
    failed = _kernel("r1/ref/i0/k0", 3, 2, WRONG_VIEW, {
        "verdict": "runtime_error", "checks": [], "error": TRACEBACK, "backend": "triton",
        "reason": "ModelNew raised RuntimeError: view size is not compatible with input tensor's size and stride "
                  "(at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead. "
                  "(line 28)"})
    seed = _kernel("r1/ref/i0/k1", 4, 2, TWO_PASS, json.loads(SEED_VERDICT.read_text()))
    broken = _kernel("r1/ref/i1/k0", 6, 5, "...", {
        "verdict": "compile_error", "checks": [], "backend": "cuda",
        "reason": "build failed: cuda_sources line 14: error: identifier \"__shfl_xor\" is undefined",
        "compile_log": "cuda_sources line 14: error: identifier \"__shfl_xor\" is undefined\n"
                       "      sum += __shfl_xor(sum, offset);\n             ^"})
    return [root, fuse, failed, seed, vector, broken]


def contexts() -> tuple[ProposalContext, ProposalContext]:
    """The round-1 and round-2 contexts of the made-up search."""
    tree = round_two_tree()
    root, seed = tree[0], tree[3]
    first = ProposalContext(reference=REFERENCE, reference_info=INFO, seeds=[Node(kind="reference", round=0,
                            key="ref", source=REFERENCE, status="correct")], history=[], round=1, device="cuda",
                            tolerance=1e-2, policy="any", unexplored_categories=unexplored_categories([]))
    history = tried_ideas(tree)
    second = ProposalContext(reference=REFERENCE, reference_info=INFO | {"eager_ms": root.cand_ms,
                             "compile_ms": seed.verdict["compile_ref_ms"]}, seeds=[seed], history=history, round=2, device="cuda",
                             tolerance=1e-2, policy="any", unexplored_categories=unexplored_categories(history))
    return first, second


def render() -> dict[str, str]:
    """{file name: Markdown} for docs/prompts/."""
    first, second = contexts()
    idea = Idea(round_two_tree()[1].idea, "memory")
    header = ("<!-- Rendered by `python -m search.proposers.sample_prompts` from the prompt templates in "
              "search/proposers/prompts/; a made-up search on an H100 whose seed verdict was measured on one "
              "(docs/prompts/seed_verdict_h100.json). -->\n\n")
    system = f"## System prompt\n\n{templates.system_prompt()}\n\n"
    return {
        "round1.md": header + "# Round 1\n\n" + system
        + f"## Ideas request\n\n{templates.ideas_prompt(first, 4)}\n\n"
        + f"## Implementation request\n\n{templates.implement_prompt(first, first.seeds[0], idea)}\n",
        "round2.md": header + "# Round 2\n\n"
        + f"## Ideas request\n\n{templates.ideas_prompt(second, 4)}\n",
    }


if __name__ == "__main__":
    out = ROOT / "docs" / "prompts"
    out.mkdir(exist_ok=True)
    for name, text in render().items():
        (out / name).write_text(text)
        print(f"wrote {out / name}")
