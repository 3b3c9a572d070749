"""A problem whose inputs and outputs, with the copies an evaluation keeps, exceed the host's
memory is refused before any worker starts, with the numbers; one that fits is not."""

from __future__ import annotations

import re
from pathlib import Path

from gpurunner.api import SHARED_COPIES, memory_refusal
from gpurunner.problem import Problem


def problem(rows: int) -> Problem:
    report = {"input_shapes": [[rows, 4096]], "input_dtypes": ["float32"],
              "output_shapes": [[rows, 4096]], "output_dtypes": ["float32"]}
    return Problem("", "key", report, Path("."))


def test_a_problem_larger_than_the_hosts_memory_is_refused_with_the_numbers():
    why = memory_refusal(problem(1 << 26), "cpu")  # 1 TiB of inputs and 1 TiB of outputs
    assert why is not None and why.startswith("out of host memory: evaluating needs about")
    need, ins, outs, copies, avail = re.search(
        r"about ([\d.]+) GiB \(([\d.]+) GiB of inputs and ([\d.]+) GiB of outputs, (\d+) copies each\) "
        r"and ([\d.]+) GiB is available", why).groups()
    assert (float(ins), float(outs), int(copies)) == (1024.0, 1024.0, SHARED_COPIES)
    assert float(need) == SHARED_COPIES * 2048.0 and float(avail) < float(need)


def test_a_problem_that_fits_is_not_refused():
    assert memory_refusal(problem(256), "cpu") is None


def test_device_memory_is_left_to_the_devices_own_report():
    assert memory_refusal(problem(1 << 26), "cuda") is None
