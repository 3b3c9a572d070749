"""Run a worker process (`python -m gpurunner.worker`) sandboxed, with limits and a timeout.

The parent side of the sandbox: a fresh interpreter per job, in its own session and process
group, in a private working folder, with a scrubbed environment and a user id of its own. The
worker contains itself before it imports any untrusted code (see `containment`). Clean-up
kills every process of that user id and removes the folder, on every exit path.

Messages from the worker arrive as JSON lines on a private pipe: `ready` (torch imported),
`built` (candidate imported and compiled; the run limit starts), `done`.
"""

from __future__ import annotations

import atexit
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurunner import build, containment, pch
from gpurunner.facts import number
from gpurunner.transport import Channel, ChannelError
from gpurunner.uids import UidSlot, kill_uid, work_root

# Variables a candidate never sees: anything that looks like a credential.
_SECRET_NAME = re.compile(r"KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION", re.IGNORECASE)
_SECRET_URL_NAMES = {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL", "BROKER_URL"}
_URL_WITH_USER = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]*@", re.IGNORECASE)

MAX_RESULT_BYTES = 16 << 20  # a worker's result.json beyond this is ignored, never parsed


def scrubbed_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The parent's environment minus every variable that may hold a secret.

    Drops names that look like keys, tokens, passwords or credentials, database and broker
    URLs, and any value that is a URL with a user and password in it. Puts the directory of
    this interpreter first on PATH so `ninja` from the virtual environment is found.
    """
    env: dict[str, str] = {}
    private = private_paths()
    for name, value in os.environ.items():
        if _SECRET_NAME.search(name) or name in _SECRET_URL_NAMES or _URL_WITH_USER.search(value):
            continue
        if name.startswith(("DJANGO_", "HUEY_", "GPURUNNER_", "KERNELWEB_")) or name == "PYTHONPATH":
            continue
        if any(path in value for path in private):  # e.g. a variable naming the app's data
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


def private_paths() -> list[str]:
    """Directories no sandbox may see: GPURUNNER_PRIVATE_PATHS (os.pathsep-separated), where
    an application names its own data (a database, keys)."""
    return [p for p in os.environ.get("GPURUNNER_PRIVATE_PATHS", "").split(os.pathsep) if p]


def runner_pythonpath() -> str:
    """The directory that holds the gpurunner package, so the worker imports this copy."""
    return str(Path(__file__).resolve().parent.parent)


def can_drop_user() -> bool:
    """Whether sandboxes run contained under a user id of their own on this machine."""
    return containment.available()[0]


def _new_workdir() -> tuple[Path, int]:
    """A private working folder under the runner's state folder, with the lock that marks it
    in use (`sweep_workdirs` removes folders whose runner died)."""
    root = work_root()
    path = Path(tempfile.mkdtemp(prefix="w-", dir=root))
    fd = os.open(f"{path}.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    return path, fd


def sweep_workdirs(min_age_s: float = 60.0) -> int:
    """Remove working folders left by a runner that was killed (their lock is free); returns
    how many. Young entries are left alone: their worker may be between mkdir and lock."""
    root = work_root()
    removed = 0
    for lock in root.glob("*.lock"):
        try:
            if time.time() - os.lstat(lock).st_mtime < min_age_s:
                continue
            fd = os.open(lock, os.O_RDWR | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            continue
        shutil.rmtree(root / lock.stem, ignore_errors=True)
        lock.unlink(missing_ok=True)
        os.close(fd)
        removed += 1
    return removed


def _read_tail(fd: int, limit: int) -> bytes:
    """The last `limit` bytes of an open file (ours: the sandbox cannot swap what it points to)."""
    size = os.fstat(fd).st_size
    return os.pread(fd, limit, max(0, size - limit))


def _read_private(path: Path) -> str | None:
    """A file the sandbox wrote, never following a link it may have planted."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            return None
        data = f.read(MAX_RESULT_BYTES + 1)
        return data.decode(errors="replace") if len(data) <= MAX_RESULT_BYTES else None


EXT_IN_SANDBOX = "/ext"  # TORCH_EXTENSIONS_DIR inside a contained worker
INDUCTOR_FOLDER = ".inductor"  # torch.compile's cache (TORCHINDUCTOR_CACHE_DIR) in a worker's folder


def pid_namespace_for(device: str) -> bool:
    """Whether a worker for `device` gets a PID namespace of its own: on the CPU yes, on CUDA
    no (CUDA failed to start in one, error 304, when the host's /proc was kept; with the
    sandbox's fresh /proc it is to be measured). GPURUNNER_PID_NAMESPACE=1 or 0 overrides."""
    forced = os.environ.get("GPURUNNER_PID_NAMESPACE")
    if forced in ("0", "1"):
        return forced == "1"
    return device == "cpu"


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
    peak_memory: int | None = None  # bytes, the worker's peak resident memory when last seen


