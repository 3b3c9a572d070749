"""A run that ends because the disk is full says so, with the free and total space; one that
writes a file past the per-file limit says which limit it hit."""

from __future__ import annotations

import re
import signal

from gpurunner import evaluate
from gpurunner.containment import FILE_SIZE_LIMIT
from gpurunner.sandbox import WorkerResult, describe_exit
from tests.fixtures.runner import candidate_source, reference_source


def test_a_candidate_that_meets_a_full_disk_is_told_out_of_disk_with_the_numbers(runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("disk_full_on_write"),
                 runner_options())
    assert v.verdict == "runtime_error"
    assert re.match(r"out of disk \([\d.]+ GiB of [\d.]+ GiB free on /\S+\): ", v.reason), v.reason
    assert "No space left on device" in v.reason


def test_a_file_past_the_limit_is_named_with_the_limit():
    why = describe_exit(WorkerResult("crashed", "running", -signal.SIGXFSZ))
    assert "SIGXFSZ" in why and f"{FILE_SIZE_LIMIT / 2**30:.0f} GiB limit per file" in why
