"""The statuses of searches and nodes, declared once.

Plain enums, so the engine stays free of Django; the models build their TextChoices from
these, and the search page receives them as data (`page_statuses`), so the browser's view of
"in progress" and "final" is the server's.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any


class SearchStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class NodeStatus(StrEnum):
    PROPOSED = "proposed"  # written, not yet handed to the runner
    QUEUED = "queued"  # in the runner's batch, waiting for its turn
    COMPILING = "compiling"
    CHECKING = "checking"
    TIMING = "timing"
    CORRECT = "correct"
    INCORRECT = "incorrect"
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIMEOUT = "timeout"
    REJECTED = "rejected"
    FAILED = "failed"  # the proposer wrote no code, or the kernel was not evaluated


FINAL_SEARCH_STATUSES = frozenset({SearchStatus.FINISHED, SearchStatus.FAILED,
                                   SearchStatus.CANCELLED})
# The runner's stages a kernel passes through while its batch runs (gpurunner.api.STAGES).
LIVE_STAGES = (NodeStatus.QUEUED, NodeStatus.COMPILING, NodeStatus.CHECKING, NodeStatus.TIMING)
PENDING_STATUSES = frozenset({NodeStatus.PROPOSED, *LIVE_STAGES})
FINAL_NODE_STATUSES = frozenset(set(NodeStatus) - PENDING_STATUSES)


def page_statuses() -> dict[str, Any]:
    """The statuses as the search page's script reads them."""
    return {"node": {s.name: s.value for s in NodeStatus},
            "search": {s.name: s.value for s in SearchStatus},
            "stages": [s.value for s in LIVE_STAGES],
            "pending": sorted(s.value for s in PENDING_STATUSES),
            "final_search": sorted(s.value for s in FINAL_SEARCH_STATUSES)}
