"""A precompiled `torch/extension.h` for C++ candidates' builds on the CPU.

Parsing torch's header is about half of a small `load_inline` build (48 s against 22 s on a
2-core machine). GCC uses `torch/extension.h.gch` instead of the header when it finds one in
an include directory searched before torch's own, and when the compiler flags match those it
was made with; otherwise it ignores the file, so a mismatch only costs the saving.

The runner (trusted) makes one such header per set of compiler flags that a candidate's
`load_inline(..., extra_cflags=[...])` names as a literal list, and only when every flag is on
an allow list (flags reach the runner's own compiler: no plugins, no response files, no
include or define of the candidate's choosing). It lives in the runner's PCH folder, mounted
read-only in every sandbox; the sandbox's `load_inline` adds the matching folder to
`extra_include_paths` (`gpurunner.candidate.patch_cpp_extension`).
"""

from __future__ import annotations

import ast
import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import sysconfig
import tempfile
from pathlib import Path

ENV = "GPURUNNER_PCH"  # in a sandbox: {flags key: folder holding torch/extension.h.gch}
_ALLOWED = re.compile(
    r"-(O[0-3s]|Ofast|march=native|mtune=native|g0|w|DNDEBUG|std=c\+\+(17|20)|"
    r"m(avx|avx2|fma|f16c|bmi2|avx512f|avx512bw|avx512vl|avx512dq|sse4\.1|sse4\.2)|"
    r"f(no-)?(openmp|fast-math|math-errno|trapping-math|associative-math|signed-zeros|"
    r"unroll-loops|strict-aliasing|tree-vectorize|omit-frame-pointer|finite-math-only))")
BUILD_TIMEOUT_S = 600


def root(cache_dir: Path) -> Path:
    """The runner's PCH folder: GPURUNNER_PCH_DIR, else inside its cache."""
    return Path(os.environ.get("GPURUNNER_PCH_DIR") or cache_dir / "pch")


def make_root(cache_dir: Path) -> Path:
    """The PCH folder, made if missing, readable by every sandbox (files added later show
    through its read-only mount)."""
    folder = root(cache_dir)
    folder.mkdir(mode=0o755, parents=True, exist_ok=True)
    if folder.stat().st_uid == os.geteuid():
        os.chmod(folder, 0o755)
    return folder


def key(flags: list[str]) -> str:
    return hashlib.sha256(json.dumps(list(flags)).encode()).hexdigest()[:16]


def allowed(flags: list[str]) -> bool:
    return all(isinstance(f, str) and _ALLOWED.fullmatch(f) for f in flags)


def cflag_sets(source: str) -> list[list[str]]:
    """The `extra_cflags` lists of the source's `load_inline`/`load` calls that are literal
    lists of strings (directly or through a module-level name)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []
    names: dict[str, ast.expr] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            names[node.targets[0].id] = node.value
    found: list[list[str]] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name not in ("load_inline", "load"):
            continue
        for kw in node.keywords:
            if kw.arg != "extra_cflags":
                continue
            value = names.get(kw.value.id, kw.value) if isinstance(kw.value, ast.Name) else kw.value
            if isinstance(value, ast.List | ast.Tuple) and all(
                    isinstance(e, ast.Constant) and isinstance(e.value, str) for e in value.elts):
                flags = [e.value for e in value.elts]  # type: ignore[attr-defined]
                if flags not in found:
                    found.append(flags)
    return found


def _include() -> Path:
    from torch.utils import cpp_extension

    return Path(cpp_extension._TORCH_PATH) / "include"


def _header() -> Path:
    return _include() / "torch" / "extension.h"


def _command(flags: list[str], out: Path) -> list[str]:
    """The compiler call that makes the header, with the flags `load_inline` compiles with
    (torch's own `use_pch` command, written to our folder instead of torch's)."""
    from torch.utils import cpp_extension

    include = _include()
    compiler = cpp_extension.get_cxx_compiler()
    return [compiler, "-x", "c++-header", str(_header()), "-o", str(out),
            "-I", str(include), "-I", sysconfig.get_path("include"),
            "-I", str(include / "torch" / "csrc" / "api" / "include"), *flags,
            "-DTORCH_API_INCLUDE_EXTENSION_H", "-std=c++20", "-fPIC"]


def ensure(cache_dir: Path, flags: list[str]) -> Path | None:
    """The folder holding the precompiled header for `flags`, made if missing (one runner
    at a time per folder); None when the flags are not allowed or the compiler failed."""
    if not allowed(flags):
        return None
    folder = root(cache_dir) / key(flags)
    made = folder / "torch" / "extension.h.gch"
    if made.exists():
        return folder
    make_root(cache_dir)
    with open(root(cache_dir) / f"{key(flags)}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made.exists():  # another runner made it while this one waited
            return folder
        tmp = Path(tempfile.mkdtemp(dir=root(cache_dir), prefix=".tmp-"))
        try:
            (tmp / "torch").mkdir(mode=0o755)
            # GCC reads the header's own path next to the .gch it uses (dependency files name
            # it) and falls back to it when the .gch does not fit: torch's header, copied.
            shutil.copyfile(_header(), tmp / "torch" / "extension.h")
            os.chmod(tmp / "torch" / "extension.h", 0o644)
            done = subprocess.run(_command(flags, tmp / "torch" / "extension.h.gch"),
                                  capture_output=True, timeout=BUILD_TIMEOUT_S)
            if done.returncode != 0:
                return None
            os.chmod(tmp, 0o755)
            os.chmod(tmp / "torch" / "extension.h.gch", 0o644)
            os.replace(tmp, folder)
        except (OSError, subprocess.TimeoutExpired):
            return None
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return folder


def ensure_for(sources: list[str], cache_dir: Path) -> dict[str, str]:
    """The precompiled headers the sources' CPU builds can use, made where missing:
    {flags key: folder}, for the sandbox's ENV variable."""
    out: dict[str, str] = {}
    for source in sources:
        for flags in cflag_sets(source):
            folder = ensure(cache_dir, flags)
            if folder is not None:
                out[key(flags)] = str(folder)
    return out


def include_for(flags: list[str] | None) -> str | None:
    """In a sandbox: the folder to add to `extra_include_paths` for a build with `flags`."""
    try:
        available = json.loads(os.environ.get(ENV) or "{}")
    except ValueError:
        return None
    return available.get(key(list(flags or []))) if isinstance(available, dict) else None
