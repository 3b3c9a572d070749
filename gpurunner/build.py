"""Which backend a candidate uses, where its extensions are built, and readable build errors.

C++ and CUDA candidates build through `torch.utils.cpp_extension.load_inline` when their
module is imported. The runner points `TORCH_EXTENSIONS_DIR` at a directory keyed by the
hash of the candidate's source, so a source is built once and reused by every later
evaluation; `TORCH_CUDA_ARCH_LIST` names only this device's architecture, and `MAX_JOBS`
splits the cores between the builds that run at once.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
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


def extensions_dir(cache_dir: Path, source: str, device: str) -> Path:
    """The build directory for this exact source on this kind of device (made on demand,
    writable by every sandbox user id)."""
    root = cache_dir / "ext"
    if not all(os.stat(p).st_mode & 0o001 for p in cache_dir.resolve().parents):
        # Sandbox user ids cannot reach the cache (e.g. under /root): build under /tmp.
        root = Path(tempfile.gettempdir()) / f"gpurunner-ext-{os.geteuid()}"
    path = root / f"{device_arch(device) or 'cpu'}-{source_hash(source)}"
    path.mkdir(parents=True, exist_ok=True)
    for p in (root, path):
        os.chmod(p, 0o777)
    return path


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
