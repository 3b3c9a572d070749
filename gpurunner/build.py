"""Which backend a candidate uses, where its extensions are built, and readable build errors.

C++ and CUDA candidates build through `torch.utils.cpp_extension.load_inline` when their
module is imported, in a sandbox's private build folder. The runner (trusted) then copies the
result into its cache, keyed by the hash of the candidate's source, in folders only it can
write, with each file's sha256; later sandboxes for the same source get a verified private
copy, so a source is built once and no sandbox can change what another loads.
`TORCH_CUDA_ARCH_LIST` names only this device's architecture, and `MAX_JOBS` splits the cores
between the builds that run at once.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path


def detect_backend(source: str, device: str) -> str:
    """One of report.BACKENDS, from what the source calls (a candidate declares nothing)."""
    names: set[str] = set()
    try:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Attribute):
                names.add(node.attr)
            elif isinstance(node, ast.Name):
                names.add(node.id)
            elif isinstance(node, ast.keyword) and node.arg:
                names.add(node.arg)
    except SyntaxError:
        names = set(re.findall(r"[A-Za-z_]\w*", source))
    if names & {"load_inline", "cpp_extension"} or "cpp_extension.load(" in source:
        return "cuda_cpp" if "cuda_sources" in names or "__global__" in source else "cpu_cpp"
    if "_compile_kernel" in names:
        return "nvrtc"
    if "triton" in names:
        return "triton"
    return "torch"


def needs_build(backend: str) -> bool:
    return backend in ("cuda_cpp", "cpu_cpp")


def source_hash(source: str) -> str:
    return hashlib.sha256(source.encode()).hexdigest()[:20]


def cache_entry(cache_dir: Path, source: str, device: str) -> Path:
    """Where the build of this exact source for this kind of device is kept."""
    return cache_dir / "ext" / f"{device_arch(device) or 'cpu'}-{source_hash(source)}"


def shared_extensions_root(cache_dir: Path) -> Path:
    """The build folder of a runner whose workers are not contained (they run as its own
    user): the cache itself, private to that user."""
    root = cache_dir / "ext"
    root.mkdir(mode=0o700, parents=True, exist_ok=True)
    return root


class BuildMismatch(RuntimeError):
    """A cached build's files no longer match the sha256 recorded when it was stored."""


MANIFEST = "manifest.json"
MAX_BUILD_BYTES = 4 << 30
# All kept builds together; the least recently used go first (GPURUNNER_BUILD_CACHE_BYTES).
MAX_CACHE_BYTES = int(os.environ.get("GPURUNNER_BUILD_CACHE_BYTES", 16 << 30))


