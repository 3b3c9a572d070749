"""Kernel families: one folder each, with one spec, that the renderer, the tuner and the
catalogue all read."""

from __future__ import annotations

import re
from pathlib import Path

from search.proposers.builtin.catalogue import load_catalogue
from search.proposers.builtin.families import NAMES, family, registry
from search.proposers.builtin.tuning import grid_points, groups

FAMILIES = Path(__file__).resolve().parents[1] / "search" / "proposers" / "builtin" / "families"


def test_every_family_folder_is_registered_and_holds_its_templates():
    folders = {p.name for p in FAMILIES.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert folders == set(NAMES)
    for name, spec in registry().items():
        assert spec.core == name and spec.folder == FAMILIES / name
        assert (spec.folder / "core.py.tmpl").exists(), name
        # Every file its spec or renderer reads lives in its own folder.
        code = (spec.folder / "__init__.py").read_text()
        for used in re.findall(r'template\("([^"]+)"\)', code):
            assert (spec.folder / used).exists(), (name, used)


def test_every_core_idea_of_the_catalogue_names_a_registered_family():
    for idea in load_catalogue():
        core = idea.change.get("core")
        if core is not None:
            assert family(core).core == core, idea.key


def test_a_familys_retune_groups_move_only_its_own_parameters():
    for name, spec in registry().items():
        keys = {k for group, _ in groups(name) for k in group}
        assert keys <= set(spec.grid) | set(spec.defaults) | {"cluster", "threads", "items"}, name


def test_the_grid_of_a_family_is_the_product_of_its_values():
    spec = family("cuda_elementwise")
    points = grid_points("cuda_elementwise", None)
    assert len(points) == len(spec.grid["threads"]) * len(spec.grid["vec"])


def test_a_new_core_keeps_the_seeds_torch_switches_only_where_it_still_runs_torch_operators():
    from search.proposers.builtin.recipe import Recipe, apply_change

    seed = Recipe("reference", {}, {"tf32": True, "cudnn_benchmark": True, "dtype": "float16",
                                    "cuda_graph": True})
    fused = apply_change(seed, {"kind": "core", "core": "fused_triton"}, {})
    assert family("fused_triton").framework_options
    assert fused.options == {"tf32": True, "cudnn_benchmark": True, "cuda_graph": True}
    hand_written = apply_change(seed, {"kind": "core", "core": "cuda_softmax_rows"}, {})
    assert not family("cuda_softmax_rows").framework_options
    assert hand_written.options == {"cuda_graph": True}
