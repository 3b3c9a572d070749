"""CUDA starts inside the sandbox (namespaces, private root with the /dev/nvidia* nodes,
own user id, seccomp), for NVRTC and load_inline candidates; and whether it also starts in a
PID namespace of its own now that the sandbox mounts a fresh /proc. Needs CUDA and root."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, evaluate_batch  # noqa: E402
from gpurunner.containment import available  # noqa: E402

pytestmark = [pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
              pytest.mark.skipif(not available()[0], reason=available()[1])]

REFERENCE = (ROOT / "tests/references/add_large.py").read_text()


def source(name: str) -> str:
    return (ROOT / "tests/candidates" / f"{name}.py").read_text()


def sandbox_check(v):
    return next(c for c in v.checks if c.name == "sandbox")


def run(tmp_path, names):
    options = EvalOptions(device="cuda", cache_dir=str(tmp_path / "cache"),
                          compile_baseline=False, timeout_s=120.0)
    return evaluate_batch(REFERENCE, [source(n) for n in names], options)


def test_cuda_candidates_run_contained(tmp_path):
    names = ["gpu_add_nvrtc", "gpu_add_load_inline", "gpu_add_load_inline"]
    verdicts = run(tmp_path, names)
    for name, v in zip(names, verdicts, strict=True):
        print(name, v.verdict, v.reason, sandbox_check(v).detail)
        assert v.verdict == "correct", v.reason + v.error
        check = sandbox_check(v)
        assert check.passed and "seccomp filter" in check.detail
        assert "pid" not in check.detail.split("namespaces: ")[1].split(", no network")[0]


def test_cuda_in_a_pid_namespace_with_a_fresh_proc(tmp_path, monkeypatch):
    monkeypatch.setenv("GPURUNNER_PID_NAMESPACE", "1")
    from gpurunner import api

    api._close_spares()
    v = run(tmp_path, ["gpu_add_nvrtc"])[0]
    print("PID namespace on CUDA:", v.verdict, v.reason, v.error[-2000:], os.uname().release)
    if v.verdict != "correct":
        pytest.xfail(f"CUDA does not start in a PID namespace here: {v.reason}")
    assert "pid" in sandbox_check(v).detail
