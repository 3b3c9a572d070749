"""Running one search: claim it, drive the engine through a DjangoStore, record how it ended.

Used by the huey task and by `manage.py optimize` (in-process). Every status change goes
through emit('search_status'). A worker holds a search by its `resumes` value (the claim):
claiming is one atomic UPDATE, so exactly one worker runs (or resumes) a search at a time.
"""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import DatabaseError, close_old_connections, connection
from django.db.models import Q
from django.utils import timezone

from search.engine.statuses import FINAL_SEARCH_STATUSES, NodeStatus, SearchStatus
from search.engine.types import ProviderRefused, SearchConfig
from search.events import emit
from search.models import LibraryKernel, Node, Search
from search.store import DjangoStore

log = logging.getLogger(__name__)

LIBRARY_SEEDS = 2  # kept kernels of similar problems a new search starts from
LIBRARY_SCAN = 500  # the fastest kept kernels compared by signature


def claim_queued(search_id: int) -> int | None:
    """Take a queued search for this worker; its claim, or None when it is not queued."""
    now = timezone.now()
    if not Search.objects.filter(id=search_id, status=SearchStatus.QUEUED).update(status=SearchStatus.RUNNING, heartbeat=now, started=now):
        return None
    return Search.objects.values_list("resumes", flat=True).get(id=search_id)


def reclaim_stale(now: datetime | None = None) -> list[tuple[int, int]]:
    """Claim every running search whose heartbeat is older than SEARCH_STALE_AFTER_S.

    Each claim is one `UPDATE ... WHERE id=? AND resumes=<seen> AND heartbeat=<seen>`, so of
    several workers doing this at once exactly one wins each search. Returns (id, claim) pairs.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.SEARCH_STALE_AFTER_S)
    stale = Search.objects.filter(status=SearchStatus.RUNNING).filter(Q(heartbeat__lt=cutoff) | Q(heartbeat__isnull=True))
    claimed = []
    for search_id, resumes, heartbeat in stale.values_list("id", "resumes", "heartbeat"):
        if resumes >= settings.SEARCH_MAX_RESUMES:
            _give_up(search_id, resumes, heartbeat, now)
            continue
        won = Search.objects.filter(id=search_id, status=SearchStatus.RUNNING, resumes=resumes, heartbeat=heartbeat).update(
            resumes=resumes + 1, heartbeat=now
        )
        if won:
            claimed.append((search_id, resumes + 1))
    return claimed


def _give_up(search_id: int, resumes: int, heartbeat: datetime | None, now: datetime) -> None:
    """Fail a search whose worker died again after SEARCH_MAX_RESUMES resumes: something in it
    (a candidate, the proposer) keeps killing its worker. Its tree and best kernel are kept."""
    reason = (f"its worker died {resumes + 1} times (resumed {resumes} times); the search stops "
              "with its best kernel so far")
    done = Search.objects.filter(id=search_id, status=SearchStatus.RUNNING, resumes=resumes, heartbeat=heartbeat).update(
        status=SearchStatus.FAILED, status_reason=reason, finished=now)
    if done:
        round_ = Search.objects.values_list("round", flat=True).get(id=search_id)
        emit(search_id, "search_status", {"status": SearchStatus.FAILED, "round": round_, "reason": reason})


def provider_keys() -> dict[str, Any]:
    """API keys and endpoints for the proposers; they stay in this process, never the runner's."""
    keys = {
        "openai": settings.OPENAI_API_KEY,
        "openai_base_url": settings.OPENAI_BASE_URL or "",
        "anthropic": settings.ANTHROPIC_API_KEY,
        "anthropic_base_url": settings.ANTHROPIC_BASE_URL or "",
        "openai_timeout_s": settings.OPENAI_TIMEOUT_S,
        "anthropic_timeout_s": settings.ANTHROPIC_TIMEOUT_S,
        "max_output_tokens": settings.LLM_MAX_OUTPUT_TOKENS,
        "reasoning_effort": settings.OPENAI_REASONING_EFFORT,
        "thinking_budget": settings.ANTHROPIC_THINKING_BUDGET,
        "openai_api": settings.OPENAI_API,
        "endpoints": settings.LLM_ENDPOINTS,
    }
    return {k: v for k, v in keys.items() if v}


def library_seeds(search: Search, config: SearchConfig) -> list[str]:
    """Sources of the best kept kernels of similar problems (same operators) on the same device:
    the owner's own, and those their owners chose to share. The engine evaluates each again
    against this search's reference before it can seed anything (SearchRun.library_seeds)."""
    if not config.use_library or not search.problem.signature:
        return []
    from search.engine.library import similar_kernels

    offered = Q(owner_id=search.owner_id) | Q(shared=True)
    kept = (LibraryKernel.objects.filter(offered, device=config.device)
            .exclude(search_id=search.id)
            .order_by("-speedup").values_list("signature", "source")[:LIBRARY_SCAN])
    return similar_kernels(search.problem.signature, list(kept), limit=LIBRARY_SEEDS)


def keep_in_library(search: Search, best: Node) -> None:
    """Keep a finished search's best kernel in its owner's library, under its problem's
    operator signature: only a correct kernel whose every check passed."""
    if best.kind != "kernel" or best.status != NodeStatus.CORRECT or not best.speedup:
        return
    checks = (best.verdict or {}).get("checks") or []
    if not checks or not all(c.get("passed") for c in checks):
        return
    LibraryKernel.objects.update_or_create(
        search=search,
        defaults={"owner_id": search.owner_id, "signature": search.problem.signature,
                  "problem": search.problem, "source": best.source, "backend": best.backend,
                  "device": search.config.get("device", "cpu"), "speedup": best.speedup},
    )