def _regular_files(folder: Path) -> list[Path]:
    """Regular files under `folder`, never following links (a sandbox may plant them)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in filenames:
            path = Path(dirpath) / name
            if stat.S_ISREG(os.lstat(path).st_mode) and name != "lock":
                found.append(path)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return found


def _copy(src: Path, dst: Path) -> tuple[str, int]:
    """Copy one file without following links, keeping its modification time (ninja compares
    them); returns (sha256, modification time in ns) of what was copied."""
    digest = hashlib.sha256()
    fd = os.open(src, os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as f, open(dst, "wb") as out:
        st = os.fstat(f.fileno())
        while chunk := f.read(1 << 20):
            digest.update(chunk)
            out.write(chunk)
    os.chmod(dst, 0o755 if st.st_mode & 0o100 else 0o644)
    os.utime(dst, ns=(st.st_mtime_ns, st.st_mtime_ns))
    return digest.hexdigest(), st.st_mtime_ns


def store_build(built: Path, entry: Path, require_library: bool = True) -> bool:
    """Move a sandbox's finished build into the runner's cache: files copied by the runner
    into folders only it can write (0755, owned by it), each file's sha256 recorded.
    Returns False when there was nothing to store (no shared library, if one is required)."""
    if not built.is_dir():
        return False
    files = _regular_files(built)
    if not files or (require_library and not any(p.suffix == ".so" for p in files)):
        return False
    if sum(os.lstat(p).st_size for p in files) > MAX_BUILD_BYTES:
        return False
    entry.parent.mkdir(mode=0o755, parents=True, exist_ok=True)
    os.chmod(entry.parent, 0o755)
    tmp = Path(tempfile.mkdtemp(dir=entry.parent, prefix=".tmp-"))
    manifest = {}
    for path in files:
        rel = path.relative_to(built)
        (tmp / rel).parent.mkdir(mode=0o755, parents=True, exist_ok=True)
        manifest[str(rel)] = _copy(path, tmp / rel)
    (tmp / MANIFEST).write_text(json.dumps(manifest))
    os.chmod(tmp, 0o755)
    old = entry.with_name(entry.name + f".old-{os.getpid()}")
    if entry.exists():
        os.replace(entry, old)
    try:
        os.replace(tmp, entry)
    except OSError:  # a concurrent runner stored the same source first
        shutil.rmtree(tmp, ignore_errors=True)
    shutil.rmtree(old, ignore_errors=True)
    evict_builds(entry.parent, MAX_CACHE_BYTES, keep=entry)
    return True


def _entry_bytes(entry: Path) -> int:
    return sum(os.lstat(p).st_size for p in _regular_files(entry))


def evict_builds(root: Path, max_bytes: int, keep: Path | None = None) -> list[str]:
    """Remove the least recently used stored builds under `root` until they take at most
    `max_bytes` together (`keep`, the one just stored, stays); the names removed."""
    # Other threads of the batch store builds meanwhile: an entry that moves is skipped.
    used: dict[Path, tuple[float, int]] = {}
    for p in root.iterdir():
        if p.name.startswith(".") or ".old-" in p.name:
            continue
        try:
            if p.is_dir() and has_build(p):
                used[p] = (p.stat().st_mtime, _entry_bytes(p))
        except OSError:
            continue
    total = sum(size for _, size in used.values())
    removed = []
    for entry in sorted(used, key=lambda p: used[p][0]):
        if total <= max_bytes:
            break
        if keep is not None and entry == keep:
            continue
        shutil.rmtree(entry, ignore_errors=True)
        total -= used[entry][1]
        removed.append(entry.name)
    return removed


def has_build(entry: Path) -> bool:
    return (entry / MANIFEST).is_file()


def restore_build(entry: Path, dest: Path, uid: int | None) -> None:
    """Copy a cached build into a sandbox's private build folder, checking every file against
    its recorded sha256 first; raises BuildMismatch (and drops the entry) when one differs."""
    manifest = json.loads((entry / MANIFEST).read_text())
    for rel, (sha, _mtime) in manifest.items():
        target = dest / rel
        target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        got, _ = _copy(entry / rel, target)
        if got != sha:
            shutil.rmtree(entry, ignore_errors=True)
            raise BuildMismatch(f"the cached file {rel} of build {entry.name} has sha256 "
                                f"{got[:16]}..., not the {sha[:16]}... recorded when it was built")
    os.utime(entry)  # used now: the last to be evicted
    if uid is not None:  # torch takes a lock and ninja rewrites its log in the folder
        for dirpath, _dirs, filenames in os.walk(dest):
            os.chown(dirpath, uid, uid)
            for name in filenames:
                os.chown(os.path.join(dirpath, name), uid, uid)


def clear_stale_locks(ext_dir: Path) -> None:
    """Remove the lock files torch leaves when a build is killed (the next one would wait)."""
    for lock in ext_dir.glob("*/lock"):
        lock.unlink(missing_ok=True)


@functools.cache
def device_arch(device: str) -> str | None:
    """The compute capability of the first visible GPU ('9.0'), without starting CUDA here."""
    if device == "cpu":
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=compute_cap", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    lines = [ln.strip() for ln in out.splitlines() if ln.strip()]
    visible = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    index = int(visible) if visible.isdigit() and int(visible) < len(lines) else 0
    return lines[index] if lines else None


def build_env(device: str, parallel_builds: int, ext_dir: Path) -> dict[str, str]:
    """Variables for a worker that builds or loads a candidate's extensions."""
    env = {"TORCH_EXTENSIONS_DIR": str(ext_dir)}
    cores = os.cpu_count() or 1
    # Two compile units per load_inline build (C++ and CUDA): let both run even when every
    # core already has a build.
    env["MAX_JOBS"] = str(max(2, cores // max(1, parallel_builds)))
    arch = device_arch(device)
    if arch:
        env["TORCH_CUDA_ARCH_LIST"] = arch
    return env


_LOCATION = re.compile(r"(?P<file>main\.cpp|cuda\.cu)(?::(?P<l1>\d+)|\((?P<l2>\d+)\))")
# load_inline writes cpp_sources after 1 include line and cuda_sources after 3.
_PREFIX_LINES = {"main.cpp": 1, "cuda.cu": 3}
_SOURCE_NAME = {"main.cpp": "cpp_sources", "cuda.cu": "cuda_sources"}


def format_compile_error(log: str, limit: int = 6000) -> tuple[str, str]:
    """(one-sentence summary, readable compiler output) from a failed build's output.

    Keeps the compiler's error lines with two lines of context and rewrites locations in
    load_inline's generated files to the candidate's own `cpp_sources`/`cuda_sources` lines.
    """
    def relocate(m: re.Match[str]) -> str:
        name = m.group("file")
        line = int(m.group("l1") or m.group("l2")) - _PREFIX_LINES[name]
        return f"{_SOURCE_NAME[name]} line {line}"

    log = re.sub(r"\S*/(main\.cpp|cuda\.cu)", r"\1", log)  # build paths say nothing to a user
    lines = [ln for ln in log.splitlines() if not ln.startswith("Error building extension")]
    keep: list[str] = []
    first = ""
    for i, line in enumerate(lines):
        if re.search(r"\berror\b", line, re.IGNORECASE) and not line.startswith(
                ("FAILED", "ninja:", "c++ ", "/usr", "[")):
            if not first and not line.lstrip().startswith("["):
                first = _LOCATION.sub(relocate, line.strip())
            for j in range(max(0, i - 1), min(len(lines), i + 3)):
                text = _LOCATION.sub(relocate, lines[j])
                if not keep or keep[-1] != text:
                    keep.append(text)
    readable = "\n".join(keep) if keep else log
    summary = first or "the extension failed to build"
    return summary[:300], readable[-limit:]


def is_build_error(exc: BaseException) -> bool:
    """Whether an exception from importing a candidate means its code did not compile
    (C++/CUDA build, NVRTC, Triton) rather than that it failed at run time."""
    text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}"
    return bool(re.search(r"Error building extension|CompilationError|nvrtc|NVRTC|"
                          r"compilation failed|CalledProcessError", text))
