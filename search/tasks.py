"""huey tasks: run a search, re-claim stale ones. (GPU evaluation jobs: search/gpu_queue.py.)"""

from __future__ import annotations

import logging

from huey import crontab
from huey.contrib.djhuey import db_periodic_task, db_task, on_startup

from search.execution import execute_search, reclaim_stale
from search.quotas import claim_next

log = logging.getLogger(__name__)


@db_task()
def run_search_task(search_id: int, claim: int | None = None) -> str:
    """Resume a re-claimed search (its claim); then, or for a newly queued one (claim None),
    run queued searches in fair order until none is left that may run: one task per queued
    search, yet no owner's searches jump the queue ahead of another's (search.quotas)."""
    # "skipped": nothing may run now (cancelled, taken, or its owner at the limit)
    outcome = execute_search(search_id, claim) if claim is not None else "skipped"
    while (claimed := claim_next()) is not None:
        outcome = execute_search(*claimed)
    return outcome


def resume_stale() -> list[int]:
    """Re-claim every stale running search and queue its resumption; the ids resumed."""
    resumed = []
    for search_id, claim in reclaim_stale():
        log.warning("resuming search %s (claim %s): its worker stopped beating", search_id, claim)
        run_search_task(search_id, claim)
        resumed.append(search_id)
    return resumed


@db_periodic_task(crontab(minute="*"))
def reclaim_stale_searches() -> list[int]:
    """Every minute: resume searches whose worker died (kill -9 loses huey's task)."""
    return resume_stale()


@on_startup()
def reclaim_at_consumer_start() -> None:
    """A restarted consumer picks up what the previous one left running."""
    try:
        resume_stale()
    except Exception:  # the database may not be migrated yet on a first start
        log.exception("could not check for stale searches at start")
