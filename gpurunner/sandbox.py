"""Run a worker process (`python -m gpurunner.worker`) sandboxed, with limits and a timeout.

The parent side of the sandbox: a fresh interpreter per job, in its own session and process
group, in a private temporary directory, with a scrubbed environment. The worker applies the
rest to itself before it imports any untrusted code (see `worker.confine`): no network, its own
unprivileged user id when the parent is root, and resource limits.

Messages from the worker arrive as JSON lines on a private pipe: `ready` (torch imported),
`built` (candidate imported and compiled; the run limit starts), `done`.
"""

from __future__ import annotations

import atexit
import fcntl
import functools
import json
import os
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Variables a candidate never sees: anything that looks like a credential.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_SECRET_URL_NAMES = {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "BROKER_URL"}
_URL_WITH_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]*@", re.IGNORECASE)

UID_BASE = 61000  # unprivileged ids handed to sandboxes when the runner is root
UID_SLOTS = 512


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent's environment minus every variable that may hold a secret.

    Drops names that look like keys, tokens, passwords or credentials, database and broker
    URLs, and any value that is a URL with a user and password in it. Puts the directory of
    this interpreter first on PATH so `ninja` from the virtual environment is found.
    """
    env: dict[str, str] = {}
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) or name in _SECRET_URL_NAMES or _URL_WITH_USER.search(value):
            continue
        if name.startswith(("DJANGO_", "HUEY_", "GPURUNNER_TEST_")):
            continue
        env[name] = value
    bin_dir = str(Path(sys.executable).parent)
    env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    env["PYTHONUNBUFFERED"] = "1"
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["TORCHINDUCTOR_COMPILE_THREADS"] = "1"  # no compile-worker pool left behind
    env.pop("PYTHONSTARTUP", None)
    env.update(extra or {})
    return env


def runner_pythonpath() -> str:
    """The directory that holds the gpurunner package, so the worker imports this copy."""
    return str(Path(__file__).resolve().parent.parent)


def _readable_by_others(path: Path) -> bool:
    """Whether a user id other than ours can reach `path` (o+x on every folder, o+r on it)."""
    try:
        if not os.stat(path).st_mode & 0o004:
            return False
        return all(os.stat(p).st_mode & 0o001 for p in path.resolve().parents)
    except OSError:
        return False


@functools.cache
def can_drop_user() -> bool:
    """Whether sandboxes can run under their own user id: we are root and the interpreter,
    its standard library, torch and this package are readable by other users."""
    if os.geteuid() != 0:
        return False
    import importlib.util

    torch_spec = importlib.util.find_spec("torch")
    paths = [Path(sys.executable).resolve(), Path(os.__file__).resolve(),
             Path(__file__).resolve()]
    if torch_spec and torch_spec.origin:
        paths.append(Path(torch_spec.origin).resolve())
    return all(_readable_by_others(p) for p in paths)


# Modules every worker imports; compiled once by a trusted process (see bytecode_dir).
WORKER_IMPORTS = ("torch, torch.utils.cpp_extension, torch.profiler, torch.utils.flop_counter, "
                  "torch.utils._python_dispatch, gpurunner.worker, gpurunner.candidate, "
                  "gpurunner.reference")
_PREWARMED: set[str] = set()


def bytecode_dir() -> str | None:
    """A bytecode cache that sandboxes may read but not write, filled by the runner itself.

    Sandboxes under their own user id cannot write __pycache__ next to the sources, so where
    the installation has none (packages installed with --no-compile) every worker would
    recompile torch's Python files on import, several seconds each time. The runner (root)
    fills this directory once, importing what workers import; a directory not owned by us is
    never used (a sandbox could have planted it)."""
    if not can_drop_user():
        return None
    path = Path(tempfile.gettempdir()) / f"gpurunner-pycache-{os.geteuid()}"
    path.mkdir(mode=0o755, exist_ok=True)
    st = os.lstat(path)
    if st.st_uid != os.geteuid() or st.st_mode & 0o022 or not path.is_dir():
        return None
    key = str(path)
    if key not in _PREWARMED:
        code = f"import {WORKER_IMPORTS}\ntry:\n    import triton, triton.language\nexcept ImportError:\n    pass\n"
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(PYTHONPYCACHEPREFIX=key, PYTHONPATH=runner_pythonpath())
        subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, timeout=600)
        _PREWARMED.add(key)
    return key


class UidSlot:
    """An unprivileged user id reserved for one sandbox (only when the runner is root).

    A lock file per id keeps two runner processes on one host from sharing an id: the id is
    what limits the sandbox's process count and what its clean-up kills.
    """

    def __init__(self, lock_dir: Path):
        self.uid: int | None = None
        self._fd: int | None = None
        if not can_drop_user():
            return
        lock_dir.mkdir(parents=True, exist_ok=True)
        start = os.getpid() % UID_SLOTS
        for i in range(UID_SLOTS):
            n = (start + i) % UID_SLOTS
            fd = os.open(lock_dir / f"{n}.lock", os.O_CREAT | os.O_RDWR, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            self.uid, self._fd = UID_BASE + n, fd
            return

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def kill_uid(uid: int) -> int:
    """Kill every process that runs under `uid`; returns how many were signalled."""
    killed = 0
    for _ in range(5):  # a fork bomb spawns while we kill: sweep until none is left
        found = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                status = (proc / "status").read_text()
            except OSError:
                continue
            m = re.search(r"^Uid:\s+(\d+)", status, re.MULTILINE)
            if m and int(m.group(1)) == uid:
                try:
                    os.kill(int(proc.name), signal.SIGKILL)
                    found += 1
                except OSError:
                    pass
        killed += found
        if not found:
            break
        time.sleep(0.05)
    return killed


_REAPERS: list[threading.Thread] = []


@atexit.register
def _finish_reaping() -> None:
    """Let background clean-ups finish (temporary directories, user ids) before exit."""
    for t in list(_REAPERS):
        t.join(timeout=30)


@dataclass
class WorkerResult:
    """What came back from one worker process."""

    status: str  # "done", "timeout", "crashed"
    phase: str  # the last phase the worker announced: "starting", "ready", "built", "done"
    returncode: int | None
    result: dict[str, Any] = field(default_factory=dict)  # the worker's result.json
    stderr_tail: str = ""
    compile_s: float | None = None
    wall_s: float = 0.0
    workdir: Path | None = None  # kept until `close()` so the parent can read outputs


class Worker:
    """One sandboxed worker process, started ahead of its job so torch imports meanwhile.

    `start()` spawns the interpreter; `run(job)` hands it a job and waits, first up to the
    compile limit until the worker reports `built`, then up to the run limit.
    """

    def __init__(self, cache_dir: Path, device: str, extra_env: dict[str, str] | None = None,
                 confine: bool = True):
        self.cache_dir = cache_dir
        self.device = device
        self.slot = UidSlot(cache_dir / "uids") if confine else None
        self.workdir = Path(tempfile.mkdtemp(prefix="gpurunner-"))
        uid = self.slot.uid if self.slot else None
        if uid is not None:
            os.chown(self.workdir, uid, uid)
        os.chmod(self.workdir, 0o700)
        env = scrubbed_env()
        env["PYTHONPATH"] = runner_pythonpath()
        pycache = bytecode_dir() if confine else None
        if pycache:
            env["PYTHONPYCACHEPREFIX"] = pycache
        env["HOME"] = str(self.workdir)
        env["USER"] = env["LOGNAME"] = "gpurunner"  # sandbox ids have no passwd entry
        env["TMPDIR"] = str(self.workdir)
        env["TRITON_CACHE_DIR"] = str(self.workdir / ".triton")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.workdir / ".inductor")
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        env.update(extra_env or {})
        off = set(os.environ.get("GPURUNNER_CONFINE_OFF", "").split(","))
        confine_spec = {"uid": None if "uid" in off else uid, "network": "network" not in off,
                        # CUDA fails to start in a new PID namespace (error 304, seen on H100)
                        "pid_namespace": "pid" not in off and device == "cpu", "device": device,
                        "hide": [] if "hide" in off else [str(cache_dir / "ref")]}
        env["GPURUNNER_CONFINE"] = json.dumps(confine_spec) if confine else "{}"
        read_fd, write_fd = os.pipe()
        self._msg_fd = read_fd
        self._stdout = open(self.workdir / ".stdout", "wb")  # noqa: SIM115 - closed in close()
        self._stderr = open(self.workdir / ".stderr", "wb")  # noqa: SIM115
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpurunner.worker", str(write_fd)],
            cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=self._stdout,
            stderr=self._stderr, pass_fds=(write_fd,), start_new_session=True,
        )
        os.close(write_fd)
        self._buffer = b""
        self.phase = "starting"
        self.uid = uid
        self._ready_at: float | None = None

    def ready_at(self) -> float | None:
        """When the worker reported torch imported (seconds after start), if it has."""
        return self._ready_at

    def _read_messages(self, deadline: float) -> list[dict[str, Any]]:
        """Messages that arrive before `deadline` (returns early on the first batch)."""
        wait = max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([self._msg_fd], [], [], wait)
        if not ready:
            return []
        chunk = os.read(self._msg_fd, 65536)
        if not chunk:
            return [{"event": "eof"}]
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        messages = []
        for line in lines:
            try:
                messages.append(json.loads(line))
            except ValueError:
                continue
        return messages

    def run(self, job: dict[str, Any], compile_timeout_s: float, run_timeout_s: float) -> WorkerResult:
        """Send `job` to the worker and wait for it to finish, be killed, or crash."""
        job_path = self.workdir / "job.json"
        job_path.write_text(json.dumps(job))
        if self.uid is not None:
            os.chown(job_path, self.uid, self.uid)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((str(job_path) + "\n").encode())
            self.proc.stdin.close()
        except OSError:
            pass  # the worker died before the job: reported below as a crash
        t0 = time.monotonic()
        deadline = t0 + compile_timeout_s + 30.0  # torch import counts with the build
        built_at: float | None = None
        status = "crashed"
        result_extra: dict[str, float] = {}
        while True:
            now = time.monotonic()
            if now >= deadline:
                status = "timeout"
                break
            messages = self._read_messages(deadline)
            eof = False
            for msg in messages:
                event = msg.get("event")
                if event == "ready":
                    self.phase = "ready"
                    self._ready_at = time.monotonic() - self.started
                    result_extra["ready_wait_s"] = time.monotonic() - t0
                elif event == "built":
                    self.phase = "built"
                    built_at = time.monotonic()
                    result_extra["built_after_s"] = built_at - t0
                    deadline = built_at + run_timeout_s
                elif event == "done":
                    self.phase = "done"
                    result_extra["done_after_s"] = time.monotonic() - t0
                elif event == "eof":
                    eof = True
            if self.phase == "done" or eof:
                status = "done" if self.phase == "done" else "crashed"
                break
        if status == "crashed":
            try:  # read how it ended before anything is killed
                self.proc.wait(timeout=3)
            except subprocess.TimeoutExpired:
                pass
        returncode = self.proc.poll()
        # A finished worker is killed rather than awaited: tearing down a CUDA context takes
        # seconds, and reaping happens in the background (see close()).
        self._signal_all()
        result: dict[str, Any] = {}
        result_path = self.workdir / "result.json"
        if result_path.exists():
            try:
                result = json.loads(result_path.read_text())
            except ValueError:
                result = {}
        if status == "done" and not result:
            status = "crashed"
        result.setdefault("parent_marks", result_extra)
        stderr_tail = ""
        try:
            self._stderr.flush()
            stderr_tail = (self.workdir / ".stderr").read_bytes()[-6000:].decode(errors="replace")
        except OSError:
            pass
        compile_s = None
        if isinstance(result.get("compile_s"), int | float):
            compile_s = float(result["compile_s"])
        return WorkerResult(
            status=status, phase=self.phase, returncode=returncode, result=result,
            stderr_tail=stderr_tail, compile_s=compile_s, wall_s=time.monotonic() - t0,
            workdir=self.workdir,
        )

    def _signal_all(self) -> None:
        """SIGKILL the worker, its process group and, when it has its own uid, all it spawned."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except OSError:
            pass
        if self.uid is not None:
            kill_uid(self.uid)

    def _reap(self) -> None:
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
        if self.uid is not None:
            kill_uid(self.uid)  # anything that slipped out while the worker died
        for f in (self._stdout, self._stderr):
            f.close()
        try:
            os.close(self._msg_fd)
        except OSError:
            pass
        shutil.rmtree(self.workdir, ignore_errors=True)
        if self.slot:
            self.slot.release()

    def close(self, wait: bool = False) -> None:
        """Kill anything left, then (in the background unless `wait`) reap the processes,
        remove the temporary directory and free the user id."""
        self._signal_all()
        if wait:
            self._reap()
        else:
            t = threading.Thread(target=self._reap, daemon=True)
            t.start()
            _REAPERS.append(t)

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def describe_exit(result: WorkerResult) -> str:
    """One sentence on how a worker that sent no result ended."""
    code = result.returncode
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"the process was killed by {name}"
    if code is not None:
        return f"the process exited with code {code} before reporting a result"
    return "the process ended before reporting a result"
