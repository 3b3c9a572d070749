"""One measurement function: warm-up, cache flush, device events, median and spread.

The clock functions are bound when this module is imported, which the worker does before it
imports any candidate: a candidate that patches `time.perf_counter` or `torch.cuda.Event`
changes nothing here (and `integrity` reports the patch).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

_perf_counter = time.perf_counter
_Event = torch.cuda.Event
_event_record = torch.cuda.Event.record
_event_elapsed = torch.cuda.Event.elapsed_time
_cuda_sync = torch.cuda.synchronize

L2_FLUSH_BYTES = 256 * 1024 * 1024  # several times any current L2 (H100: 50 MB)
CPU_FLUSH_BYTES = 32 * 1024 * 1024  # larger than this class of CPU's last-level cache


@dataclass
class Timing:
    """Milliseconds per call: median, spread (interquartile range as % of the median),
    quartiles, how many timed runs, and the host wall-clock cross-check on CUDA."""

    median_ms: float
    spread_pct: float
    p25_ms: float
    p75_ms: float
    min_ms: float
    reps: int
    host_median_ms: float | None = None  # wall clock around call + device-wide sync
    event_check_ms: float | None = None  # events around the same calls as host_median_ms
    times_ms: list[float] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _quartiles(times: list[float]) -> tuple[float, float, float]:
    if len(times) < 4:
        med = statistics.median(times)
        return min(times), med, max(times)
    q = statistics.quantiles(times, n=4)
    return q[0], q[1], q[2]


def bench(fn: Callable[[], Any], *, device: str, prepare: Callable[[int], None] | None = None,
          warmup: int = 3, target_ms: float = 200.0, min_reps: int = 10, max_reps: int = 200,
          cross_check_reps: int = 10) -> Timing:
    """Time `fn()` and return the median of many runs.

    Protocol: `warmup` untimed calls; then `reps` timed calls (enough to fill `target_ms`,
    within [min_reps, max_reps]). Before each timed call `prepare(i)` runs untimed (the
    runner refills the inputs there) and the cache is flushed by writing a buffer larger than
    it. On CUDA each call sits between two events on the current stream and one device-wide
    sync ends the loop; a second short loop times call + `torch.cuda.synchronize()` on the
    host clock, which catches work hidden on other streams. On the CPU, the monotonic
    `perf_counter` brackets each call.
    """
    cuda = device.startswith("cuda")
    flush = torch.empty(L2_FLUSH_BYTES if cuda else CPU_FLUSH_BYTES, dtype=torch.int8,
                        device=device)

    def sync() -> None:
        if cuda:
            _cuda_sync()

    prep = prepare or (lambda i: None)
    for i in range(max(1, warmup)):
        prep(i)
        fn()
    sync()
    # Estimate one call to choose the number of timed runs.
    prep(0)
    sync()
    t0 = _perf_counter()
    fn()
    sync()
    est_ms = max((_perf_counter() - t0) * 1e3, 1e-3)
    reps = int(min(max_reps, max(min_reps, target_ms / est_ms)))

    times: list[float] = []
    if cuda:
        starts = [_Event(enable_timing=True) for _ in range(reps)]
        ends = [_Event(enable_timing=True) for _ in range(reps)]
        for i in range(reps):
            prep(i)
            flush.zero_()
            _event_record(starts[i])
            fn()
            _event_record(ends[i])
        _cuda_sync()
        times = [_event_elapsed(s, e) for s, e in zip(starts, ends, strict=True)]
    else:
        for i in range(reps):
            prep(i)
            flush.zero_()
            t0 = _perf_counter()
            fn()
            times.append((_perf_counter() - t0) * 1e3)

    host_median = event_xc = None
    if cuda and cross_check_reps:
        # Same call, starting from an idle device: events and the host clock both see the
        # launch overhead, so they differ only by the sync (~0.01 ms) unless work ran
        # outside the current stream.
        host: list[float] = []
        pairs = [(_Event(enable_timing=True), _Event(enable_timing=True))
                 for _ in range(cross_check_reps)]
        for i in range(cross_check_reps):
            prep(i)
            flush.zero_()
            _cuda_sync()
            t0 = _perf_counter()
            _event_record(pairs[i][0])
            fn()
            _event_record(pairs[i][1])
            _cuda_sync()
            host.append((_perf_counter() - t0) * 1e3)
        host_median = statistics.median(host)
        event_xc = statistics.median(_event_elapsed(s, e) for s, e in pairs)

    p25, med, p75 = _quartiles(times)
    spread = 100.0 * (p75 - p25) / med if med > 0 else 0.0
    del flush
    return Timing(median_ms=med, spread_pct=spread, p25_ms=p25, p75_ms=p75, min_ms=min(times),
                  reps=reps, host_median_ms=host_median, event_check_ms=event_xc,
                  times_ms=times)


def summarize(times: list[float]) -> Timing:
    """A Timing (median, quartiles, spread) of times in milliseconds measured elsewhere."""
    p25, med, p75 = _quartiles(times)
    spread = 100.0 * (p75 - p25) / med if med > 0 else 0.0
    return Timing(median_ms=med, spread_pct=spread, p25_ms=p25, p75_ms=p75, min_ms=min(times),
                  reps=len(times), times_ms=list(times))


def paired_ratio(num: list[float], den: list[float], resamples: int = 2000,
                 level: float = 0.95) -> tuple[float, float, float]:
    """median(num) / median(den) and its bootstrap confidence interval (low, high).

    `num[i]` and `den[i]` were measured back to back, so pairs are resampled together: load
    that comes and goes moves both sides of a pair and stays out of the ratio's interval.
    Deterministic (fixed generator), so the same times give the same interval.
    """
    import random

    if len(num) != len(den) or not num:
        raise ValueError(f"paired times needed, got {len(num)} and {len(den)}")
    ratio = statistics.median(num) / statistics.median(den)
    if len(num) < 3:
        return ratio, 0.0, float("inf")
    rng = random.Random(0)
    n = len(num)
    stats = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        stats.append(statistics.median(num[i] for i in idx) /
                     statistics.median(den[i] for i in idx))
    stats.sort()
    tail = (1.0 - level) / 2
    return ratio, stats[int(tail * resamples)], stats[min(resamples - 1,
                                                          int((1 - tail) * resamples))]
