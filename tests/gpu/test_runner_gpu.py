"""GPU runner tests (need CUDA; skipped elsewhere). Run on the H100 with
`python3 -m pytest --noconftest -q tests/gpu` or `python3 tests/gpu/test_runner_gpu.py`:
they need only torch, triton and gpurunner (no Django)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import EvalOptions, check_reference, evaluate_batch  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

REFERENCE = (ROOT / "tests/references/add_large.py").read_text()
BATCH = ["gpu_add_nvrtc", "gpu_add_load_inline", "gpu_add_triton", "gpu_add_side_stream",
         "gpu_add_stale_memory", "gpu_illegal_access", "gpu_add_nvrtc"]


def source(name: str) -> str:
    return (ROOT / "tests/candidates" / f"{name}.py").read_text()


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory):
    """The GPU batch (the NVRTC kernel comes again after the illegal access), with the
    torch.compile baseline."""
    options = EvalOptions(device="cuda", cache_dir=str(tmp_path_factory.mktemp("cache")),
                          compile_baseline=True, timeout_s=120.0)
    got = evaluate_batch(REFERENCE, [source(n) for n in BATCH], options)
    for name, v in zip(BATCH, got, strict=True):
        print(f"{name}: {v.verdict} {v.reason} cand={v.cand_ms} ref={v.ref_ms} "
              f"compile={v.compile_ref_ms} compile_s={v.compile_s} eval_s={v.eval_s} "
              f"stages={v.stages_s}")
        print("  ", [c.detail for c in v.checks if c.name == "baselines"])
    return got


def failed(v) -> set[str]:
    return {c.name for c in v.failed_checks()}


def test_it_evaluates_an_nvrtc_kernel(verdicts):
    v = verdicts[0]
    assert v.verdict == "correct", (v.reason, v.error)
    assert v.backend == "nvrtc"
    assert v.roofline_pct and 1 < v.roofline_pct <= 100
    assert v.speedup and v.speedup_vs_compile
    assert v.compile_ref_ms is not None


def test_it_evaluates_a_kernelbench_load_inline_file_unchanged(verdicts):
    v = verdicts[1]
    assert v.verdict == "correct", (v.reason, v.error)
    assert v.backend == "cuda_cpp"
    assert v.compile_s and v.compile_s > 0


def test_it_evaluates_a_triton_kernel(verdicts):
    v = verdicts[2]
    assert v.verdict == "correct", (v.reason, v.error)
    assert v.backend == "triton"


def test_work_hidden_on_a_side_stream_is_wrong_or_timed_in_full(verdicts):
    v, honest = verdicts[3], verdicts[0]
    # The runner's clock runs until the worker's device-wide sync: the side stream's work is
    # inside it, or the shared output buffer was copied before the work ended.
    assert v.verdict != "correct" or v.cand_ms >= 0.8 * honest.cand_ms, (v.reason, v.cand_ms)


def test_a_speedup_has_its_interval(verdicts):
    v = verdicts[0]
    low, high = v.speedup_ci
    assert low <= v.speedup <= high
    assert v.noisy or high / low <= 1.04


def test_it_poisons_stale_device_memory(verdicts):
    v = verdicts[4]
    assert v.verdict == "incorrect"
    assert "finite" in failed(v)


def test_it_survives_an_illegal_memory_access_and_keeps_working(verdicts):
    assert verdicts[5].verdict == "runtime_error"
    assert "illegal" in (verdicts[5].reason + verdicts[5].error).lower()
    assert verdicts[6].verdict == "correct", verdicts[6].reason


def test_check_reports_flops_and_bytes_on_cuda():
    report = check_reference(REFERENCE, device="cuda")
    assert report.ok, report.error
    assert report.bytes == 3 * 4096 * 4096 * 4
    assert report.output_shapes == [[4096, 4096]]


def test_the_command_line_evaluates_on_cuda(tmp_path):
    ref, cand = tmp_path / "ref.py", tmp_path / "cand.py"
    ref.write_text(REFERENCE)
    cand.write_text(source("gpu_add_triton"))
    out = subprocess.run([sys.executable, "-m", "gpurunner", "evaluate", str(ref), str(cand),
                          "--device", "cuda", "--no-compile-baseline", "--json",
                          "--cache-dir", str(tmp_path / "cache")],
                         capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stderr
    assert '"verdict": "correct"' in out.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "--noconftest", "-q", "-s", "-p", "no:cacheprovider"]))