class Worker:
    """One sandboxed worker process, started ahead of its job so torch imports meanwhile.

    `start()` spawns the interpreter; `run(job)` hands it a job and waits, first up to the
    compile limit until the worker reports `built`, then up to the run limit.
    """

    def __init__(self, cache_dir: Path, device: str, extra_env: dict[str, str] | None = None,
                 confine: bool = True):
        self.cache_dir = cache_dir
        self.device = device
        contained, why = containment.available()
        contained = contained and confine
        self.contained = contained
        sweep_workdirs()
        self.slot = UidSlot.acquire() if contained else None
        self.uid = self.slot.uid if self.slot else None
        self.strays: list[int] = []  # its uid's processes outside its group, last stop
        self.strays_seen: set[int] = set()  # every such process any stop found (trusted)
        self.workdir, self._workdir_lock = _new_workdir()
        # C++/CUDA builds: a private folder, at one fixed path inside every sandbox so a
        # build copied from the cache is up to date for ninja (see build.restore_build).
        self.ext_host = self.workdir / "ext"
        self.ext_dir = Path(EXT_IN_SANDBOX) if contained else build.shared_extensions_root(
            cache_dir)
        self.ext_host.mkdir(mode=0o700)
        # Precompiled headers the runner makes (gpurunner.pch): seen read-only, as they come.
        headers = pch.make_root(cache_dir)
        for path in (self.workdir, self.ext_host):
            if self.uid is not None:
                os.chown(path, self.uid, self.uid)
            os.chmod(path, 0o700)
        env = scrubbed_env()
        env["PYTHONPATH"] = runner_pythonpath()
        env["HOME"] = str(self.workdir)
        env["USER"] = env["LOGNAME"] = "gpurunner"  # sandbox ids have no passwd entry
        env["TMPDIR"] = str(self.workdir)
        env["TRITON_CACHE_DIR"] = str(self.workdir / ".triton")
        env["TORCHINDUCTOR_CACHE_DIR"] = str(self.workdir / INDUCTOR_FOLDER)
        if device == "cpu":
            env["CUDA_VISIBLE_DEVICES"] = ""
        env.update(extra_env or {})
        if contained:
            spec = containment.make_spec(
                uid=self.uid, device=device, workdir=self.workdir,
                runner_package=Path(runner_pythonpath()) / "gpurunner",
                readonly=[str(headers)],
                writable={EXT_IN_SANDBOX: str(self.ext_host)},
                pid_namespace=pid_namespace_for(device))
        else:
            spec = {"contain": False, "device": device,
                    "reason": why if confine else "containment switched off"}
        env["GPURUNNER_CONFINE"] = json.dumps(spec)
        parent_sock, child_sock = socket.socketpair()
        self.channel = Channel(parent_sock)  # messages both ways, fds alongside
        write_fd = child_sock.detach()
        self._stdout = open(self.workdir / ".stdout", "wb")  # noqa: SIM115 - closed in close()
        self._stderr = open(self.workdir / ".stderr", "w+b")  # noqa: SIM115
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gpurunner.worker", str(write_fd)],
            cwd=self.workdir, env=env, stdin=subprocess.PIPE, stdout=self._stdout,
            stderr=self._stderr, pass_fds=(write_fd,), start_new_session=True,
        )
        os.close(write_fd)
        self.phase = "starting"
        self._ready_at: float | None = None

    def ready_at(self) -> float | None:
        """When the worker reported torch imported (seconds after start), if it has."""
        return self._ready_at

    def _read_messages(self, deadline: float) -> list[dict[str, Any]]:
        """Messages that arrive before `deadline` (one at a time; `eof` when the worker
        closed its end or sent something unreadable)."""
        try:
            msg, fds = self.channel.recv(deadline)
        except ChannelError:
            return [] if not self.channel.closed and time.monotonic() >= deadline else [
                {"event": "eof"}]
        for fd in fds:
            os.close(fd)  # workers have no business sending descriptors
        return [msg]

    def start(self, job: dict[str, Any]) -> None:
        """Hand `job` to the worker (through job.json, whose path goes to its stdin)."""
        job_path = self.workdir / "job.json"
        job_path.write_text(json.dumps(job))
        if self.uid is not None:
            os.chown(job_path, self.uid, self.uid)
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write((str(job_path) + "\n").encode())
            self.proc.stdin.close()
        except OSError:
            pass  # the worker died before the job: reported as a crash by whoever waits

    def stderr_tail(self, limit: int = 6000) -> str:
        """The last `limit` bytes of the worker's stderr, read without loading the file
        (a candidate can write gigabytes there)."""
        try:
            self._stderr.flush()
            with open(self.workdir / ".stderr", "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - limit))
                return f.read(limit).decode(errors="replace")
        except (OSError, ValueError):
            return ""

    def peak_memory(self) -> int | None:
        """The worker's peak resident memory (VmHWM) in bytes, while it is alive."""
        try:
            status = Path(f"/proc/{self.proc.pid}/status").read_text()
        except OSError:
            return None
        m = re.search(r"^VmHWM:\s+(\d+) kB", status, re.MULTILINE)
        return int(m.group(1)) * 1024 if m else None

    def run(self, job: dict[str, Any], compile_timeout_s: float, run_timeout_s: float) -> WorkerResult:
        """Send `job` to the worker and wait for it to finish, be killed, or crash."""
        self.start(job)
        t0 = time.monotonic()
        deadline = t0 + compile_timeout_s + 30.0  # torch import counts with the build
        built_at: float | None = None
        peak: int | None = None
        status = "crashed"
        result_extra: dict[str, float] = {}
        while True:
            now = time.monotonic()
            if now >= deadline:
                status = "timeout"
                break
            messages = self._read_messages(min(deadline, now + 1.0))
            peak = self.peak_memory() or peak  # sampled while alive, for an OOM kill's cause
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
        text = _read_private(self.workdir / "result.json")
        if text:
            try:
                result = json.loads(text)
            except ValueError:
                result = {}
        if not isinstance(result, dict):
            result = {}
        if status == "done" and not result:
            status = "crashed"
        result.setdefault("parent_marks", result_extra)
        stderr_tail = self.stderr_tail()
        compile_s = number(result.get("compile_s"))
        return WorkerResult(
            status=status, phase=self.phase, returncode=returncode, result=result,
            stderr_tail=stderr_tail, compile_s=compile_s, wall_s=time.monotonic() - t0,
            workdir=self.workdir, peak_memory=peak,
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
        self.channel.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
        Path(f"{self.workdir}.lock").unlink(missing_ok=True)
        os.close(self._workdir_lock)
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


def host_memory() -> str:
    """Available and total host memory, in words with numbers."""
    try:
        info = Path("/proc/meminfo").read_text()
        avail = int(re.search(r"MemAvailable:\s+(\d+)", info).group(1)) * 1024  # type: ignore[union-attr]
        total = int(re.search(r"MemTotal:\s+(\d+)", info).group(1)) * 1024  # type: ignore[union-attr]
    except (OSError, AttributeError):
        return "host memory unknown"
    return f"{avail / 2**30:.1f} GiB of {total / 2**30:.1f} GiB host memory available now"


def host_disk() -> str:
    """Free and total disk where the workers' folders (and their builds) live, in words."""
    try:
        st = os.statvfs(work_root())
    except OSError:
        return "free disk unknown"
    free, total = st.f_bavail * st.f_frsize, st.f_blocks * st.f_frsize
    return f"{free / 2**30:.1f} GiB of {total / 2**30:.1f} GiB free on {work_root()}"


def name_disk_full(reason: str, detail: str = "") -> str:
    """`reason`, led by "out of disk" and the numbers when its text or `detail` is the
    operating system saying the disk is full (a build, a cache or the candidate's own files)."""
    text = f"{reason}\n{detail}"
    if "No space left on device" in text or "[Errno 28]" in text:
        return f"out of disk ({host_disk()}): {reason}"
    return reason


def describe_exit(result: WorkerResult) -> str:
    """One sentence on how a worker that sent no result ended."""
    code = result.returncode
    if code == containment.EXIT_CONFINE_FAILED:
        return "the sandbox could not be set up (its error is below)"
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        if code == -signal.SIGKILL:
            # Nobody here sent it (a timeout is reported as such): the kernel's OOM killer.
            peak = f", its peak memory {result.peak_memory / 2**30:.2f} GiB" if (
                result.peak_memory) else ""
            return f"the process was killed by SIGKILL, most likely out of host memory{peak} " \
                   f"({host_memory()})"
        if code == -signal.SIGXFSZ:
            return (f"the process was killed by SIGXFSZ: it wrote a file past the "
                    f"{containment.FILE_SIZE_LIMIT / 2**30:.0f} GiB limit per file")
        return f"the process was killed by {name}"
    if code is not None:
        return f"the process exited with code {code} before reporting a result"
    return "the process ended before reporting a result"
