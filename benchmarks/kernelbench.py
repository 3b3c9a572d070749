"""The built-in proposer's search on KernelBench problems, read from a KernelBench checkout.

    python benchmarks/kernelbench.py /path/to/kernelbench --level 2 --sample 24 --seed 0 \\
        --device cuda --budget-s 120 --json kb.json
    python benchmarks/kernelbench.py /path/to/kernelbench --propose-only --device cpu

A search per problem (the runner validates the reference in its sandbox, then
search.engine.run_search with the built-in proposer and the runner evaluator), each within
`--budget-s` seconds of wall clock. Every finished problem is appended to `--json` at once, and
a rerun with the same `--json` skips the problems already there, so one sample can be spread
over several short runs. The summary gives KernelBench's fast_p (the share of problems with a
correct kernel more than p times faster) for p = 0, 1, 2 against eager and against
torch.compile, the geometric-mean speedups, and the same restricted to kernels that keep the
reference's precision (no TF32, fp16 or bf16).

`--propose-only` runs nothing: for every file it captures the forward's graph under fake tensors
(no full-size tensor is made) and counts the distinct candidates the proposer writes.

Imports gpurunner, search.engine and search.proposers only (no Django): it runs on a GPU host.
KernelBench's files are read where they are, never copied.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import math
import random
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from search.engine.types import Node, ProposalContext, SearchConfig  # noqa: E402
from search.proposers.builtin import BuiltinProposer  # noqa: E402

KEEPS_PRECISION = (None, "", "fp32")


def problem_files(folder: Path, levels: list[int], names: list[str], sample: int | None,
                  seed: int) -> list[Path]:
    """The chosen files: named ones, else every file of the levels, optionally a seeded sample."""
    if names:
        found = [p for level in (1, 2, 3) for p in sorted((folder / f"level{level}").glob("*.py"))]
        return [next(p for p in found if p.name == n or p.stem == n or str(p).endswith(n)) for n in names]
    files = [p for level in levels for p in sorted((folder / f"level{level}").glob("*.py"),
                                                  key=lambda p: _number(p.name))]
    if sample is not None and sample < len(files):
        files = sorted(random.Random(seed).sample(files, sample), key=lambda p: (p.parent.name, _number(p.name)))
    return files


def _number(name: str) -> int:
    head = name.split("_", 1)[0]
    return int(head) if head.isdigit() else 0


def _label(path: Path) -> str:
    return f"{path.parent.name}/{path.name}"


# --- --propose-only ---------------------------------------------------------------------------
def fake_report(path: Path, device: str) -> dict[str, Any]:
    """A reference report with the graph captured under fake tensors (nothing full-size runs)."""
    from gpurunner.graph import capture_module

    spec = importlib.util.spec_from_file_location(f"kb_{abs(hash(str(path)))}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # a benchmark file, not a user's paste
    graph = capture_module(module, device)
    forward = [i for i in graph["inputs"] if i["kind"] == "input"]
    nodes = {n["name"]: n for n in graph["nodes"]}
    outputs = []
    for ref in graph["outputs"]:
        name = ref.get("ref") if isinstance(ref, dict) else None
        if name in nodes:
            outputs.append(nodes[name]["outputs"][0])
        else:
            outputs.extend(i for i in forward if i["name"] == name)
    return {"ok": True, "device": device, "graph": graph,
            "input_shapes": [i["shape"] for i in forward], "input_dtypes": [i["dtype"] for i in forward],
            "output_shapes": [o["shape"] for o in outputs], "output_dtypes": [o["dtype"] for o in outputs],
            "operators": sorted({f"aten::{n['target'].split('.')[1]}" for n in graph["nodes"]
                                 if n["target"].startswith("aten.")}),
            "parameters": sum(1 for i in graph["inputs"] if i["kind"] == "parameter")}


def count_candidates(path: Path, device: str, tolerance: float = 1e-2) -> dict[str, Any]:
    """How many distinct candidates the proposer writes for one file, in the first round."""
    t0 = time.monotonic()
    try:
        info = fake_report(path, device)
    except Exception as exc:  # noqa: BLE001 - e.g. a module this machine lacks: no graph, ideas still
        from gpurunner.graph import missing

        info = {"ok": True, "device": device,
                "graph": missing(f"the file does not import here: {type(exc).__name__}: {exc}"[:300])}
    reference = path.read_text()
    proposer = BuiltinProposer(device=device)
    ctx = ProposalContext(reference=reference, reference_info=info, seeds=[], history=[], round=1,
                          device=device, tolerance=tolerance, policy="any", unexplored_categories=[])
    ideas, _ = proposer.propose_ideas(ctx, 100)
    root = Node(kind="reference", round=0, source=reference)
    sources: set[str] = set()
    errors = 0
    for idea in ideas:
        for impl in proposer.implement(ctx, root, idea, 8):
            try:
                compile(impl.source, "candidate.py", "exec")  # every candidate must at least parse
            except SyntaxError:
                impl.source = ""
            if impl.source:
                sources.add(impl.source)
            else:
                errors += 1
    graph = info["graph"]
    return {"file": _label(path), "candidates": len(sources), "ideas": len(ideas), "errors": errors,
            "graph": graph["captured"], "reason": graph["reason"], "nodes": len(graph["nodes"]),
            "seconds": round(time.monotonic() - t0, 2)}


# --- searches ---------------------------------------------------------------------------------
def search_problem(path: Path, config: SearchConfig) -> dict[str, Any]:
    """Search one problem; every kernel's status, speedups and precision."""
    import gpurunner
    from search.engine import run_search
    from search.engine.memory_store import MemoryStore
    from search.engine.runner_evaluator import runner_evaluator

    reference = path.read_text()
    t0 = time.monotonic()
    report = gpurunner.check_reference(reference, device=config.device)
    if not report.ok:
        return {"file": _label(path), "error": report.error}
    if config.max_wall_s is not None:  # the problem's budget includes validating its reference
        config = dataclasses.replace(config, max_wall_s=max(1.0, config.max_wall_s - (time.monotonic() - t0)))
    store = MemoryStore()
    outcome = run_search(reference, report.to_dict(), config, BuiltinProposer(device=config.device),
                         runner_evaluator, store)
    kernels = [{"key": n.key, "status": n.status, "speedup": n.speedup,
                "speedup_vs_compile": n.speedup_vs_compile, "cand_ms": n.cand_ms,
                "precision": (n.verdict or {}).get("precision"),
                "reason": str((n.verdict or {}).get("reason") or n.error or "")[:400],
                "title": n.source.splitlines()[0].strip('"') if n.source else ""}
               for n in store.nodes() if n.kind == "kernel"]
    return {"file": _label(path), "candidates": outcome.candidates, "correct": outcome.correct,
            "stop": outcome.stop_reason, "wall_s": round(time.monotonic() - t0, 1),
            "graph": (report.graph or {}).get("captured"), "kernels": kernels}


