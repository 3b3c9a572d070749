"""DjangoStore: the engine's Store protocol on the database, streaming every change via emit().

The engine works on plain `search.engine.types.Node`s; this module maps them to rows and back.
A store holds the search's *claim* (its `resumes` value when this worker took it): once another
worker re-claims the search, this store's heartbeats fail and it reports a cancel, so a stale
worker stops instead of writing beside the new one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from search.engine.types import Node as EngineNode
from search.engine.types import Usage
from search.events import emit
from search.models import Node, Search, SearchEvent
from search.serialize import node_json

# Row fields copied from an engine node (kind, key and parent never change after creation).
UPDATED_FIELDS = ("idea", "category", "source", "backend", "status", "verdict", "speedup",
                  "speedup_vs_compile", "cand_ms", "error", "model", "input_tokens",
                  "output_tokens", "cost_usd")


def row_values(node: EngineNode) -> dict[str, Any]:
    """The model fields for an engine node."""
    usage = node.usage or Usage()
    return {
        "idea": node.idea or "",
        "category": node.category or "",
        "source": node.source or "",
        "backend": node.backend or "",
        "status": node.status,
        "verdict": node.verdict or {},
        "speedup": node.speedup,
        "speedup_vs_compile": node.speedup_vs_compile,
        "cand_ms": node.cand_ms,
        "error": node.error or "",
        "model": usage.model or "",
        "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens,
        "cost_usd": usage.cost_usd,
    }


def engine_node(row: Node) -> EngineNode:
    """The engine's view of a stored node."""
    return EngineNode(
        kind=row.kind, round=row.round, id=row.id, parent_id=row.parent_id, key=row.key,
        idea=row.idea, category=row.category, source=row.source, backend=row.backend or None,
        status=row.status, verdict=row.verdict or {}, speedup=row.speedup,
        speedup_vs_compile=row.speedup_vs_compile, cand_ms=row.cand_ms, error=row.error,
        usage=Usage(row.model, row.input_tokens, row.output_tokens, row.cost_usd),
    )


class DjangoStore:
    """Persists one search's tree and streams every change (implements engine Store)."""

    def __init__(self, search_id: int, claim: int | None = None,
                 listener: Callable[[SearchEvent], None] | None = None) -> None:
        self.search_id = search_id
        self.claim = claim  # the search's `resumes` value this worker holds; None = unfenced
        self.listener = listener  # sees every event after it is stored (the optimize command)
        self.lost = False

    # -- the event log -------------------------------------------------------------------
    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        """Log an event; the summary fields it carries are also kept on the Search row."""
        self._apply_to_search(kind, payload)
        self.publish(kind, payload)

    def publish(self, kind: str, payload: dict[str, Any]) -> None:
        """Log an event as is and show it to the listener."""
        event = emit(self.search_id, kind, payload)
        if self.listener is not None:
            self.listener(event)

    def _apply_to_search(self, kind: str, payload: dict[str, Any]) -> None:
        rows = self.held_rows()
        if kind == "round_started":
            rows.update(round=int(payload.get("round", 0)))
        elif kind == "best_changed" and payload.get("node_id"):
            rows.update(best_node_id=payload["node_id"])
        elif kind == "costs":
            counters = ("candidates", "correct", "input_tokens", "output_tokens", "cost_usd", "gpu_seconds")
            rows.update(**{k: payload[k] for k in counters if payload.get(k) is not None})

    # -- nodes -----------------------------------------------------------------------------
    def add_node(self, node: EngineNode) -> EngineNode:
        """Store a new node (streamed as node_added); an existing key returns the stored node."""
        existing = Node.objects.filter(search_id=self.search_id, key=node.key).first() if node.key else None
        if existing is not None:
            return engine_node(existing)
        try:
            with transaction.atomic():
                row = Node.objects.create(search_id=self.search_id, parent_id=node.parent_id,
                                          key=node.key, kind=node.kind, round=node.round,
                                          **row_values(node))
        except IntegrityError:  # the same key added concurrently: the stored one wins
            return engine_node(Node.objects.get(search_id=self.search_id, key=node.key))
        if not node.key:
            Node.objects.filter(id=row.id).update(key=f"n{row.id}")
            row.key = f"n{row.id}"
        node.id, node.key = row.id, row.key
        self.publish("node_added", {"node": node_json(row)})
        return engine_node(row)

    def update_node(self, node: EngineNode) -> None:
        """Save the node's current state (streamed as node_updated)."""
        values = row_values(node)
        Node.objects.filter(id=node.id, search_id=self.search_id).update(**values)
        row = Node.objects.get(id=node.id)
        self.publish("node_updated", {"node": node_json(row)})

    def nodes(self) -> list[EngineNode]:
        """Every stored node of the search, in creation order."""
        return [engine_node(r) for r in Node.objects.filter(search_id=self.search_id).order_by("id")]

    # -- crash safety and cancelling ---------------------------------------------------------
    def held_rows(self) -> QuerySet[Search]:
        """The search's row while this worker holds it (empty once another worker re-claimed it)."""
        rows = Search.objects.filter(id=self.search_id)
        return rows if self.claim is None else rows.filter(resumes=self.claim)

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        """Keep the engine's resume state (with a heartbeat) while this worker holds the search."""
        if not self.held_rows().update(checkpoint=state, heartbeat=timezone.now()):
            self.lost = True

    def load_checkpoint(self) -> dict[str, Any] | None:
        return Search.objects.filter(id=self.search_id).values_list("checkpoint", flat=True).first()

    def heartbeat(self) -> None:
        """Prove this worker is alive; notices when another worker has re-claimed the search."""
        if not self.held_rows().filter(status="running").update(heartbeat=timezone.now()):
            self.lost = True

    def cancel_requested(self) -> bool:
        """True once the owner cancelled, or once this worker no longer holds the search."""
        if self.lost:
            return True
        flag = Search.objects.filter(id=self.search_id).values_list("cancel_requested", flat=True).first()
        return bool(flag) or flag is None
