"""Tensors never touch the disk: a problem whose inputs and outputs are larger than the
sandboxes' temporary space still evaluates, and nothing is left there after a crash."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest

from gpurunner import api, evaluate, sandbox, uids
from tests.fixtures.runner import candidate_source, reference_source


@pytest.fixture
def small_tmp(tmp_path):
    """Workers' temporary folders on an 8 MB tmpfs (the problem moves 64 MB)."""
    mount = tmp_path / "tmpfs"
    mount.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs",
                                             str(mount)]).returncode != 0:
        pytest.skip("mounting a small tmpfs needs root")
    saved = tempfile.tempdir
    api._close_spares()  # spares made elsewhere have their folders elsewhere
    tempfile.tempdir = str(mount)
    try:
        yield mount
    finally:
        api._close_spares()
        sandbox._finish_reaping()
        tempfile.tempdir = saved
        subprocess.run(["umount", "-l", str(mount)])


@pytest.fixture
def private_tmp(tmp_path):
    saved = tempfile.tempdir
    api._close_spares()
    tempfile.tempdir = str(tmp_path)
    try:
        yield tmp_path
    finally:
        api._close_spares()
        sandbox._finish_reaping()
        tempfile.tempdir = saved


def test_a_problem_larger_than_the_temporary_space_evaluates(small_tmp, runner_options):
    v = evaluate(reference_source("scale_32mb"),
                 "import torch.nn as nn\n\n\nclass ModelNew(nn.Module):\n"
                 "    def forward(self, x):\n        return x + x\n",
                 runner_options(trials=2))
    assert v.verdict == "correct", v.reason + v.error


def test_temporary_files_are_gone_after_a_candidate_crash(private_tmp, runner_options):
    v = evaluate(reference_source("softmax_rows"), candidate_source("softmax_segfault"),
                 runner_options())
    assert v.verdict == "runtime_error" and "SIGSEGV" in v.reason
    api._close_spares()
    sandbox._finish_reaping()
    # The build cache and the sandboxes' (private, 0700) parent folder stay, by design; nothing
    # of the crashed evaluation may stay in either the temporary folder or that parent.
    kept = ("gpurunner-ext-", "gpurunner-work-")
    left = [p.name for p in Path(private_tmp).iterdir() if not p.name.startswith(kept)]
    assert left == []
    assert [p.name for p in uids.work_root().iterdir()] == []
    assert not [p for p in os.listdir("/dev/shm") if "gpurunner" in p]
