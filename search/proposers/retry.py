"""Retrying model calls: bounded tries, exponential backoff, and the server's Retry-After."""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable, Mapping
from typing import TypeVar

from search.engine.types import ProposerError

T = TypeVar("T")


class TransientError(Exception):
    """A failure worth retrying (rate limit, overload, server error, timeout, network)."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None  # unreadable: fall back to backoff
    return max(0.0, when.timestamp() - time.time())


def with_retries(
    call: Callable[[], T],
    *,
    tries: int = 4,
    base_s: float = 1.0,
    cap_s: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
) -> T:
    """Run call(); on TransientError wait (Retry-After if given, else backoff) and try again.

    At most `tries` calls and never a wait above cap_s; then ProposerError with the last reason.
    """
    for attempt in range(tries):
        try:
            return call()
        except TransientError as exc:
            if attempt == tries - 1:
                raise ProposerError(f"{exc} (gave up after {tries} tries)") from exc
            wait = exc.retry_after_s
            if wait is None:
                wait = base_s * 2 ** attempt * (0.5 + random.random() / 2)  # jitter spreads retries
            sleep(min(cap_s, wait))
    raise AssertionError("unreachable")
