"""A Store that keeps the tree in lists: for tests, benchmarks and scripts.

It records node additions and updates as events the way the web app's store emits them, and can
simulate a worker dying (kill -9) after a number of kernel results, for resume tests.
"""

from __future__ import annotations

import copy
from typing import Any

from search.engine.types import FINAL_STATUSES, Node


class SimulatedCrash(BaseException):  # BaseException: nothing in the engine may swallow it
    """Raised by MemoryStore to stand for the worker process dying."""


class MemoryStore:
    """The Store protocol over plain lists.

    `crash_after_results=n` raises SimulatedCrash when the n-th kernel result is written (that
    result is lost, as when a process dies before committing). `revive()` clears it so a new
    run_search on the same store resumes.
    """

    def __init__(self, crash_after_results: int | None = None) -> None:
        self._nodes: list[Node] = []
        self._by_key: dict[str, Node] = {}
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.checkpoint: dict[str, Any] | None = None
        self.heartbeats = 0
        self.cancel = False
        self.crash_after_results = crash_after_results
        self.results_written = 0

    # --- the Store protocol -----------------------------------------------------------------
    def add_node(self, node: Node) -> Node:
        """Store a copy with a new id, or return the stored node when the key is known."""
        if node.key in self._by_key:
            return copy.deepcopy(self._by_key[node.key])
        stored = copy.deepcopy(node)
        stored.id = len(self._nodes) + 1
        self._nodes.append(stored)
        self._by_key[stored.key] = stored
        self.events.append(("node_added", {"node": stored.to_dict()}))
        return copy.deepcopy(stored)

    def update_node(self, node: Node) -> None:
        stored = self._by_key[node.key]
        if node.kind == "kernel" and node.status in FINAL_STATUSES and node.verdict:
            self.results_written += 1
            if self.crash_after_results is not None and self.results_written >= self.crash_after_results:
                raise SimulatedCrash(f"worker died writing result {self.results_written}")
        index = self._nodes.index(stored)
        self._nodes[index] = self._by_key[node.key] = copy.deepcopy(node)
        self.events.append(("node_updated", {"node": node.to_dict()}))

    def nodes(self) -> list[Node]:
        return [copy.deepcopy(n) for n in self._nodes]

    def emit(self, kind: str, payload: dict[str, Any]) -> None:
        self.events.append((kind, payload))

    def save_checkpoint(self, state: dict[str, Any]) -> None:
        self.checkpoint = copy.deepcopy(state)

    def load_checkpoint(self) -> dict[str, Any] | None:
        return copy.deepcopy(self.checkpoint)

    def heartbeat(self) -> None:
        self.heartbeats += 1

    def cancel_requested(self) -> bool:
        return self.cancel

    # --- for tests --------------------------------------------------------------------------
    def revive(self) -> None:
        """Forget the simulated crash so the search can be resumed on this store."""
        self.crash_after_results = None

    def node(self, key: str) -> Node:
        return copy.deepcopy(self._by_key[key])

    def events_of(self, kind: str) -> list[dict[str, Any]]:
        return [payload for k, payload in self.events if k == kind]
