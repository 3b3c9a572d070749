"""The torch.compile baseline's artefacts are kept by the runner and given back to the next
batch of the same reference (only the artefacts: the baseline is timed anew), checked file by
file like a build; altered ones are dropped, with whatever was copied before the check."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from gpurunner import build, evaluate
from gpurunner.paired import COMPILED_SOURCE, _restore_compiled
from gpurunner.sandbox import INDUCTOR_FOLDER
from tests.fixtures.runner import reference_source

IDENTITY = "\n\nclass ModelNew(Model):\n    pass\n"


def stored_artefacts(folder: Path) -> Path:
    """A kept entry as the runner stores it, from a folder holding one file."""
    (folder / "kernel.so").parent.mkdir(parents=True)
    (folder / "kernel.so").write_bytes(b"compiled kernel")
    entry = folder.parent / "cache" / "ext" / "cpu-abc"
    assert build.store_build(folder, entry, require_library=False)
    return entry


@pytest.mark.slow  # two torch.compile baselines on the CPU
def test_the_compiled_baselines_artefacts_are_kept_and_given_back(runner_options, tmp_path: Path):
    reference = reference_source("softmax_rows") + "\n# compiled-baseline cache test\n"
    options = runner_options(cache_dir=str(tmp_path / "cache"), compile_baseline=True)
    first = evaluate(reference, reference + IDENTITY, options)
    assert first.verdict == "correct" and first.speedup_vs_compile, first.reason
    entry = build.cache_entry(tmp_path / "cache", reference + COMPILED_SOURCE, "cpu")
    assert build.has_build(entry), "the runner kept the compiled baseline's artefacts"
    assert any(p.suffix == ".so" for p in entry.rglob("*")), "Inductor's C++ kernel is kept"

    used_before = entry.stat().st_mtime_ns
    second = evaluate(reference, reference + IDENTITY, options)
    assert second.verdict == "correct" and second.speedup_vs_compile, second.reason
    assert entry.stat().st_mtime_ns > used_before, "the next batch was given the artefacts"


def test_kept_artefacts_are_restored_into_the_baselines_inductor_folder(tmp_path: Path):
    entry = stored_artefacts(tmp_path / "built")
    worker = SimpleNamespace(workdir=tmp_path / "worker", uid=None)
    worker.workdir.mkdir()
    _restore_compiled(entry, worker)
    assert (worker.workdir / INDUCTOR_FOLDER / "kernel.so").read_bytes() == b"compiled kernel"


def test_altered_artefacts_are_dropped_and_nothing_of_them_reaches_the_baseline(tmp_path: Path):
    entry = stored_artefacts(tmp_path / "built")
    (entry / "kernel.so").write_bytes(b"planted after it was kept")
    worker = SimpleNamespace(workdir=tmp_path / "worker", uid=None)
    worker.workdir.mkdir()
    _restore_compiled(entry, worker)
    assert not (worker.workdir / INDUCTOR_FOLDER).exists()
    assert not build.has_build(entry)  # the baseline compiles anew and a fresh copy is kept
