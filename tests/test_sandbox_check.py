"""The verdict's `sandbox` check says what containment was in force and fails without any;
the seccomp filter denies what a candidate never needs and allows the rest."""

from __future__ import annotations

import ctypes
import errno
import os
import platform

import pytest

from gpurunner import containment, seccomp


def test_it_fails_when_the_candidate_ran_uncontained(monkeypatch):
    monkeypatch.delenv("GPURUNNER_UNCONFINED", raising=False)
    passed, detail = containment.describe({"contained": False, "uid": 1000,
                                           "reason": "the runner is not root"})
    assert not passed
    assert detail.startswith("no containment") and "user id 1000" in detail
    assert "the runner is not root" in detail


def test_a_single_user_may_accept_running_uncontained(monkeypatch):
    monkeypatch.setenv("GPURUNNER_UNCONFINED", "1")
    passed, detail = containment.describe({"contained": False, "uid": 1000})
    assert passed and detail.startswith("NOT contained")


def test_it_fails_when_the_candidate_kept_capabilities():
    passed, detail = containment.describe({
        "contained": True, "uid": 61001, "namespaces": ["mount"], "root": "private tmpfs",
        "seccomp": True, "capabilities": "000001ffffffffff"})
    assert not passed and "capabilities 000001ffffffffff" in detail


def test_it_fails_when_the_candidate_stayed_root():
    passed, _ = containment.describe({"contained": True, "uid": 0, "seccomp": True,
                                      "capabilities": "0000000000000000"})
    assert not passed


@pytest.mark.skipif(not seccomp.supported(), reason=f"no filter for {platform.machine()}")
def test_the_filter_denies_namespaces_and_tracing_and_allows_threads_and_processes():
    pid = os.fork()
    if pid == 0:  # the filter cannot be removed: load it in a child
        code = 1
        try:
            seccomp.install()
            libc = ctypes.CDLL(None, use_errno=True)
            denied = [libc.unshare(0x40000000), libc.ptrace(16, os.getppid(), 0, 0)]
            err = ctypes.get_errno()
            child = os.fork()  # clone without namespace flags still works
            if child == 0:
                os._exit(7)
            _, status = os.waitpid(child, 0)
            if denied == [-1, -1] and err == errno.EPERM and os.WEXITSTATUS(status) == 7:
                code = 0
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0


def test_the_filter_checks_the_architecture_first():
    program = seccomp.program("x86_64")
    first_load, arch_jump = program[:8], program[8:16]
    assert first_load[:2] == (0x20).to_bytes(2, "little") and first_load[4:] == (4).to_bytes(
        4, "little")  # load seccomp_data.arch
    assert arch_jump[4:] == (0xC000003E).to_bytes(4, "little")