class CancelWatch:
    """Polls the search's cancel flag from a thread while it runs (every SEARCH_CANCEL_POLL_S)
    and sets `stop`: the evaluation batch in flight is interrupted, not waited for."""

    def __init__(self, search_id: int, stop: Any, interval_s: float) -> None:
        self.search_id, self.stop, self.interval_s = search_id, stop, interval_s
        self.done = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"cancel-watch-{search_id}", daemon=True)

    def run(self) -> None:
        try:
            while not self.done.wait(self.interval_s):
                try:
                    if Search.objects.filter(id=self.search_id, cancel_requested=True).exists():
                        self.stop.set()
                        return
                except DatabaseError:  # a busy database: look again at the next tick
                    continue
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> CancelWatch:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.done.set()
        self.thread.join(timeout=5)


class Heartbeat:
    """Beats for a running search from a thread, so a long evaluation batch is not mistaken
    for a dead worker; a killed process stops beating and the search goes stale."""

    def __init__(self, store: DjangoStore, interval_s: float) -> None:
        self.store, self.interval_s = store, interval_s
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self.run, name=f"heartbeat-{store.search_id}", daemon=True)

    def run(self) -> None:
        try:
            while not self.stopped.wait(self.interval_s):
                try:
                    self.store.heartbeat()
                except DatabaseError:  # a busy database: one missed beat is harmless, the next counts
                    log.warning("heartbeat of search %s skipped: database busy", self.store.search_id)
        finally:
            connection.close()  # this thread's own connection

    def __enter__(self) -> Heartbeat:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stopped.set()
        self.thread.join(timeout=5)


def set_status(store: DjangoStore, status: str, reason: str = "") -> bool:
    """Record a status (fenced by the store's claim) and stream it; False if the claim is gone."""
    now = timezone.now()
    fields: dict[str, Any] = {"status": status, "status_reason": reason[:2000]}
    if status in FINAL_SEARCH_STATUSES:
        fields["finished"] = now
    if not store.held_rows().update(**fields):
        store.lost = True
        return False
    round_ = Search.objects.values_list("round", flat=True).get(id=store.search_id)
    store.publish("search_status", {"status": status, "round": round_, "reason": reason})
    return True


def call_engine(engine: Callable[..., Any], search: Search, config: SearchConfig, proposer: Any,
                evaluator: Any, store: DjangoStore) -> Any:
    """Call run_search, passing library seeds when the engine takes them."""
    kwargs: dict[str, Any] = {}
    if "library_seeds" in inspect.signature(engine).parameters:
        kwargs["library_seeds"] = library_seeds(search, config)
    return engine(search.problem.source, search.problem.info, config, proposer, evaluator, store, **kwargs)


def execute_search(search_id: int, claim: int | None, *, listener: Callable[[Any], None] | None = None,
                   engine: Callable[..., Any] | None = None, proposer: Any = None,
                   evaluator: Any = None) -> str:
    """Run (or resume) a claimed search to its end; returns the final status.

    Ends finished, cancelled or failed (with the error as the reason) — never stuck running —
    unless another worker re-claimed it meanwhile ("lost": that worker finishes it).
    """
    search = Search.objects.select_related("problem").get(id=search_id)
    store = DjangoStore(search_id, claim=claim, listener=listener)
    config = SearchConfig.from_dict(search.config)
    resumed = search.resumes > 0 and search.checkpoint is not None
    if not set_status(store, SearchStatus.RUNNING, "resumed after a worker stopped" if resumed else ""):
        return "lost"
    from gpurunner.stopping import Stop

    stop = Stop()
    try:
        with Heartbeat(store, settings.SEARCH_HEARTBEAT_S), \
                CancelWatch(search_id, stop, settings.SEARCH_CANCEL_POLL_S):
            if engine is None:
                from search.engine import run_search as engine
            if proposer is None:
                from search.proposers import make_proposer

                proposer = make_proposer(config, provider_keys())
            if evaluator is None:
                from search.evaluation import make_evaluator

                evaluator = make_evaluator(stop)
            outcome = call_engine(engine, search, config, proposer, evaluator, store)
    except ProviderRefused as exc:  # a key, quota, credit or model the provider refuses
        if store.lost:
            return "lost"
        close_old_connections()
        finish(store, SearchStatus.FAILED, str(exc))
        return SearchStatus.FAILED
    except Exception as exc:
        log.exception("search %s failed", search_id)
        if store.lost:
            return "lost"
        close_old_connections()
        finish(store, SearchStatus.FAILED, f"{type(exc).__name__}: {exc}")
        return SearchStatus.FAILED
    if store.lost:
        return "lost"
    best = getattr(outcome, "best", outcome)  # a SearchOutcome, or the best node itself
    if best is not None and getattr(best, "id", None):
        store.held_rows().update(best_node_id=best.id)
    cancelled = getattr(outcome, "stop_reason", "") == "cancelled" or Search.objects.filter(
        id=search_id, cancel_requested=True).exists()
    reason = getattr(outcome, "detail", "") or getattr(outcome, "stop_reason", "") or ""
    if cancelled:
        return finish(store, SearchStatus.CANCELLED, "cancelled by the owner")
    status = finish(store, SearchStatus.FINISHED, "" if reason == "completed" else reason)
    search.refresh_from_db()
    if search.best_node_id:
        keep_in_library(search, Node.objects.get(id=search.best_node_id))
    return status


def finish(store: DjangoStore, status: str, reason: str = "") -> str:
    """Record the final status (the engine's last `costs` event already set the counters)."""
    set_status(store, status, reason)
    return status
