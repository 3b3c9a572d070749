"""The runner's pure functions: output comparison, integrity checks, backend detection,
compiler output, the scrubbed environment. No processes."""

from __future__ import annotations

import torch

from gpurunner import build, checks, roofline
from gpurunner.sandbox import scrubbed_env


def softmax(rows: int = 4, cols: int = 4096) -> torch.Tensor:
    x = torch.randn(rows, cols, generator=torch.Generator().manual_seed(0))
    return torch.softmax(x, dim=-1)


def test_it_passes_an_exact_match():
    ref = softmax()
    comp = checks.compare_outputs([ref], [ref.clone()], 1e-2, 1e-2)
    assert comp.passed and comp.max_abs_err == 0 and comp.rel_err == 0


def test_it_rejects_zeros_for_a_softmax_smaller_than_the_tolerance():
    ref = softmax()
    assert float(ref.max()) < 1e-2  # plain allclose(atol=1e-2) would accept zeros
    comp = checks.compare_outputs([ref], [torch.zeros_like(ref)], 1e-2, 1e-2)
    failed = {c.name for c in comp.checks if not c.passed}
    assert failed == {"allclose", "relative_norm"}


def test_it_accepts_rounding_noise_within_tolerance():
    ref = torch.randn(64, 64)
    noisy = ref + 1e-4 * torch.randn(64, 64)
    assert checks.compare_outputs([ref], [noisy], 1e-2, 1e-2).passed


def test_it_rejects_nan_where_the_reference_is_finite():
    ref = torch.randn(8, 8)
    out = ref.clone()
    out[0, 0] = float("nan")
    comp = checks.compare_outputs([ref], [out], 1e-2, 1e-2)
    assert not next(c for c in comp.checks if c.name == "finite").passed


def test_it_accepts_nan_where_the_reference_has_it():
    ref = torch.randn(8, 8)
    ref[1, 1] = float("nan")
    assert checks.compare_outputs([ref], [ref.clone()], 1e-2, 1e-2).passed


def test_it_rejects_a_wrong_shape_or_dtype():
    ref = torch.randn(8, 8)
    for out in (torch.randn(8), ref.double()):
        comp = checks.compare_outputs([ref], [out], 1e-2, 1e-2)
        assert [c.name for c in comp.checks if not c.passed] == ["shape_dtype"]


def test_it_rejects_a_missing_output():
    comp = checks.compare_outputs([torch.ones(2), torch.ones(2)], [torch.ones(2)], 1e-2, 1e-2)
    assert not comp.passed and comp.checks[0].name == "output_count"


def test_merged_trials_name_the_first_failing_trial():
    ref = torch.randn(4, 4)
    good = checks.compare_outputs([ref], [ref], 1e-2, 1e-2)
    bad = checks.compare_outputs([ref], [ref + 1], 1e-2, 1e-2)
    merged = checks.merge_trials([good, bad, bad])
    allclose = next(c for c in merged.checks if c.name == "allclose")
    assert not allclose.passed and allclose.detail.startswith("trial 2:")


def test_input_mutation_fails_the_check():
    assert checks.inputs_unchanged([]).passed
    assert not checks.inputs_unchanged([0]).passed


def test_side_stream_check_flags_host_time_far_above_events():
    assert checks.host_cross_check(0.070, 0.085).passed
    assert not checks.host_cross_check(0.002, 0.080).passed
    assert checks.host_cross_check(0.1, None).passed  # CPU: nothing to compare


def test_the_roofline_floor_rejects_impossible_times():
    h100 = roofline.ceilings_for("NVIDIA H100 80GB HBM3")
    assert h100 is not None
    nbytes = 3 * 4096 * 4096 * 4  # an fp32 add of two 4096x4096 matrices
    assert roofline.floor_check(h100, 0, nbytes, 0.072).passed
    assert not roofline.floor_check(h100, 0, nbytes, 0.002).passed
    assert roofline.floor_check(None, 0, nbytes, 0.002).passed  # unknown device: not checked
    pct, bound, _ = roofline.roofline(h100, 0, nbytes, 0.072, "fp32")
    assert bound == "memory" and 80 < pct < 100


def test_it_detects_each_backend():
    assert build.detect_backend("from torch.utils.cpp_extension import load_inline\n"
                                "m = load_inline(name='x', cpp_sources='', cuda_sources='')",
                                "cuda") == "cuda_cpp"
    assert build.detect_backend("from torch.utils.cpp_extension import load_inline\n"
                                "m = load_inline(name='x', cpp_sources='')", "cpu") == "cpu_cpp"
    assert build.detect_backend("import torch\nk = torch.cuda._compile_kernel(s, 'k')",
                                "cuda") == "nvrtc"
    assert build.detect_backend("import triton\n@triton.jit\ndef k(x): pass", "cuda") == "triton"
    assert build.detect_backend("import torch\nclass ModelNew: pass", "cpu") == "torch"


def test_compiler_errors_point_at_the_candidates_own_source_lines():
    log = ("Error building extension 'x': [1/2] c++ -c /tmp/e/x/main.cpp -o main.o\n"
           "FAILED: main.o\n"
           "/tmp/e/x/main.cpp:7:5: error: 'helper' was not declared in this scope\n"
           "    7 |     helper(out);\n"
           "/tmp/e/x/cuda.cu(12): error: identifier \"foo\" is undefined\n")
    summary, readable = build.format_compile_error(log)
    assert summary == "cpp_sources line 6:5: error: 'helper' was not declared in this scope"
    assert "cuda_sources line 9: error: identifier" in readable
    assert "/tmp/e" not in readable


def test_the_sandbox_environment_has_no_secrets(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-1")
    monkeypatch.setenv("GITHUB_TOKEN", "t")
    monkeypatch.setenv("DB_PASSWORD", "p")
    monkeypatch.setenv("DATABASE_URL", "sqlite:///x")
    monkeypatch.setenv("MIRROR", "https://user:pass@example.com/simple")
    monkeypatch.setenv("KEEP_ME", "plain")
    env = scrubbed_env()
    for name in ("OPENAI_API_KEY", "GITHUB_TOKEN", "DB_PASSWORD", "DATABASE_URL", "MIRROR"):
        assert name not in env
    assert env["KEEP_ME"] == "plain"
    assert env["PATH"].split(":")[0].endswith("bin")  # the venv's ninja comes first
