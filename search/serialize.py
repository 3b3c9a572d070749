"""Nodes and searches as the JSON the stream, the API and the pages share (docs/architecture.md)."""

from __future__ import annotations

from typing import Any

from search.engine.speedups import Speedup, speedup_of
from search.models import Node, Search


def first_line(text: str, limit: int = 300) -> str:
    """The first non-empty line of text, cut to limit characters."""
    for line in (text or "").splitlines():
        if line.strip():
            return line.strip()[:limit]
    return ""


def node_json(node: Node) -> dict[str, Any]:
    """The NODE payload of node_added/node_updated events: what the tree needs, no sources."""
    verdict = node.verdict or {}
    return {
        "id": node.id,
        "parent_id": node.parent_id,
        "kind": node.kind,
        "round": node.round,
        "key": node.key,
        "idea": node.idea,
        "category": node.category,
        "backend": node.backend or None,
        "status": node.status,
        **speedup_of(node).to_dict(),
        "cand_ms": node.cand_ms,
        "roofline_pct": verdict.get("roofline_pct"),
        "roofline_bound": verdict.get("roofline_bound"),
        "precision": verdict.get("precision"),
        "error": first_line(node.error),
        "model": node.model,
        "cost_usd": node.cost_usd,
    }


def node_detail_json(node: Node) -> dict[str, Any]:
    """A node with its source, full verdict, error, parent source (for diffs) and cost."""
    data = node_json(node)
    data.update(
        {
            "search_id": node.search_id,
            "source": node.source,
            "parent_source": node.parent.source if node.parent_id and node.parent else "",
            "verdict": node.verdict or {},
            "error_full": node.error,
            "input_tokens": node.input_tokens,
            "output_tokens": node.output_tokens,
        }
    )
    return data


def best_json(search: Search) -> dict[str, Any]:
    """The search's best kernel so far: node id and speedups (None when nothing is correct)."""
    best = search.best_node
    if best is None:
        return {"node_id": None, **Speedup().to_dict()}
    return {"node_id": best.id, **speedup_of(best).to_dict()}


def costs_json(search: Search) -> dict[str, Any]:
    """The payload of the `costs` event: counts and what the search spent."""
    return {
        "candidates": search.candidates,
        "correct": search.correct,
        "input_tokens": search.input_tokens,
        "output_tokens": search.output_tokens,
        "cost_usd": search.cost_usd,
        "gpu_seconds": search.gpu_seconds,
    }


def search_summary_json(search: Search) -> dict[str, Any]:
    """A search without its nodes: listing pages and the share page header."""
    return {
        "id": search.id,
        "title": search.title or search.problem.name,
        "problem": search.problem.name,
        "status": search.status,
        "status_reason": search.status_reason,
        "round": search.round,
        "config": search.config,
        "best": best_json(search),
        "costs": costs_json(search),
        "created": search.created.isoformat() if search.created else None,
        "started": search.started.isoformat() if search.started else None,
        "finished": search.finished.isoformat() if search.finished else None,
        "shared": bool(search.share_slug),
    }


def search_json(search: Search, with_sources: bool = False) -> dict[str, Any]:
    """The whole search: summary, every node (sources and verdicts too when with_sources)."""
    data = search_summary_json(search)
    nodes = search.nodes.select_related("parent").order_by("id")
    data["nodes"] = [node_detail_json(n) if with_sources else node_json(n) for n in nodes]
    if with_sources:
        data["reference"] = search.problem.source
        data["reference_info"] = search.problem.info
    return data
