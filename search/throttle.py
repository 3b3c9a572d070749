"""Login throttling: after too many failed logins for one account, or from one address, every
login attempt for it is refused (even with the right password) until the window has passed.

Counts live in Django's cache (Redis when REDIS_URL is set, so every web process shares them).
"""

from __future__ import annotations

import hashlib
import time

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    """The client's address: REMOTE_ADDR, or behind the TLS proxy the address it appended last
    to X-Forwarded-For (earlier entries come from the client and prove nothing)."""
    if settings.BEHIND_PROXY:
        forwarded = [a.strip() for a in request.META.get("HTTP_X_FORWARDED_FOR", "").split(",") if a.strip()]
        if forwarded:
            return forwarded[-1]
    return request.META.get("REMOTE_ADDR") or "unknown"


def _keys(username: str, address: str) -> dict[str, tuple[str, int]]:
    account = hashlib.sha256(username.strip().lower().encode()).hexdigest()[:32]
    return {
        "account": (f"login-fail:user:{account}", settings.LOGIN_MAX_FAILURES_PER_ACCOUNT),
        "address": (f"login-fail:addr:{address}", settings.LOGIN_MAX_FAILURES_PER_ADDRESS),
    }


def refusal(username: str, address: str) -> str | None:
    """Why a login for `username` from `address` is refused now, or None when it may proceed."""
    now = time.time()
    for what, (key, limit) in _keys(username, address).items():
        count, since = cache.get(key, (0, now))
        if count >= limit:
            wait = max(1, int(since + settings.LOGIN_WINDOW_S - now))
            subject = "this account" if what == "account" else "your address"
            return (f"Too many failed logins for {subject} ({count} in the last "
                    f"{settings.LOGIN_WINDOW_S // 60} minutes; the limit is {limit}). "
                    f"Try again in {(wait + 59) // 60} minute(s).")
    return None


def record_failure(username: str, address: str) -> None:
    """Count a failed login against the account and the address (for LOGIN_WINDOW_S)."""
    now = time.time()
    for key, _ in _keys(username, address).values():
        count, since = cache.get(key, (0, now))
        cache.set(key, (count + 1, since), timeout=max(1, int(since + settings.LOGIN_WINDOW_S - now)))


def record_success(username: str, address: str) -> None:
    """A successful login clears the account's failures (the address keeps its count)."""
    cache.delete(_keys(username, address)["account"][0])