def best(row: dict[str, Any], key: str, keep_precision: bool) -> float | None:
    """The row's best correct speedup (`key`: speedup or speedup_vs_compile)."""
    values = [k[key] for k in row.get("kernels", []) if k["status"] == "correct" and k.get(key)
              and (not keep_precision or k.get("precision") in KEEPS_PRECISION)]
    return max(values, default=None)


def summary(rows: list[dict[str, Any]]) -> str:
    """fast_0/1/2 and geometric means, against eager and torch.compile, all and same precision."""
    lines = ["| kernels | baseline | fast_0 | fast_1 | fast_2 | geomean speedup | problems |",
             "|---|---|---|---|---|---|---|"]
    for keep in (False, True):
        for key, baseline in (("speedup", "eager"), ("speedup_vs_compile", "torch.compile")):
            values = [best(r, key, keep) for r in rows]
            n = len(rows)
            fast = [sum(1 for v in values if v is not None and v > p) / n if n else 0.0 for p in (0, 1, 2)]
            found = [v for v in values if v]
            # Problems without a correct kernel count as 1x: the reference itself is kept.
            geo = math.exp(sum(math.log(v if v else 1.0) for v in values) / n) if n else 0.0
            lines.append(f"| {'same precision' if keep else 'any precision'} | {baseline} | "
                         + " | ".join(f"{f:.2f}" for f in fast) + f" | {geo:.2f}x | {n} ({len(found)} found) |")
    return "\n".join(lines)


def _load(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.exists():
        return []
    return json.loads(path.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a KernelBench checkout (holding level1/ level2/ level3/)")
    parser.add_argument("files", nargs="*", help="named files (e.g. 19_ReLU.py or level2/18_...py)")
    parser.add_argument("--level", type=int, action="append", help="a level to take (repeatable); default all")
    parser.add_argument("--sample", type=int, help="a seeded random sample of this many files")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--budget-s", type=float, default=120.0, help="wall-clock budget of each search")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ideas", type=int, default=4)
    parser.add_argument("--impls", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--json", type=Path, help="results, appended per problem; a rerun resumes from it")
    parser.add_argument("--propose-only", action="store_true",
                        help="count the candidates the proposer writes for each file; run nothing")
    args = parser.parse_intermixed_args()
    files = problem_files(args.folder, args.level or [1, 2, 3], args.files, args.sample, args.seed)
    rows = _load(args.json)
    done = {r["file"] for r in rows}
    for path in files:
        if _label(path) in done:
            continue
        if args.propose_only:
            row = count_candidates(path, args.device, args.tolerance)
        else:
            config = SearchConfig(proposer="builtin", device=args.device, rounds=args.rounds,
                                  ideas_per_round=args.ideas, impls_per_idea=args.impls,
                                  tolerance=args.tolerance, use_library=False, max_wall_s=args.budget_s)
            row = search_problem(path, config)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "kernels"}), flush=True)
        if args.json:
            args.json.write_text(json.dumps(rows, indent=1))
    chosen = {_label(p) for p in files}
    rows = [r for r in rows if r["file"] in chosen]
    if args.propose_only:
        counts = [r["candidates"] for r in rows]
        short = [r["file"] for r in rows if r["candidates"] < 4]
        print(f"{len(rows)} files: candidates min {min(counts, default=0)}, median "
              f"{sorted(counts)[len(counts) // 2] if counts else 0}, max {max(counts, default=0)}; "
              f"graphs captured {sum(1 for r in rows if r.get('graph'))}; fewer than 4: {len(short)} {short}")
        return
    print(summary(rows))


if __name__ == "__main__":
    main()
