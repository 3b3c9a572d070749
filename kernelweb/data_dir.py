"""The data directory (`KERNELWEB_DATA_DIR`, default var/): the database, the task queue, the
secret key and the single-user login key. Only the user who runs kernelweb may read it, and no
sandboxed reference or candidate may see it.
"""

from __future__ import annotations

import os
from pathlib import Path

# gpurunner covers these directories in every sandbox that still runs as root, and drops any
# variable that names them from a sandbox's environment.
PRIVATE_PATHS_VARIABLE = "GPURUNNER_PRIVATE_PATHS"


def prepare(path: Path) -> Path:
    """Create the directory private to this user (0700), tightening an existing one."""
    path.mkdir(parents=True, exist_ok=True)
    if path.stat().st_uid == os.geteuid():
        path.chmod(0o700)
    keep_from_sandboxes(path)
    return path


def private_file(path: Path) -> Path:
    """Create `path` empty with mode 0600 if missing (SQLite opens an empty file as a new
    database and gives its -wal and -shm files the same mode), or tighten it to 0600."""
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o600)
    os.close(fd)
    if path.stat().st_uid == os.geteuid():
        path.chmod(0o600)
    return path


def keep_from_sandboxes(path: Path) -> None:
    """Name `path` among the directories the runner's sandboxes never see."""
    known = [p for p in os.environ.get(PRIVATE_PATHS_VARIABLE, "").split(os.pathsep) if p]
    if str(path) not in known:
        os.environ[PRIVATE_PATHS_VARIABLE] = os.pathsep.join([*known, str(path)])
