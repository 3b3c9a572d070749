"""Websockets: replay a search's event log after `after`, then stream new rows as they land.

One code path for both set-ups: with a channel layer the consumer joins `search-<id>` and a
wake-up makes it read new rows (the table is the truth, the message only wakes); with no layer
it polls the table. A reconnect with the last id it saw loses nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.http import Http404

from search.access import search_for_share_or_404, search_for_user_or_404
from search.events import events_after, group_name
from search.models import Search

REFUSED = 4403  # close code for "not yours": the same for a missing and a foreign search
BATCH = 500


def after_from_scope(scope: dict[str, Any]) -> int:
    """The `after` query parameter (last event id the viewer has), 0 when absent or junk."""
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    try:
        return max(0, int(query.get("after", ["0"])[0]))
    except ValueError:
        return 0


class SearchEventsConsumer(AsyncJsonWebsocketConsumer):
    """`/ws/searches/<id>/?after=N`: the owner's (or the local user's) live event stream."""

    poll_interval_s = 0.25  # no channel layer: how often the table is read
    safety_interval_s = 5.0  # with a layer: re-read anyway, in case a wake-up went missing

    async def connect(self) -> None:
        self.search_id = await self.authorize()
        if self.search_id is None:
            # Accept, then close with the code: a close before accepting reaches the browser
            # as a bare HTTP 403, and the page could not tell "refused" from "server down".
            await self.accept()
            await self.close(code=REFUSED)
            return
        self.after = after_from_scope(self.scope)
        self.woken = asyncio.Event()
        self.group = group_name(self.search_id)
        if self.channel_layer is not None:
            await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        self.pump = asyncio.create_task(self.stream())

    @database_sync_to_async
    def authorize(self) -> int | None:
        """The search id when the connecting user may watch it, else None."""
        try:
            return search_for_user_or_404(self.scope.get("user"), self.scope["url_route"]["kwargs"]["search_id"]).id
        except Http404:
            return None

    @database_sync_to_async
    def read(self) -> list[dict[str, Any]] | None:
        """The next events after self.after; None once the viewer lost access."""
        return events_after(self.search_id, self.after, limit=BATCH)

    async def stream(self) -> None:
        while True:
            events = await self.read()
            if events is None:
                await self.close(code=REFUSED)
                return
            for event in events:
                await self.send_json(event)
                self.after = event["id"]
            if len(events) == BATCH:
                continue  # more rows are waiting
            await self.wait_for_news()

    async def wait_for_news(self) -> None:
        if self.channel_layer is None:
            await asyncio.sleep(self.poll_interval_s)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.woken.wait(), self.safety_interval_s)
        self.woken.clear()

    async def events_wake(self, message: dict[str, Any]) -> None:
        """A wake-up from emit(): new rows exist; the stream task reads them."""
        if message.get("id", 0) > self.after:
            self.woken.set()

    async def receive_json(self, content: Any, **kwargs: Any) -> None:
        """Viewers only listen; anything they send is ignored."""

    async def disconnect(self, code: int) -> None:
        pump = getattr(self, "pump", None)
        if pump is not None:
            pump.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await pump
        if getattr(self, "search_id", None) is not None and self.channel_layer is not None:
            await self.channel_layer.group_discard(self.group, self.channel_name)


class SharedSearchEventsConsumer(SearchEventsConsumer):
    """`/ws/share/<slug>/?after=N`: the read-only stream of a shared search, for anyone with
    the link; it closes once the owner revokes the share."""

    @database_sync_to_async
    def authorize(self) -> int | None:
        try:
            return search_for_share_or_404(self.scope["url_route"]["kwargs"]["slug"]).id
        except Http404:
            return None

    @database_sync_to_async
    def read(self) -> list[dict[str, Any]] | None:
        slug = self.scope["url_route"]["kwargs"]["slug"]
        if not Search.objects.filter(id=self.search_id, share_slug=slug).exists():
            return None
        return events_after(self.search_id, self.after, limit=BATCH)
