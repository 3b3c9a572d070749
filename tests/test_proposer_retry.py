"""Retrying model calls: bounded tries, Retry-After honoured and capped, backoff otherwise."""

from __future__ import annotations

import email.utils
import time

import pytest

from search.engine.types import ProposerError
from search.proposers.retry import TransientError, retry_after, with_retries


def flaky(failures: list[TransientError]):
    def call():
        if failures:
            raise failures.pop(0)
        return "answer"
    return call


def test_it_waits_what_the_server_asks_then_succeeds():
    waits: list[float] = []
    result = with_retries(flaky([TransientError("429", 2.5)]), sleep=waits.append)
    assert result == "answer" and waits == [2.5]


def test_a_long_retry_after_is_capped():
    waits: list[float] = []
    with_retries(flaky([TransientError("429", 600.0)]), cap_s=30.0, sleep=waits.append)
    assert waits == [30.0]


def test_without_retry_after_the_wait_grows():
    waits: list[float] = []
    with_retries(flaky([TransientError("500")] * 3), base_s=1.0, sleep=waits.append)
    assert len(waits) == 3 and waits[0] <= 1.0 < waits[2] <= 4.0


def test_it_gives_up_after_the_last_try_with_the_reason():
    waits: list[float] = []
    with pytest.raises(ProposerError, match="HTTP 503 overloaded \\(gave up after 3 tries\\)"):
        with_retries(flaky([TransientError("HTTP 503 overloaded")] * 5), tries=3, sleep=waits.append)
    assert len(waits) == 2


def test_other_errors_are_not_retried():
    def call():
        raise ProposerError("HTTP 401")

    with pytest.raises(ProposerError, match="401"):
        with_retries(call, sleep=lambda s: pytest.fail("must not wait"))


def test_retry_after_reads_seconds_milliseconds_and_dates():
    assert retry_after({"retry-after": "0.2"}) == 0.2
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 50 < retry_after({"retry-after": later}) <= 60
    assert retry_after({"retry-after": "soon"}) is None and retry_after({}) is None
