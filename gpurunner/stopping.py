"""Stopping a batch in flight: `Stop.set()` kills the sandboxed workers the batch is running and
`evaluate_batch` starts no more, so a cancelled search stops within a second or so instead of
after its last candidate. Set from any thread (the caller's cancel watcher)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from gpurunner.report import NOT_EVALUATED, Verdict
from gpurunner.sandbox import Worker

STOPPED_REASON = f"{NOT_EVALUATED}the evaluation was stopped (the search was cancelled)"
OUT_OF_TIME_REASON = f"{NOT_EVALUATED}the search's time budget ran out while this batch ran"


class Stop:
    """A batch's stop switch."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._running: set[Worker] = set()
        self._killed: set[int] = set()  # ids of the workers killed while they ran
        self.reason = STOPPED_REASON  # what the candidates it kept from a verdict are told

    def is_set(self) -> bool:
        return self._event.is_set()

    def set(self, reason: str = STOPPED_REASON) -> None:
        """Stop: kill every worker running now; later candidates are not started."""
        with self._lock:
            if not self._event.is_set():
                self.reason = reason
            self._event.set()
            running = list(self._running)
            self._killed.update(id(w) for w in running)
        for worker in running:
            worker._signal_all()  # the worker's own kill: process group (and sandbox uid)

    def after(self, seconds: float) -> Callable[[], None]:
        """Stop once `seconds` have passed (a search's time budget); returns the call that
        disarms it."""
        timer = threading.Timer(max(0.0, seconds), self.set, kwargs={"reason": OUT_OF_TIME_REASON})
        timer.daemon = True
        timer.start()
        return timer.cancel

    def watch(self, worker: Worker) -> Callable[[], None]:
        """Kill `worker` if the batch is stopped while it runs; returns the call that stops
        watching it (before the worker is closed, so no reaped process is ever signalled)."""
        with self._lock:
            self._running.add(worker)
            stopped = self._event.is_set()
            if stopped:
                self._killed.add(id(worker))
        if stopped:
            worker._signal_all()

        def unwatch() -> None:
            with self._lock:
                self._running.discard(worker)
        return unwatch

    def killed(self, worker: Worker) -> bool:
        """Whether `worker` was killed by this stop (its verdict is then not the candidate's)."""
        with self._lock:
            return id(worker) in self._killed


def watch(stop: Stop | None, worker: Worker) -> Callable[[], None]:
    """`stop.watch(worker)`, or nothing to undo without a stop."""
    return stop.watch(worker) if stop is not None else (lambda: None)


@contextmanager
def within(time_left_s: float | None, stop: Stop | None = None) -> Iterator[Stop | None]:
    """`stop` (a new one if there is none) set once `time_left_s` has passed, a search's
    remaining time budget, and disarmed on leaving; `stop` unchanged without a budget."""
    if time_left_s is None:
        yield stop
        return
    stop = stop or Stop()
    disarm = stop.after(time_left_s)
    try:
        yield stop
    finally:
        disarm()


def stopped_verdict(device: str, reason: str = STOPPED_REASON) -> Verdict:
    """The verdict of a candidate the stop kept from being evaluated."""
    return Verdict(verdict="runtime_error", reason=reason, device=device, error=reason)
