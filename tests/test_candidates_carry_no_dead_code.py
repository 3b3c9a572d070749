"""Every candidate the built-in proposer writes carries only the code its recipe runs: no
branch a template left switched off for the reader to skip."""

from __future__ import annotations

import re
from pathlib import Path

from search.engine.types import Node, ProposalContext
from search.proposers.builtin import BuiltinProposer
from tests.fixtures.graphs import report
from tests.fixtures.runner import reference_source

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
# A condition a template filled with a constant, or an expression it left meaningless.
DEAD = re.compile(r"\bif (False|True|None|0|1)\b|\bNone is (not )?None\b|// 0\)|\bif \(0\)|\bif not (False|True)\b"
                  r"|\belse False\b|\bif False else\b")
GRAPH_REFERENCES = ["graph_linear_gelu_layernorm", "graph_conv_bias_relu_mean", "graph_matmul_softmax_logsumexp",
                    "graph_rmsnorm", "graph_matmul_sum_max_lse", "swish_residual", "sum_middle_dim"]


def every_candidate(source: str, info: dict, device: str) -> list[str]:
    root = Node(kind="reference", round=0, id=1, key="root", source=source)
    ctx = ProposalContext(reference=source, reference_info=info, seeds=[root], history=[], round=1,
                          device=device, tolerance=1e-2, policy="any", unexplored_categories=[])
    proposer = BuiltinProposer(device, extra_ideas=["torch_compile", "torch_compile_cpu"])
    ideas, _ = proposer.propose_ideas(ctx, 40)
    return [impl.source for idea in ideas for impl in proposer.implement(ctx, root, idea, 4) if impl.source]


def dead_code(candidate: str) -> list[str]:
    # The reference is embedded verbatim: only what the templates wrote is the proposer's.
    written = candidate.split("# ---- End of the reference.", 1)[-1]
    return [line.strip() for line in written.splitlines() if DEAD.search(line)]


def test_candidates_of_the_examples_carry_no_dead_template_code():
    found = {}
    count = 0
    for path in sorted(EXAMPLES.rglob("*.py")):
        for device in ("cpu", "cuda"):
            for candidate in every_candidate(path.read_text(), {}, device):
                count += 1
                if dead_code(candidate):
                    found[f"{path.name} {device}"] = dead_code(candidate)
    assert count > 100 and not found


def test_candidates_generated_from_graphs_carry_no_dead_template_code():
    count = 0
    for name in GRAPH_REFERENCES:
        source = reference_source(name)
        for device in ("cpu", "cuda"):
            for candidate in every_candidate(source, report(source), device):
                count += 1
                assert not dead_code(candidate), (name, device, dead_code(candidate))
    assert count >= 2 * len(GRAPH_REFERENCES)


def test_the_scan_finds_what_the_old_templates_left():
    old = "# ---- End of the reference.\n        if False:\n    return max(16, -(-rows // 0))\n" \
          "        return _as_float32(out) if None is not None else out\n"
    assert len(dead_code(old)) == 3
