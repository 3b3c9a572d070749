"""A baseline that fails says why with its exception, not the first lines of a traceback
(the compiled baseline's PermissionError was cut off after the harness's own frames)."""

from __future__ import annotations

import pytest

from gpurunner.paired import Peer, RunFailure, _ok

TRACEBACK = ('Traceback (most recent call last):\n  File "/srv/gpurunner/candidate.py", line 152, '
             'in go\n    outputs = inp.as_outputs(self.model(*self.args))\n' + "  ...\n" * 40)
REPLY = {"ok": False, "verdict": "runtime_error", "error": TRACEBACK,
         "reason": "ModelNew raised PermissionError: [Errno 13] Permission denied: "
                   "'/tmp/gpurunner-work-0/w-0j17yexx' (line 14)"}


def test_a_failed_baseline_names_its_exception_and_keeps_the_traceback():
    peer = Peer(worker=None, who="compiled baseline")  # type: ignore[arg-type] - never called
    peer.stage = "its first call"
    with pytest.raises(RunFailure) as failed:
        _ok(REPLY, peer)
    assert failed.value.reason == ("the compiled baseline failed while its first call: ModelNew "
                                   "raised PermissionError: [Errno 13] Permission denied: "
                                   "'/tmp/gpurunner-work-0/w-0j17yexx' (line 14)")
    assert failed.value.error.startswith("Traceback") and failed.value.who == "compiled baseline"


def test_a_runner_error_without_a_reason_still_says_what_it_was():
    peer = Peer(worker=None, who="reference worker")  # type: ignore[arg-type]
    peer.stage = "making inputs"
    with pytest.raises(RunFailure) as failed:
        _ok({"ok": False, "error": "RuntimeError: CUDA error: out of memory"}, peer)
    assert failed.value.reason == ("the reference worker failed while making inputs: "
                                   "RuntimeError: CUDA error: out of memory")
