"""Single-user mode: on a local install, every request from this machine acts as one local
account. A request from any other address gets the normal rules (login or an API token)."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth import get_user_model
from django.http import HttpRequest, HttpResponse

LOCAL_USERNAME = "local"


def local_user():
    user, _ = get_user_model().objects.get_or_create(username=LOCAL_USERNAME)
    return user


def is_loopback(address: str | None) -> bool:
    """Whether a client address is this machine (127.0.0.0/8, ::1, IPv4-mapped 127.x)."""
    if not address:
        return False
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        return False
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or bool(mapped and mapped.is_loopback)


def local_user_for(user: Any, address: str | None) -> Any:
    """`user` itself when logged in; the local user for an anonymous client on this machine
    in single-user mode; else `user` unchanged (anonymous)."""
    if user is not None and user.is_authenticated:
        return user
    if settings.LOCAL_MODE and is_loopback(address):
        return local_user()
    return user


class LocalUserMiddleware:
    """HTTP: an anonymous request from this machine acts as the local user."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if settings.LOCAL_MODE:
            request.user = local_user_for(request.user, request.META.get("REMOTE_ADDR"))
        return self.get_response(request)


class LocalUserWebsocketMiddleware:
    """Websockets (inside channels' auth middleware): the same rule for the scope's user."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if settings.LOCAL_MODE:
            address = (scope.get("client") or [None])[0]
            user = await database_sync_to_async(local_user_for)(scope.get("user"), address)
            scope = {**scope, "user": user}
        return await self.inner(scope, receive, send)
