"""C++ candidates on the CPU build against a precompiled torch/extension.h that the runner
makes once per set of compiler flags; only literal, allowed flags reach the runner's compiler."""

from __future__ import annotations

from pathlib import Path

from gpurunner import evaluate, pch
from gpurunner.build import cache_entry
from tests.fixtures.runner import candidate_source, reference_source

SOURCE = '''
from torch.utils.cpp_extension import load_inline
FLAGS = ["-O3", "-fopenmp"]
a = load_inline(name="a", cpp_sources=SRC, functions=["f"], extra_cflags=FLAGS)
b = load_inline(name="b", cpp_sources=SRC, functions=["f"], extra_cflags=["-O2", "-march=native"])
c = load_inline(name="c", cpp_sources=SRC, functions=["f"], extra_cflags=compute_flags())
'''


def test_the_flags_are_read_from_literal_lists_only():
    assert pch.cflag_sets(SOURCE) == [["-O3", "-fopenmp"], ["-O2", "-march=native"]]


def test_flags_that_could_reach_beyond_the_header_are_refused():
    assert pch.allowed(["-O3", "-march=native", "-fno-math-errno", "-std=c++20"])
    for hostile in (["-fplugin=/tmp/x.so"], ["@/tmp/flags"], ["-include", "/etc/passwd"],
                    ["-DTORCH_API_INCLUDE_EXTENSION_H=0"], ["-B/tmp"], ["-O3 -fplugin=x"],
                    ["-specs=/tmp/s"], ["-Wl,-rpath,/tmp"]):
        assert not pch.allowed(hostile), hostile
        assert pch.ensure(Path("/nonexistent"), hostile) is None


def test_a_cpp_candidate_is_built_with_the_header_the_runner_made_for_its_flags(runner_options):
    options = runner_options()
    source = candidate_source("softmax_cpp")
    v = evaluate(reference_source("softmax_rows"), source, options)
    assert v.verdict == "correct", v.reason
    flags = pch.cflag_sets(source)[0]
    folder = pch.root(Path(options.cache_dir)) / pch.key(flags)
    assert (folder / "torch" / "extension.h.gch").stat().st_size > 1 << 20
    ninja = next(cache_entry(Path(options.cache_dir), source, "cpu").rglob("build.ninja")).read_text()
    assert f"-I{folder}" in ninja  # the sandbox's load_inline searched the header's folder first
