"""Every candidate the built-in proposer can write for a problem, checked and timed directly.

A quick look at the templates without the search or the sandboxed runner: for each catalogue
idea that applies and each of its variants (applied to the plain reference), build the
candidate, compare it with the reference on fresh random inputs and time both (median of
`--repeats`; on CUDA with events and an L2 flush). Only for this project's own examples:
it imports the reference in this process, which the product never does.

    python benchmarks/builtin_candidates.py examples/softmax_manual.py --device cpu
    python benchmarks/builtin_candidates.py benchmarks/problems/mlp_gelu_layernorm.py --graph --only fuse_graph_cpp

`--graph` gives the proposer the reference's captured graph (as the runner's report does), so
the generated kernels from the graph are offered.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from search.proposers.builtin import tuning  # noqa: E402
from search.proposers.builtin.analysis import analyze  # noqa: E402
from search.proposers.builtin.catalogue import load_catalogue  # noqa: E402
from search.proposers.builtin.recipe import Recipe, apply_change, normalized  # noqa: E402
from search.proposers.builtin.render import render  # noqa: E402


def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def time_ms(fn, inputs, device: str, repeats: int) -> float:
    """Median milliseconds of fn(*inputs); on CUDA events around each call after an L2 flush."""
    for _ in range(3):
        fn(*inputs)
    times = []
    if device == "cuda":
        flush = torch.empty(64 * 1024 * 1024, dtype=torch.int32, device="cuda")
        torch.cuda.synchronize()
        for _ in range(repeats):
            flush.zero_()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(*inputs)
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn(*inputs)
            times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def retune_points(recipe: Recipe, shape) -> list[tuple[str, Recipe]]:
    """The core's settings one parameter group at a time, the other groups at their defaults
    (what the search's retune ideas walk through)."""
    points = tuning.grid_points(recipe.core, shape)
    if not points or not tuning.tunable(recipe.core, recipe.params, shape):
        return []
    base = tuning.settings_of(recipe.core, recipe.params, shape)
    out, seen = [], set()
    for group, _ in tuning.groups(recipe.core):
        for point in points:
            if any(point[k] != base[k] for k in point if k not in group):
                continue
            candidate = normalized(Recipe(recipe.core, {**recipe.params, **point}, dict(recipe.options)))
            if candidate.to_json() not in seen:
                seen.add(candidate.to_json())
                out.append((tuning.describe(point), candidate))
    return out


def candidates(reference: str, device: str, tolerance: float, stacks: list[str], retune: bool = False,
               info: dict | None = None):
    shape = analyze(reference, info)
    specs = {spec.key: spec for spec in load_catalogue()}
    for stack in stacks:
        recipe = Recipe()
        try:
            for part in stack.split("+"):
                key, j = part.split("/")
                spec = specs[key]
                if not spec.applies(shape, device, tolerance):
                    raise KeyError(key)
                recipe = apply_change(recipe, spec.change, spec.variants_for(shape)[int(j)])
        except (KeyError, IndexError, ValueError):
            continue
        yield stack, recipe, render(recipe, shape, reference)
        if retune:
            for label, tuned in retune_points(recipe, shape):
                yield f"{stack}{label}", tuned, render(tuned, shape, reference)
    for spec in specs.values():
        if not spec.applies(shape, device, tolerance):
            continue
        for j, variant in enumerate(spec.variants_for(shape)):
            recipe = apply_change(Recipe(), spec.change, variant)
            yield f"{spec.key}/{j}", recipe, render(recipe, shape, reference)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("problems", nargs="+", type=Path)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--only", default="", help="comma-separated idea keys")
    parser.add_argument("--json", type=Path, help="write the rows here")
    parser.add_argument("--stack", action="append", default=[],
                        help="also try these stacked ideas, e.g. channels_last/0+half_tensor_cores/0")
    parser.add_argument("--retune", action="store_true",
                        help="also time each stack's core over its tuning grid, one parameter group at a time")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile baseline")
    parser.add_argument("--graph", action="store_true", help="capture the reference's graph for the proposer")
    parser.add_argument("--write", type=Path, help="keep the candidate files in this folder")
    args = parser.parse_args()
    rows = []
    workdir = args.write or Path(tempfile.mkdtemp(prefix="builtin_candidates_"))
    workdir.mkdir(parents=True, exist_ok=True)
    for problem in args.problems:
        reference = problem.read_text()
        ref_mod = load_module(problem, f"ref_{problem.stem}")
        torch.manual_seed(0)
        model = ref_mod.Model(*ref_mod.get_init_inputs()).to(args.device)
        inputs = [t.to(args.device) for t in ref_mod.get_inputs()]
        with torch.no_grad():
            expected = model(*inputs)
            eager = time_ms(model, inputs, args.device, args.repeats)
            try:
                if args.no_compile:
                    raise RuntimeError("not asked for")
                compiled = torch.compile(model)
                compiled(*inputs)
                compiled_ms = time_ms(compiled, inputs, args.device, args.repeats)
            except Exception:  # the compile baseline is informative only here
                compiled_ms = float("nan")
        print(f"== {problem}: eager {eager:.4f} ms, torch.compile {compiled_ms:.4f} ms", flush=True)
        only = set(filter(None, args.only.split(",")))
        info = None
        if args.graph:
            from gpurunner.graph import capture_module

            info = {"graph": capture_module(ref_mod)}
        for label, recipe, source in candidates(reference, args.device, args.tolerance, args.stack, args.retune,
                                                info):
            if only and "+" not in label and label.split("/")[0] not in only:
                continue
            path = workdir / f"{problem.stem}_{re.sub(r'[^A-Za-z0-9_]+', '_', label)}.py"
            path.write_text(source)
            row = {"problem": problem.name, "idea": label, "recipe": recipe.to_json()}
            try:
                t0 = time.perf_counter()
                cand_mod = load_module(path, path.stem)
                torch.manual_seed(0)
                cand = cand_mod.ModelNew(*ref_mod.get_init_inputs()).to(args.device)
                with torch.no_grad():
                    out = cand(*inputs)
                    if args.device == "cuda":
                        torch.cuda.synchronize()
                    row["build_s"] = round(time.perf_counter() - t0, 2)
                    torch.manual_seed(1234)  # fresh inputs drawn the way the problem draws them
                    fresh = [t.to(args.device) for t in ref_mod.get_inputs()]
                    ok_fresh = torch.allclose(cand(*fresh), model(*fresh), atol=args.tolerance, rtol=args.tolerance)
                    err = (out.float() - expected).abs().max().item()
                    ok = torch.allclose(out.float(), expected, atol=args.tolerance, rtol=args.tolerance) and ok_fresh
                    ms = time_ms(cand, inputs, args.device, args.repeats)
                row.update(correct=bool(ok), max_err=err, ms=ms, speedup=eager / ms,
                           vs_compile=compiled_ms / ms)
                print(f"  {label:24s} {'ok ' if ok else 'BAD'} {ms:9.4f} ms  {eager / ms:6.2f}x eager  "
                      f"{compiled_ms / ms:6.2f}x compile  err {err:.1e}  build {row['build_s']}s", flush=True)
            except Exception as exc:
                row.update(correct=False, error=traceback.format_exc()[-2000:])
                print(f"  {label:24s} ERROR {type(exc).__name__}: {str(exc)[:300]}", flush=True)
            rows.append(row)
        del model, inputs, expected
        if args.device == "cuda":
            torch.cuda.empty_cache()
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
