"""Builds belong to the runner: a sandbox's build is copied into folders only the runner can
write, every file's sha256 is recorded, and a file changed afterwards is never handed to a
candidate."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gpurunner import build, evaluate
from tests.fixtures.runner import candidate_source, reference_source


def fake_build(folder: Path) -> Path:
    ext = folder / "softmax_ext"
    ext.mkdir(parents=True)
    (ext / "softmax_ext.so").write_bytes(b"\x7fELF the real library")
    (ext / "build.ninja").write_text("rule cxx\n")
    os.utime(ext / "build.ninja", ns=(1_000_000_000, 1_000_000_000))
    (ext / "lock").write_text("")
    return folder


def test_a_stored_build_is_writable_only_by_the_runner(tmp_path):
    entry = tmp_path / "cache" / "ext" / "cpu-abc"
    assert build.store_build(fake_build(tmp_path / "sandbox"), entry)
    for path in [entry, *entry.rglob("*")]:
        st = os.lstat(path)
        assert st.st_uid == os.geteuid()
        assert not st.st_mode & 0o022, f"{path} is writable by others"
    assert not (entry / "softmax_ext" / "lock").exists()


def test_a_restored_build_is_a_private_copy_with_its_modification_times(tmp_path):
    entry = tmp_path / "cache" / "ext" / "cpu-abc"
    build.store_build(fake_build(tmp_path / "sandbox"), entry)
    dest = tmp_path / "worker-ext"
    dest.mkdir()
    build.restore_build(entry, dest, None)
    assert (dest / "softmax_ext" / "softmax_ext.so").read_bytes() == b"\x7fELF the real library"
    assert os.stat(dest / "softmax_ext" / "build.ninja").st_mtime_ns == 1_000_000_000


def test_a_swapped_library_is_refused_and_the_entry_dropped(tmp_path):
    entry = tmp_path / "cache" / "ext" / "cpu-abc"
    build.store_build(fake_build(tmp_path / "sandbox"), entry)
    (entry / "softmax_ext" / "softmax_ext.so").write_bytes(b"\x7fELF another library")
    dest = tmp_path / "worker-ext"
    dest.mkdir()
    with pytest.raises(build.BuildMismatch, match="softmax_ext.so of build cpu-abc has sha256"):
        build.restore_build(entry, dest, None)
    assert not build.has_build(entry)


def test_links_planted_by_a_sandbox_are_not_followed(tmp_path):
    built = fake_build(tmp_path / "sandbox")
    (built / "softmax_ext" / "secret.so").symlink_to("/etc/hostname")
    entry = tmp_path / "cache" / "ext" / "cpu-abc"
    build.store_build(built, entry)
    assert not (entry / "softmax_ext" / "secret.so").exists()


@pytest.mark.slow
def test_a_candidate_never_loads_a_cached_library_that_was_swapped(runner_options, runner_cache):
    source = candidate_source("softmax_cpp")
    options = runner_options()
    first = evaluate(reference_source("softmax_rows"), source, options)
    assert first.verdict == "correct", first.reason + first.error
    entry = build.cache_entry(runner_cache, source, "cpu")
    libraries = list(entry.rglob("*.so"))
    assert build.has_build(entry) and libraries
    libraries[0].write_bytes(b"not a library: loading this would crash the candidate")
    again = evaluate(reference_source("softmax_rows"), source, options)
    assert again.verdict == "correct", again.reason + again.error
    assert "a cached build was refused and rebuilt" in again.reason
    assert build.has_build(entry)
