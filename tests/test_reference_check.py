"""Validating a reference (gpurunner.check_reference and `python -m gpurunner check`):
valid references are summarised, each kind of broken one gets a specific message and line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpurunner import check_reference
from tests.fixtures.runner import REFERENCES, reference_source


def test_it_summarises_a_valid_reference():
    report = check_reference(reference_source("linear_relu"))
    assert report.ok, report.error
    assert report.input_shapes == [[16, 32]] and report.input_dtypes == ["float32"]
    assert report.output_shapes == [[16, 24]] and report.output_dtypes == ["float32"]
    assert report.flops == 2 * 16 * 32 * 24  # the matrix product of the linear layer
    assert report.bytes == (16 * 32 + 16 * 24) * 4  # inputs + outputs
    assert report.parameters == 32 * 24 + 24
    assert report.init_inputs == [32, 24]
    assert "aten::addmm" in report.operators
    assert 0 < report.eager_ms_estimate < 1000  # a few eager calls, for the first prompt


@pytest.mark.parametrize(("name", "words", "line"), [
    ("bad_syntax", "syntax error on line 6", 6),
    ("bad_missing_get_inputs", "defines no `get_inputs`", None),
    ("bad_forward_raises", "Model.forward raised RuntimeError", 8),
    ("bad_output_type", "returns a dict, not a tensor", 6),
    ("bad_inputs_type", "get_inputs() returns a Tensor, not a non-empty list", 10),
    ("bad_too_large", "exceeds the", 10),
])
def test_it_names_the_problem_and_its_line(name, words, line):
    report = check_reference(reference_source(name))
    assert not report.ok
    assert words in report.error
    assert report.line == line


def test_the_command_line_exits_0_with_a_summary_and_2_with_the_error():
    ok = subprocess.run([sys.executable, "-m", "gpurunner", "check",
                         str(REFERENCES / "softmax_rows.py"), "--json"],
                        capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0, ok.stderr
    data = json.loads(ok.stdout)
    assert data["ok"] and data["output_shapes"] == [[8, 4096]] and data["bytes"] == 2 * 8 * 4096 * 4
    bad = subprocess.run([sys.executable, "-m", "gpurunner", "check",
                          str(REFERENCES / "bad_forward_raises.py")],
                         capture_output=True, text=True, timeout=300)
    assert bad.returncode == 2
    assert "line 8" in bad.stderr


def test_the_report_describes_the_cpu_it_ran_on():
    import os

    report = check_reference(reference_source("softmax_rows"), device="cpu")
    hw = report.hardware
    assert hw["kind"] == "cpu" and hw["cores"] == len(os.sched_getaffinity(0)) and hw["torch"]
    assert isinstance(hw["vector_isa"], list) and hw["torch_cpu_capability"]
