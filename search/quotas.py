"""Per-user limits and a fair queue.

- Running searches: at most SEARCH_MAX_RUNNING_PER_USER of one owner run at once; the queue is
  claimed round-robin by owner (fewest running first, then the owner served longest ago), so
  one user's searches cannot keep another's queued. (Two workers claiming at the same instant
  for one owner may start one search beyond the limit; the next claims catch up.)
- Queued searches: at most SEARCH_MAX_QUEUED_PER_USER waiting per owner (429 beyond).
- Validations (a reference run in the sandbox inside the request): at most
  VALIDATION_MAX_PER_USER per user and VALIDATION_MAX_TOTAL in all at once (429 beyond),
  counted in Django's cache (shared through Redis when there is one).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import Count, Max

from search.engine.statuses import SearchStatus
from search.models import Search

SLOT_TTL_S = 1800  # a counter left by a killed process heals itself after this


class TooBusy(Exception):
    """A limit is reached: the message says which, with the numbers (HTTP 429)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def check_queue_room(user: Any) -> None:
    """Raise TooBusy when the user already has the most queued searches allowed."""
    queued = Search.objects.filter(owner=user, status=SearchStatus.QUEUED).count()
    if queued >= settings.SEARCH_MAX_QUEUED_PER_USER:
        raise TooBusy(f"You have {queued} searches waiting in the queue (the limit is "
                      f"{settings.SEARCH_MAX_QUEUED_PER_USER}); start more when some have run, or "
                      "cancel one.")


@contextmanager
def validation_slot(user_id: int) -> Iterator[None]:
    """Hold one of the user's (and the server's) validation slots; TooBusy when none is free."""
    limits = [(f"validating:user:{user_id}", settings.VALIDATION_MAX_PER_USER),
              ("validating:all", settings.VALIDATION_MAX_TOTAL)]
    taken: list[str] = []
    try:
        for key, limit in limits:
            cache.add(key, 0, timeout=SLOT_TTL_S)
            running = cache.incr(key)
            taken.append(key)
            if running > limit:
                who = ("You are already validating {n} references" if key != "validating:all"
                       else "The server is already validating {n} references")
                raise TooBusy(who.format(n=running - 1) + f" (the limit is {limit} at a time); "
                              "try again when one has finished.")
        yield
    finally:
        for key in taken:
            try:
                cache.decr(key)
            except ValueError:  # expired meanwhile
                pass


def next_fair_search() -> int | None:
    """The queued search to run next: round-robin by owner, within each owner's running limit."""
    running = dict(Search.objects.filter(status=SearchStatus.RUNNING).values("owner_id")
                   .annotate(n=Count("id")).values_list("owner_id", "n"))
    oldest: dict[int, int] = {}
    for search_id, owner_id in Search.objects.filter(status=SearchStatus.QUEUED).order_by("created", "id") \
            .values_list("id", "owner_id"):
        oldest.setdefault(owner_id, search_id)
    eligible = [o for o in oldest if running.get(o, 0) < settings.SEARCH_MAX_RUNNING_PER_USER]
    if not eligible:
        return None
    served = dict(Search.objects.filter(owner_id__in=eligible, started__isnull=False)
                  .values("owner_id").annotate(last=Max("started")).values_list("owner_id", "last"))
    never = datetime.min.replace(tzinfo=UTC)
    owner = min(eligible, key=lambda o: (running.get(o, 0), served.get(o) or never, oldest[o]))
    return oldest[owner]


def claim_next() -> tuple[int, int] | None:
    """Claim the fairly next queued search for this worker: (search id, claim), or None."""
    from search.execution import claim_queued

    for _ in range(10):  # another worker may take the chosen one first: choose again
        search_id = next_fair_search()
        if search_id is None:
            return None
        claim = claim_queued(search_id)
        if claim is not None:
            return search_id, claim
    return None
