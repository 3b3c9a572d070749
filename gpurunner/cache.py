"""The runner's cache directory: reference results per problem and device, secret seeds.

Reference outputs stay in a directory only the runner's own user can read (0700); sandboxed
processes run under other user ids when the runner is root, so no candidate can read them.
Trial seeds come from a secret salt kept there too, so no candidate can be written for them.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import platform
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import torch


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


def _salt(cache_dir: Path) -> bytes:
    path = cache_dir / "ref" / "salt"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=cache_dir / "ref")
        os.write(fd, secrets.token_bytes(32))
        os.close(fd)
        os.replace(tmp, path)  # first writer wins; a concurrent one writes the same kind
    return path.read_bytes()


def device_identity(device: str) -> str:
    """The device's name, so a cached timing is reused only on the same kind of device."""
    if device == "cpu":
        return f"cpu-{platform.machine()}-{os.cpu_count()}"
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
        return out.strip().splitlines()[0]
    except (OSError, subprocess.SubprocessError, IndexError):
        return device


# Bump when what a cache entry holds changes, so an upgraded runner never reads an old entry.
CACHE_FORMAT = 3


def problem_key(source: str, device: str, trials: int) -> str:
    blob = json.dumps([CACHE_FORMAT, source, device_identity(device), torch.__version__, trials])
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def seeds_for(cache_dir: Path, key: str, trials: int) -> tuple[list[int], list[int]]:
    """(trial seeds, two timing seeds) for a problem: fixed per cache, unknowable outside it."""
    digest = hmac.new(_salt(cache_dir), key.encode(), hashlib.sha256).digest()
    numbers = [int.from_bytes(digest[i:i + 4], "little") & 0x7FFFFFFF for i in range(0, 32, 4)]
    while len(numbers) < trials + 2:
        digest = hashlib.sha256(digest).digest()
        numbers += [int.from_bytes(digest[i:i + 4], "little") & 0x7FFFFFFF for i in range(0, 32, 4)]
    return numbers[:trials], numbers[trials:trials + 2]


def load_reference(cache_dir: Path, key: str) -> dict[str, Any] | None:
    path = cache_dir / "ref" / key / "report.json"
    if not path.exists():
        return None
    try:
        return json.loads(path.read_text())
    except ValueError:
        return None


def load_outputs(cache_dir: Path, key: str, seed: int) -> list[Any] | None:
    """The reference's outputs for one seed (memory-mapped: large outputs load lazily)."""
    path = cache_dir / "ref" / key / f"ref_out_{seed}.pt"
    if not path.exists():
        return None
    return torch.load(path, weights_only=True, mmap=True)


def store_reference(cache_dir: Path, key: str, report: dict[str, Any],
                    outputs_dir: Path | None) -> None:
    """Write a reference result atomically (concurrent runners may store the same key).

    `outputs_dir` holds the reference worker's ref_out_<seed>.pt files; None keeps the
    outputs already cached under this key."""
    final = cache_dir / "ref" / key
    tmp = Path(tempfile.mkdtemp(dir=cache_dir / "ref", prefix=".tmp-"))
    source_dir = outputs_dir if outputs_dir is not None else final
    for name in report.get("output_files", []):
        if not (source_dir / name).exists():
            continue
        if outputs_dir is not None:
            shutil.move(str(source_dir / name), tmp / name)
        else:
            shutil.copyfile(source_dir / name, tmp / name)
    (tmp / "report.json").write_text(json.dumps(report))
    if final.exists():
        shutil.rmtree(final, ignore_errors=True)
    try:
        os.replace(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
