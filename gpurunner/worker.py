"""The sandboxed process: `python -m gpurunner.worker MSG_FD`, one job, then exit.

Order matters: confine this process (no network, own user id, limits) before importing
torch, import torch and report `ready`, read the job path from stdin, bind the harness's
clocks and take a snapshot before importing any untrusted code, report `built` once the
candidate is imported (the parent then switches to the run limit), write result.json and
outputs, report `done`, and exit without waiting for anything the candidate left running.
"""

from __future__ import annotations

import ctypes
import faulthandler
import json
import os
import resource
import signal
import sys
import time
from pathlib import Path
from typing import Any

CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNS = 0x00020000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
PR_SET_PDEATHSIG = 1
MSG_FD: int | None = None


def send(event: str, **data: Any) -> None:
    """One JSON line to the parent on the private message pipe."""
    if MSG_FD is None:
        return
    try:
        os.write(MSG_FD, (json.dumps({"event": event, **data}) + "\n").encode())
    except OSError:
        pass


def confine() -> dict[str, Any]:
    """Apply the sandbox to this process; returns what was applied (shown in a check).

    As root: a new network namespace (no network at all) and a new PID namespace whose first
    process runs the job, so when it ends the kernel kills everything the candidate started;
    then an unprivileged user id when the interpreter's files are readable by one.
    """
    spec = json.loads(os.environ.pop("GPURUNNER_CONFINE", "{}") or "{}")
    applied: dict[str, Any] = {"no_network": False, "uid": os.geteuid(), "pid_namespace": False}
    if not spec:
        return applied
    libc = ctypes.CDLL(None, use_errno=True)
    os.umask(0)  # build directories are shared by every sandbox user id
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (16 << 30, 16 << 30))
    if spec.get("device") == "cpu":
        try:
            total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
            limit = int(total * 0.6)
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        except (ValueError, OSError):
            pass
    if os.geteuid() == 0 and spec.get("network", True):
        applied["no_network"] = libc.unshare(CLONE_NEWNET) == 0
    if os.geteuid() == 0 and spec.get("pid_namespace", True):
        applied["pid_namespace"] = libc.unshare(CLONE_NEWPID) == 0
    uid = spec.get("uid")
    if uid is not None and os.geteuid() == 0 and _device_usable_by_others(spec.get("device", "")):
        resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
        applied["uid"] = uid
    if applied["uid"] == 0 and spec.get("hide"):
        # Still root (no sandbox user id): hide the runner's private cache (reference outputs,
        # the seed salt) behind an empty read-only mount in a mount namespace of our own.
        applied["hidden"] = _hide_paths(libc, spec["hide"])
    if applied["pid_namespace"]:
        _fork_into_namespace()
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)  # after setuid: a uid change clears it
    if os.getppid() == 1 and not applied["pid_namespace"]:
        os._exit(3)
    return applied


def _hide_paths(libc: ctypes.CDLL, paths: list[str]) -> list[str]:
    """Cover each existing path with an empty read-only tmpfs; returns the paths covered."""
    if libc.unshare(CLONE_NEWNS) != 0:
        return []
    if libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        return []  # mounts would propagate to the host's namespace: cover nothing
    hidden = []
    for path in paths:
        if os.path.isdir(path) and libc.mount(b"tmpfs", path.encode(), b"tmpfs", 1, b"mode=000") == 0:
            hidden.append(path)  # flag 1 is MS_RDONLY
    return hidden


def _fork_into_namespace() -> None:
    """Fork: the child is process 1 of the new PID namespace and runs the job; this process
    waits for it and exits with its status."""
    pid = os.fork()
    if pid == 0:
        return
    if MSG_FD is not None:
        os.close(MSG_FD)  # the parent sees end-of-file as soon as the child is gone
    os.close(0)
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # the parent reads the same signal
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def _device_usable_by_others(device: str) -> bool:
    """Whether GPU device files let an unprivileged user id use the GPU."""
    if not device.startswith("cuda"):
        return True
    for name in ("/dev/nvidiactl", "/dev/nvidia0", "/dev/nvidia-uvm"):
        try:
            if os.path.exists(name) and os.stat(name).st_mode & 0o006 != 0o006:
                return False
        except OSError:
            return False
    return True


def main() -> None:
    global MSG_FD
    MSG_FD = int(sys.argv[1])
    os.set_inheritable(MSG_FD, False)
    applied = confine()
    faulthandler.enable()  # a crash leaves the Python stack (with candidate lines) on stderr
    t0 = time.monotonic()
    import torch  # noqa: F401 - imported before the job arrives (warm worker)

    from gpurunner import timing  # noqa: F401 - binds the clocks before any untrusted code
    from gpurunner.integrity import warm_up

    warm_up()
    send("ready", import_s=time.monotonic() - t0)
    job_path = sys.stdin.readline().strip()
    if not job_path:
        os._exit(0)
    job = json.loads(Path(job_path).read_text())
    workdir = Path(job_path).parent
    try:
        if job["mode"] == "reference":
            from gpurunner.reference import run_reference_job

            result = run_reference_job(job, workdir, send)
        elif job["mode"] == "build":
            result = run_build_job(job, workdir)
        else:
            from gpurunner.candidate import run_candidate_job

            result = run_candidate_job(job, workdir, send)
    except BaseException as exc:  # noqa: BLE001 - the harness's own failure, reported as such
        import traceback

        result = {"harness_error": "".join(traceback.format_exception(exc))[-4000:]}
    result["sandbox"] = applied
    (workdir / "result.json").write_text(json.dumps(result, default=str))
    send("done")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_build_job(job: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Import the candidate only to build its extensions; other import errors are left to
    the run, which reports them with the candidate's own line numbers."""
    from gpurunner.build import format_compile_error, is_build_error
    from gpurunner.candidate import patch_cpp_extension
    from gpurunner.load import import_source

    os.environ.update(job.get("env", {}))
    patch_cpp_extension()
    t0 = time.monotonic()
    try:
        import_source(workdir / "candidate.py", "candidate")
    except BaseException as exc:  # noqa: BLE001
        if is_build_error(exc):
            summary, log = format_compile_error(str(exc))
            return {"built": False, "compile_s": time.monotonic() - t0, "error": summary,
                    "compile_log": log}
    return {"built": True, "compile_s": time.monotonic() - t0}


if __name__ == "__main__":
    main()
