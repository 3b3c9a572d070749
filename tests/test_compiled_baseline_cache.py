"""The torch.compile baseline's artefacts are kept by the runner and given back to the next
batch of the same reference (only the artefacts: the baseline is timed anew), checked file by
file like a build; altered ones are dropped and the baseline compiles again."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpurunner import build, evaluate
from gpurunner.paired import COMPILED_SOURCE
from tests.fixtures.runner import reference_source

pytestmark = pytest.mark.slow  # two torch.compile baselines on the CPU

IDENTITY = "\n\nclass ModelNew(Model):\n    pass\n"


def test_the_compiled_baselines_artefacts_are_kept_reused_and_verified(runner_options, tmp_path: Path):
    reference = reference_source("softmax_rows") + "\n# compiled-baseline cache test\n"
    options = runner_options(cache_dir=str(tmp_path / "cache"), compile_baseline=True)
    first = evaluate(reference, reference + IDENTITY, options)
    assert first.verdict == "correct" and first.speedup_vs_compile, first.reason
    entry = build.cache_entry(tmp_path / "cache", reference + COMPILED_SOURCE, "cpu")
    assert build.has_build(entry), "the runner kept the compiled baseline's artefacts"
    kept = sorted(p.relative_to(entry) for p in entry.rglob("*") if p.is_file())
    assert any(p.suffix == ".so" for p in kept), kept  # Inductor's C++ kernel, built once

    # Altered after it was kept: refused when restored, compiled again and kept afresh.
    victim = next(p for p in entry.rglob("*.so"))
    victim.write_bytes(b"not what the baseline built")
    second = evaluate(reference, reference + IDENTITY, options)
    assert second.verdict == "correct" and second.speedup_vs_compile, second.reason
    assert build.has_build(entry) and next(entry.rglob("*.so")).read_bytes() != b"not what the baseline built"

    # Kept as it was: restored (the runner marks the entry used), and the baseline still timed.
    used_before = entry.stat().st_mtime_ns
    third = evaluate(reference, reference + IDENTITY, options)
    assert third.verdict == "correct" and third.speedup_vs_compile, third.reason
    assert entry.stat().st_mtime_ns > used_before
