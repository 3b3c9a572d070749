"""Candidates that try to leave the sandbox as root (this machine's case: the interpreter under
/root): each attack fails, the candidate's answer is judged correct, and the verdict's
`sandbox` check says what held it."""

from __future__ import annotations

import os
import socket
import uuid
from pathlib import Path

import pytest

import gpurunner
from gpurunner import evaluate_batch
from gpurunner.containment import available
from tests.fixtures.runner import hostile_source, reference_source, sandbox_detail

pytestmark = pytest.mark.skipif(not available()[0], reason=available()[1])

FAKE_SECRET = "sk-runner-secret-0123456789"
MARKER = f"hostile{uuid.uuid4().hex[:8]}"


@pytest.fixture(scope="module")
def escapes(runner_options, tmp_path_factory):
    """Verdicts of the escape attempts, with a secret in the runner's environment, a TCP port,
    a world-writable unix socket and an abstract socket listening on the host."""
    tcp = socket.create_server(("127.0.0.1", 0))
    sock_dir = tmp_path_factory.mktemp("sockets")
    os.chmod(sock_dir, 0o777)
    path = str(sock_dir / "open.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(path)
    os.chmod(path, 0o777)
    unix.listen()
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + MARKER)
    abstract.listen()
    names = ["hostile_reads_runner_environ", "hostile_umount", "hostile_setns",
             "hostile_unix_socket", "hostile_writes_installation"]
    sources = [hostile_source(n, port=str(tcp.getsockname()[1]), socket_path=path,
                              abstract_name=MARKER, marker=MARKER) for n in names]
    os.environ["KERNELWEB_RUNNER_SECRET_KEY"] = FAKE_SECRET
    try:
        verdicts = evaluate_batch(reference_source("softmax_rows"), sources, runner_options())
    finally:
        os.environ.pop("KERNELWEB_RUNNER_SECRET_KEY")
        for s in (tcp, unix, abstract):
            s.close()
    return dict(zip(names, verdicts, strict=True))


def assert_contained(verdict) -> None:
    assert verdict.verdict == "correct", verdict.reason + verdict.error
    check = next(c for c in verdict.checks if c.name == "sandbox")
    assert check.passed
    for part in ("namespaces: mount, network", "seccomp filter", "no capabilities",
                 "root filesystem: private tmpfs"):
        assert part in check.detail


def test_a_candidate_cannot_read_the_runners_environment(escapes):
    v = escapes["hostile_reads_runner_environ"]
    assert_contained(v)
    assert FAKE_SECRET not in str(v.to_dict())


def test_a_candidate_cannot_unmount_or_mount(escapes):
    assert_contained(escapes["hostile_umount"])


def test_a_candidate_cannot_enter_the_hosts_network_namespace(escapes):
    v = escapes["hostile_setns"]
    assert_contained(v)
    assert "no network" in sandbox_detail(v)


def test_a_candidate_cannot_reach_unix_sockets_outside_the_sandbox(escapes):
    assert_contained(escapes["hostile_unix_socket"])


def test_a_candidate_cannot_write_into_python_the_harness_or_the_system(escapes):
    assert_contained(escapes["hostile_writes_installation"])
    package = Path(gpurunner.__file__).parent
    assert not list(package.glob(f"{MARKER}*"))
    assert "# rewritten" not in (package / "judge.py").read_text()


def test_the_sandbox_runs_under_a_user_id_of_its_own(escapes):
    detail = sandbox_detail(escapes["hostile_umount"])
    uid = int(detail.split("user id ")[1].split(",")[0])
    assert 61000 <= uid < 61512


def test_a_pasted_reference_cannot_read_the_servers_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_SECRET)
    report = gpurunner.check_reference(hostile_source("hostile_reference_reads_environ"))
    assert report.ok, report.error
    assert FAKE_SECRET not in str(report.to_dict())


def test_without_a_pid_namespace_the_runners_environment_stays_hidden(runner_options,
                                                                     monkeypatch):
    monkeypatch.setenv("GPURUNNER_PID_NAMESPACE", "0")  # as on CUDA
    monkeypatch.setenv("KERNELWEB_RUNNER_SECRET_KEY", FAKE_SECRET)
    from gpurunner import api

    api._close_spares()  # spares were started with a PID namespace
    v = evaluate_batch(reference_source("softmax_rows"),
                       [hostile_source("hostile_reads_runner_environ")], runner_options())[0]
    assert v.verdict == "correct", v.reason + v.error
    assert "pid" not in sandbox_detail(v).split("namespaces: ")[1].split(", no network")[0]
    assert FAKE_SECRET not in str(v.to_dict())
