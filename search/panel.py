"""What the node panel shows: one node's idea, code, diff, checks, timings and cost."""

from __future__ import annotations

from dataclasses import fields
from typing import Any

from gpurunner.facts import KERNEL_FIELDS
from gpurunner.report import Verdict
from search.engine.types import CATEGORIES
from search.highlight import highlight_diff, highlight_source
from search.models import Node, Search


def parent_kernel(node: Node) -> Node | None:
    """The nearest ancestor that holds code (a kernel or the reference), skipping ideas."""
    parent = node.parent
    while parent is not None and parent.kind == "idea":
        parent = parent.parent
    return parent


def node_code(search: Search, node: Node) -> str:
    """The node's source; the reference node falls back to the problem's source."""
    if node.source:
        return node.source
    return search.problem.source if node.kind == "reference" else ""


def idea_of(node: Node) -> Node | None:
    """The idea node a kernel implements (its parent), or the node itself for an idea."""
    if node.kind == "idea":
        return node
    if node.parent is not None and node.parent.kind == "idea":
        return node.parent
    return None


def time_by_operator(profile: Any, top: int = 8) -> list[dict[str, Any]]:
    """The slowest operators of the kernel's profiled call, with their share of the call."""
    if not isinstance(profile, dict) or not isinstance(profile.get("ops"), dict):
        return []
    ops = {str(k): float(v) for k, v in profile["ops"].items() if isinstance(v, int | float) and v > 0}
    total = float(profile.get("total_us") or 0) or sum(ops.values())
    ranked = sorted(ops.items(), key=lambda kv: -kv[1])[:top]
    return [{"name": name, "us": us, "pct": 100 * us / total if total else None} for name, us in ranked]


def kernel_table(kernels: Any) -> list[dict[str, Any]]:
    """The kernel's GPU kernels as the panel's table shows them: only rows with a name, each
    figure (gpurunner.facts.KERNEL_FIELDS) present or None, so the template needs no guard."""
    if not isinstance(kernels, list):
        return []
    return [{"name": str(k["name"])} | {key: k.get(key) if isinstance(k.get(key), int | float)
                                         else None for key in KERNEL_FIELDS}
            for k in kernels if isinstance(k, dict) and k.get("name")]


def panel_context(search: Search, node: Node) -> dict[str, Any]:
    """Everything the panel fragment renders for `node`; code and diff come highlighted."""
    # Every Verdict field present: templates read them without guarding each lookup.
    verdict: dict[str, Any] = {f.name: None for f in fields(Verdict)} | (node.verdict or {})
    code = node_code(search, node)
    idea = idea_of(node)
    ctx: dict[str, Any] = {
        "search": search,
        "node": node,
        "verdict": verdict,
        "idea": idea,
        "idea_text": (idea.idea if idea else "") or node.idea,
        "category": CATEGORIES.get((idea.category if idea else "") or node.category, ""),
        "source_html": highlight_source(code) if code else "",
        "checks": verdict.get("checks") or [],
        "checks_passed": sum(1 for c in verdict.get("checks") or [] if c.get("passed")),
        "downloadable": node.kind == "kernel" and bool(node.source),
        "time_by_operator": time_by_operator(verdict.get("profile")),
        "kernel_rows": kernel_table(verdict.get("kernels")),
    }
    parent = parent_kernel(node)
    if parent is not None and code:
        parent_code = node_code(search, parent)
        parent_name = "reference" if parent.kind == "reference" else f"node {parent.pk}"
        ctx["parent"] = parent
        ctx["diff_html"] = highlight_diff(parent_code, code, parent_name, f"node {node.pk}")
    if node.kind == "idea":
        ctx["implementations"] = list(node.children.order_by("id"))
    return ctx
