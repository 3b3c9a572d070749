"""One host-wide allocator of sandbox user ids, and the runner's private folders.

Every runner process of a deployment (the web server validating references, each task
consumer, command-line runs) takes its ids from the same lock files, in one root-owned folder
(`state_dir()`, 0700), whatever cache directory it uses: an id is held by one sandbox at a
time, and the id is what its clean-up kills. The first slot tried is random, so processes
started together do not all contend for the same ids.
"""

from __future__ import annotations

import fcntl
import os
import pwd
import re
import secrets
import signal
import stat
import tempfile
import time
from pathlib import Path

UID_BASE = 61000  # unprivileged ids handed to sandboxes
UID_SLOTS = 512


class StateDirError(RuntimeError):
    """The runner's state folder exists but is not safely ours."""


def _private_dir(path: Path) -> Path:
    """`path` as a folder owned by us, mode 0700, not a symlink; raises when it is not."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise StateDirError(f"{path} is not a folder owned by user id {os.geteuid()} "
                            f"(owner {st.st_uid}); remove it or set GPURUNNER_STATE_DIR")
    if st.st_mode & 0o077:
        os.chmod(path, 0o700)
    return path


def state_dir() -> Path:
    """The runner's private folder on this host (the user ids' lock files).

    GPURUNNER_STATE_DIR, else /run/gpurunner as root, else a folder of ours in the temporary
    directory."""
    override = os.environ.get("GPURUNNER_STATE_DIR")
    if override:
        return _private_dir(Path(override))
    if os.geteuid() == 0 and os.access("/run", os.W_OK):
        return _private_dir(Path("/run/gpurunner"))
    return _private_dir(Path(tempfile.gettempdir()) / f"gpurunner-state-{os.geteuid()}")


def work_root() -> Path:
    """Where sandboxes' working folders live: on disk (outputs can be large; /run is often a
    small tmpfs), in a folder of ours, 0700."""
    override = os.environ.get("GPURUNNER_WORK_DIR")
    base = Path(override) if override else Path(tempfile.gettempdir()) / f"gpurunner-work-{os.geteuid()}"
    return _private_dir(base)


def _uid_taken_by_a_user(uid: int) -> bool:
    try:
        pwd.getpwuid(uid)
        return True
    except KeyError:
        return False


class UidSlot:
    """A sandbox user id held (by an exclusive lock) until `release()`."""

    def __init__(self, uid: int, fd: int, slot: int):
        self.uid, self.slot, self._fd = uid, slot, fd

    @classmethod
    def acquire(cls) -> UidSlot:
        """The first free id from a random start. Processes a previous holder left behind
        (its runner was killed) are killed before the id is handed out."""
        lock_dir = _private_dir(state_dir() / "uids")
        start = secrets.randbelow(UID_SLOTS)
        for i in range(UID_SLOTS):
            n = (start + i) % UID_SLOTS
            if _uid_taken_by_a_user(UID_BASE + n):
                continue
            fd = os.open(lock_dir / f"{n}.lock", os.O_CREAT | os.O_RDWR | os.O_NOFOLLOW, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                continue
            kill_uid(UID_BASE + n)
            return cls(UID_BASE + n, fd, n)
        raise RuntimeError(f"all {UID_SLOTS} sandbox user ids ({UID_BASE}-"
                           f"{UID_BASE + UID_SLOTS - 1}) are in use on this host")

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def kill_uid(uid: int) -> int:
    """Kill every process that runs under `uid`; returns how many were signalled."""
    killed = 0
    for _ in range(20):  # a fork bomb spawns while we kill: sweep until none is left
        found = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                status = (proc / "status").read_text()
            except OSError:
                continue
            m = re.search(r"^Uid:\s+(\d+)\s+(\d+)\s+(\d+)", status, re.MULTILINE)
            if m and uid in (int(m.group(1)), int(m.group(2)), int(m.group(3))):
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
