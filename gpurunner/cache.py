"""The runner's cache directory: validated reference reports per problem and device.

Only small JSON reports live here (shapes, FLOPs, bytes, operators): reference outputs are
never written to disk, they are computed live by each evaluation's reference worker. The
folder is private to the runner's user (0700) and holds at most MAX_REPORTS entries, the
least recently used removed first.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch

MAX_REPORTS = 512
# Bump when what a cache entry holds changes, so an upgraded runner never reads an old entry.
CACHE_FORMAT = 5


def default_cache_dir() -> Path:
    base = os.environ.get("GPURUNNER_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "kernelweb", "gpurunner")
    return Path(base)


def prepare(cache_dir: str | os.PathLike[str] | None) -> Path:
    """Create the cache directory (private to this user) and return it."""
    path = Path(cache_dir) if cache_dir else default_cache_dir()
    path.mkdir(parents=True, exist_ok=True)
    os.chmod(path, 0o711)  # sandboxes may traverse to their build directory, not list
    (path / "ref").mkdir(exist_ok=True)
    os.chmod(path / "ref", 0o700)
    return path


def device_identity(device: str) -> str:
    """The device's name, so a cached report is reused only on the same kind of device."""
    if device == "cpu":
        return f"cpu-{platform.machine()}-{os.cpu_count()}"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return out.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return device


def problem_key(source: str, device: str) -> str:
    blob = json.dumps([CACHE_FORMAT, source, device_identity(device), torch.__version__])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def load_reference(cache_dir: Path, key: str) -> dict[str, Any] | None:
    path = cache_dir / "ref" / key / "report.json"
    try:
        report = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    os.utime(path.parent)  # recently used: evicted last
    return report if isinstance(report, dict) else None


def store_reference(cache_dir: Path, key: str, report: dict[str, Any]) -> None:
    """Write a reference report atomically (concurrent runners may store the same key),
    then evict the least recently used entries beyond MAX_REPORTS."""
    final = cache_dir / "ref" / key
    tmp = Path(tempfile.mkdtemp(dir=cache_dir / "ref", prefix=".tmp-"))
    try:
        (tmp / "report.json").write_text(json.dumps(report))
        if final.exists():
            shutil.rmtree(final, ignore_errors=True)
        os.replace(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
    evict(cache_dir / "ref", MAX_REPORTS)


def evict(folder: Path, keep: int) -> int:
    """Remove all but the `keep` most recently used entries of `folder`; how many went."""
    try:
        entries = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    except OSError:
        return 0
    entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)
    return max(0, len(entries) - keep)
