"""A runner killed with SIGKILL takes its sandboxes with it (a parent-death signal on every
layer), and the working folder it left is removed by the next runner."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from gpurunner.containment import available
from gpurunner.sandbox import sweep_workdirs
from gpurunner.uids import work_root
from tests.fixtures.runner import hostile_source, reference_source
from tests.test_sandbox_leftovers import processes_with

pytestmark = pytest.mark.skipif(not available()[0], reason=available()[1])

RUNNER = """
import sys
from gpurunner import EvalOptions, evaluate
ref, cand = open(sys.argv[1]).read(), open(sys.argv[2]).read()
evaluate(ref, cand, EvalOptions(device="cpu", cache_dir=sys.argv[3], compile_baseline=False,
                                timeout_s=300))
"""


def wait_for(condition, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.2)
    return False


@pytest.mark.parametrize("pid_namespace", ["1", "0"])
def test_killing_the_runner_kills_its_sandbox(tmp_path, runner_cache, pid_namespace):
    marker = f"killed{uuid.uuid4().hex[:8]}"
    (tmp_path / "ref.py").write_text(reference_source("softmax_rows"))
    (tmp_path / "cand.py").write_text(hostile_source("hostile_hangs_with_child", marker=marker))
    env = {**os.environ, "GPURUNNER_PID_NAMESPACE": pid_namespace,
           "PYTHONPATH": os.getcwd()}
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, str(tmp_path / "ref.py"),
                               str(tmp_path / "cand.py"), str(runner_cache)], env=env)
    try:
        assert wait_for(lambda: processes_with(marker), 120), "the candidate never started"
    finally:
        runner.send_signal(signal.SIGKILL)
        runner.wait()
    assert wait_for(lambda: not processes_with(marker), 10), "the sandbox outlived its runner"
    left = [p for p in work_root().glob("*/candidate.py") if marker in p.read_text()]
    assert left, "the killed runner's working folder is there until the next runner sweeps"
    sweep_workdirs(min_age_s=0)
    assert not left[0].parent.exists()
