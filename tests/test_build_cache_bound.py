"""The runner's build cache stays within its size bound: the least recently used builds go
first, a build just stored or just used stays."""

from __future__ import annotations

import os
import time

from gpurunner import build


def stored(tmp_path, name: str, size: int, age_s: float):
    """A build as the runner keeps it: an .so of `size` bytes, a manifest, used `age_s` ago."""
    built = tmp_path / "sandbox" / name
    built.mkdir(parents=True)
    (built / f"{name}.so").write_bytes(os.urandom(size))
    entry = tmp_path / "cache" / "ext" / f"cpu-{name}"
    assert build.store_build(built, entry)
    when = time.time() - age_s
    os.utime(entry, (when, when))
    return entry


def test_the_least_recently_used_builds_go_first_until_the_cache_fits(tmp_path):
    old = stored(tmp_path, "old", 4000, 300)
    middle = stored(tmp_path, "middle", 4000, 200)
    recent = stored(tmp_path, "recent", 4000, 100)
    removed = build.evict_builds(old.parent, max_bytes=9000)
    assert removed == ["cpu-old"]
    assert not old.exists() and middle.exists() and recent.exists()


def test_a_build_just_stored_stays_even_when_it_alone_exceeds_the_bound(tmp_path):
    other = stored(tmp_path, "other", 4000, 100)
    big = stored(tmp_path, "big", 8000, 500)  # its clock set back: still the one to keep
    assert build.evict_builds(big.parent, max_bytes=5000, keep=big) == ["cpu-other"]
    assert big.exists() and not other.exists()


def test_using_a_build_makes_it_the_last_to_go(tmp_path):
    first = stored(tmp_path, "first", 4000, 300)
    second = stored(tmp_path, "second", 4000, 200)
    build.restore_build(first, tmp_path / "worker-ext", None)
    assert build.evict_builds(first.parent, max_bytes=5000) == ["cpu-second"]
    assert first.exists() and not second.exists()
