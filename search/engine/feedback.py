"""What a proposer learns from the search so far, as data and as text for prompts.

Every tried idea carries the outcome of each implementation: verdict and failed checks, the
compiler error, max error, timings, speedups over eager and torch.compile, roofline percent.
"""

from __future__ import annotations

from typing import Any

from search.engine.types import CATEGORIES, Node, TriedIdea
from search.engine.verdicts import first_lines


def outcome_of(kernel: Node) -> dict[str, Any]:
    """One implementation's outcome, the way the proposer sees it."""
    verdict = kernel.verdict or {}
    failed = [
        f"{c.get('name')}: {c.get('detail')}".rstrip(": ")
        for c in verdict.get("checks", [])
        if isinstance(c, dict) and not c.get("passed", True)
    ]
    error = ""
    if kernel.status != "correct":
        error = first_lines(verdict.get("compile_log") or verdict.get("error") or kernel.error, 6, 800)
    return {
        "key": kernel.key,
        "status": kernel.status,
        "speedup": kernel.speedup,
        "speedup_vs_compile": kernel.speedup_vs_compile,
        "cand_ms": kernel.cand_ms,
        "ref_ms": verdict.get("ref_ms"),
        "failed_checks": failed,
        "error": error,
        "max_abs_err": verdict.get("max_abs_err"),
        "rel_err": verdict.get("rel_err"),
        "roofline_pct": verdict.get("roofline_pct"),
        "precision": verdict.get("precision"),
        "backend": kernel.backend,
    }


def tried_ideas(nodes: list[Node], before_round: int | None = None) -> list[TriedIdea]:
    """Every idea in the tree (of rounds before `before_round`, if given) with its outcomes."""
    kernels_by_parent: dict[int | None, list[Node]] = {}
    for node in nodes:
        if node.kind == "kernel":
            kernels_by_parent.setdefault(node.parent_id, []).append(node)
    history = []
    for node in nodes:
        if node.kind != "idea" or not node.idea:
            continue
        if before_round is not None and node.round >= before_round:
            continue
        outcomes = [outcome_of(k) for k in kernels_by_parent.get(node.id, [])]
        history.append(TriedIdea(node.round, node.idea, node.category, outcomes))
    return history


def unexplored_categories(history: list[TriedIdea]) -> list[str]:
    """Categories (keys of CATEGORIES) that no tried idea belongs to yet."""
    tried = {t.category for t in history}
    return [c for c in CATEGORIES if c not in tried]


def _num(value: Any, fmt: str) -> str | None:
    return None if value is None else format(value, fmt)


def render_outcome(outcome: dict[str, Any]) -> str:
    """One line (plus an error excerpt) describing how an implementation fared."""
    parts = [outcome.get("status", "?")]
    if outcome.get("speedup") is not None:
        parts.append(f"{outcome['speedup']:.2f}x eager")
    if outcome.get("speedup_vs_compile") is not None:
        parts.append(f"{outcome['speedup_vs_compile']:.2f}x torch.compile")
    if outcome.get("cand_ms") is not None:
        parts.append(f"{outcome['cand_ms']:.4g} ms")
    if outcome.get("roofline_pct") is not None:
        parts.append(f"{outcome['roofline_pct']:.0f}% of roofline")
    if outcome.get("max_abs_err") is not None:
        parts.append(f"max abs err {outcome['max_abs_err']:.2g}")
    if outcome.get("rel_err") is not None:
        parts.append(f"rel err {outcome['rel_err']:.2g}")
    if outcome.get("precision"):
        parts.append(f"precision {outcome['precision']}")
    if outcome.get("backend"):
        parts.append(f"backend {outcome['backend']}")
    line = ", ".join(parts)
    if outcome.get("failed_checks"):
        line += "; failed checks: " + "; ".join(outcome["failed_checks"])
    if outcome.get("error"):
        line += "\n      error: " + outcome["error"].replace("\n", "\n      ")
    return line


def render_history(history: list[TriedIdea]) -> str:
    """Every tried idea and its outcomes as plain text, oldest first."""
    if not history:
        return "No ideas have been tried yet."
    lines = []
    for tried in history:
        label = CATEGORIES.get(tried.category, tried.category or "uncategorised")
        lines.append(f"- Round {tried.round} [{label}] {tried.text}")
        if not tried.outcomes:
            lines.append("    (not evaluated yet)")
        for i, outcome in enumerate(tried.outcomes):
            lines.append(f"    implementation {i + 1}: {render_outcome(outcome)}")
    return "\n".join(lines)


def render_measurements(kernel: Node) -> str:
    """A kernel's measurements in one line (the reference reads as the eager baseline)."""
    if kernel.kind == "reference":
        ms = _num(kernel.cand_ms, ".4g")
        return f"the reference (eager PyTorch){f', {ms} ms' if ms else ''}"
    return render_outcome(outcome_of(kernel))


def render_seeds(seeds: list[Node]) -> str:
    """The seed kernels, each with its measurements and full source."""
    blocks = []
    for i, seed in enumerate(seeds):
        blocks.append(
            f"### Seed {i + 1} ({seed.key}): {render_measurements(seed)}\n```python\n{seed.source.strip()}\n```"
        )
    return "\n\n".join(blocks)


def render_reference_info(info: dict[str, Any]) -> str:
    """Shapes, dtypes, operators and roofline inputs of the reference, as a few lines."""
    lines = []
    if info.get("input_shapes"):
        pairs = zip(info.get("input_shapes", []), info.get("input_dtypes", []) or [""] * 99, strict=False)
        lines.append("inputs: " + ", ".join(f"{d} {list(s)}".strip() for s, d in pairs))
    if info.get("output_shapes"):
        pairs = zip(info.get("output_shapes", []), info.get("output_dtypes", []) or [""] * 99, strict=False)
        lines.append("outputs: " + ", ".join(f"{d} {list(s)}".strip() for s, d in pairs))
    if info.get("init_inputs"):
        lines.append(f"constructor arguments: {info['init_inputs']}")
    if info.get("operators"):
        lines.append("operators: " + ", ".join(info["operators"]))
    if info.get("flops"):
        lines.append(f"FLOPs per call: {info['flops']:.4g}")
    if info.get("bytes"):
        lines.append(f"bytes moved at least: {info['bytes']:.4g}")
    return "\n".join(lines) or "(no measurements of the reference)"
