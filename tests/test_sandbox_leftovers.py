"""Nothing a candidate starts or writes outlives its evaluation: a double-forked daemon,
32 MB in /dev/shm and files in its working folder are gone after a normal run and after the
candidate's crash, with a PID namespace (the CPU) and without one (the CUDA case)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest

from gpurunner import api, evaluate_batch, sandbox
from gpurunner.containment import available
from gpurunner.uids import work_root
from tests.fixtures.runner import hostile_source, reference_source

pytestmark = pytest.mark.skipif(not available()[0], reason=available()[1])


def processes_with(marker: str) -> list[int]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(int(proc.name))
        except OSError:
            continue
    return found


def leftovers(marker: str) -> list[str]:
    left = [f"process {pid}" for pid in processes_with(marker)]
    left += [str(p) for p in Path("/dev/shm").glob(f"{marker}*")]
    left += [str(p) for p in work_root().rglob(f"{marker}*")]
    return left


@pytest.mark.parametrize("pid_namespace", ["1", "0"])
def test_nothing_is_left_after_a_run_or_a_crash(runner_options, monkeypatch, pid_namespace):
    monkeypatch.setenv("GPURUNNER_PID_NAMESPACE", pid_namespace)
    api._close_spares()  # spares were started under the other setting
    run, crash = f"run{uuid.uuid4().hex[:8]}", f"CRASH{uuid.uuid4().hex[:8]}"
    verdicts = evaluate_batch(reference_source("softmax_rows"),
                              [hostile_source("hostile_leaves_processes", marker=m)
                               for m in (run, crash)], runner_options())
    sandbox._finish_reaping()
    # The daemon ran (the candidate checks it did); a daemon that left the worker's process
    # group while the candidate was timed is refused by the runner's own check, and one
    # reparented to the job's process (the first of a PID namespace) by the harness's too.
    failed = {c.name for c in verdicts[0].failed_checks()}
    assert verdicts[0].verdict in ("correct", "rejected"), verdicts[0].reason + verdicts[0].error
    assert failed <= {"no_child_processes", "stayed_in_group"}
    assert verdicts[1].verdict == "runtime_error" and "SIGSEGV" in verdicts[1].reason
    assert leftovers(run) == [] and leftovers(crash) == []
    assert os.path.isdir(work_root())
