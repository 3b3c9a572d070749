"""What a worker writes is read with a bound: 300 MB on stderr costs the runner a few kB."""

from __future__ import annotations

import tracemalloc

from gpurunner import evaluate
from tests.fixtures.runner import candidate_source, reference_source


def test_a_flood_on_stderr_is_read_only_at_its_tail(runner_options):
    tracemalloc.start()
    try:
        v = evaluate(reference_source("softmax_rows"), candidate_source("forge_stderr_flood"),
                     runner_options())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert v.verdict == "correct", v.reason
    assert peak < 64 << 20, f"the runner held {peak / 2**20:.0f} MB"
