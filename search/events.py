"""The one place that publishes progress: a row in the event log, then a wake-up.

The table is the truth; the channel-layer message only wakes websocket consumers, which then
read the new rows themselves. Without a channel layer the consumers poll the table.
"""

from __future__ import annotations

from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

from search.models import SearchEvent

WAKE_TYPE = "events.wake"  # dispatched to the consumer's events_wake handler


def group_name(search_id: int) -> str:
    """The channel-layer group every viewer of a search joins."""
    return f"search-{search_id}"


def emit(search_id: int, kind: str, payload: dict[str, Any]) -> SearchEvent:
    """Append an event to the search's log and wake its viewers once the row is committed."""
    event = SearchEvent.objects.create(search_id=search_id, kind=kind, payload=payload)
    # After commit: a woken consumer must be able to read the row it was woken for.
    transaction.on_commit(lambda: wake(search_id, event.id))
    return event


def wake(search_id: int, event_id: int) -> None:
    """Tell the search's viewers that rows up to event_id exist; a no-op without a layer."""
    layer = get_channel_layer()
    if layer is None:
        return
    async_to_sync(layer.group_send)(group_name(search_id), {"type": WAKE_TYPE, "id": event_id})


def event_json(event: SearchEvent) -> dict[str, Any]:
    """An event as the websocket and the events API send it."""
    return {
        "id": event.id,
        "kind": event.kind,
        "payload": event.payload,
        "created": event.created.isoformat(),
    }


def events_after(search_id: int, after: int, limit: int = 500) -> list[dict[str, Any]]:
    """The search's events with id > after, oldest first, at most limit of them."""
    rows = SearchEvent.objects.filter(search_id=search_id, id__gt=after).order_by("id")[:limit]
    return [event_json(e) for e in rows]
