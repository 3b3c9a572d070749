"""The built-in proposer's branching search on the five problems of the fast-kernels study.

For each problem in examples/study/: validate the reference with the runner, run the real
search (search.engine.run_search with a MemoryStore, the built-in proposer, the runner
evaluator) and report the best kernel: speedup over eager and over torch.compile, roofline
percent, precision, and how many of the verdict's checks passed. Writes a Markdown table
(the "study" section of docs/benchmarks.md) and the full results as JSON.

    python benchmarks/study.py --device cuda --rounds 5 --wall 90 --deadline 540 --out study.md --json study.json

`--wall` caps each search's wall-clock time (the engine's max_wall_s: checked between batches,
so a search ends after the batch that crosses it); `--deadline` shares what is left of a total
time budget evenly among the problems still to run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import gpurunner  # noqa: E402
from search.engine import run_search  # noqa: E402
from search.engine.memory_store import MemoryStore  # noqa: E402
from search.engine.runner_evaluator import runner_evaluator  # noqa: E402
from search.engine.types import SearchConfig  # noqa: E402
from search.proposers.builtin import BuiltinProposer  # noqa: E402

PROBLEMS = [
    ("matmul 4096 fp32", "matmul_4096.py"),
    ("Conv2d AlexNet-1", "conv2d_alexnet1.py"),
    ("softmax 4096x65536", "softmax_4096x65536.py"),
    ("LayerNorm (16,64,256,256)", "layernorm_16x64x256x256.py"),
    ("Conv+ReLU+MaxPool", "conv_relu_maxpool_alexnet1.py"),
]
# The goals for the built-in proposer on the H100: (min speedup over eager, min over
# torch.compile, min roofline percent or None). Every row must also beat torch.compile.
GOALS = {
    "matmul_4096.py": (7.0, 1.0, None),
    "conv2d_alexnet1.py": (1.8, 1.0, None),
    "softmax_4096x65536.py": (1.8, 1.0, 90.0),
    "layernorm_16x64x256x256.py": (25.0, 1.0, None),
    "conv_relu_maxpool_alexnet1.py": (2.9, 1.9, None),
}


def goal_text(name: str, row: dict) -> str:
    """'met' or what is missing, from the goals above."""
    if name not in GOALS:
        return "—"
    eager, compiled, roofline = GOALS[name]
    missing = []
    if (row.get("speedup") or 0.0) < eager:
        missing.append(f"needs >= {eager:g}x eager")
    vs_compile = row.get("speedup_vs_compile") or 0.0
    if vs_compile <= 1.0:
        missing.append("must beat torch.compile")
    elif vs_compile < compiled:
        missing.append(f"needs >= {compiled:g}x torch.compile")
    if roofline is not None and (row.get("roofline_pct") or 0.0) < roofline:
        missing.append(f"needs >= {roofline:g}% of roofline")
    return "met" if not missing else "**not met**: " + ", ".join(missing)


def run_problem(label: str, path: Path, config: SearchConfig) -> dict:
    """Search one problem; the best kernel's numbers and the search's counts."""
    reference = path.read_text()
    t0 = time.monotonic()
    report = gpurunner.check_reference(reference, device=config.device)
    if not report.ok:
        return {"problem": label, "error": report.error}
    store = MemoryStore()
    outcome = run_search(reference, report.to_dict(), config, BuiltinProposer(device=config.device),
                         runner_evaluator, store)
    best = outcome.best
    row: dict = {"problem": label, "file": str(path.relative_to(ROOT)), "candidates": outcome.candidates,
                 "correct": outcome.correct, "stop": outcome.stop_reason,
                 "wall_s": round(time.monotonic() - t0, 1), "wall_budget_s": config.max_wall_s,
                 "rounds_run": max((n.round for n in store.nodes() if n.kind == "idea"), default=0),
                 "ideas": sum(1 for n in store.nodes() if n.kind == "idea")}
    if best is not None:
        verdict = best.verdict or {}
        checks = verdict.get("checks", [])
        idea = next((n for n in store.nodes() if n.id == best.parent_id), None)
        row.update(best_key=best.key, speedup=best.speedup, speedup_vs_compile=best.speedup_vs_compile,
                   cand_ms=best.cand_ms, ref_ms=verdict.get("ref_ms"), compile_ms=verdict.get("compile_ref_ms"),
                   roofline_pct=verdict.get("roofline_pct"), precision=verdict.get("precision"),
                   rel_err=verdict.get("rel_err"), backend=verdict.get("backend"),
                   checks_passed=sum(1 for c in checks if c.get("passed")), checks_total=len(checks),
                   idea=idea.idea if idea else "", title=best.source.splitlines()[0].strip('"'))
    row["goal"] = goal_text(path.name, row) if path.name in GOALS else ""
    row["kernels"] = [
        {"key": n.key, "status": n.status, "speedup": n.speedup, "cand_ms": n.cand_ms,
         "eval_s": (n.verdict or {}).get("eval_s"),
         "title": n.source.splitlines()[0].strip('"') if n.source else "", "error": n.error[:300]}
        for n in store.nodes() if n.kind == "kernel"
    ]
    return row


def _fmt(value, spec: str, suffix: str = "") -> str:
    return "–" if value is None else format(value, spec) + suffix


def markdown(rows: list[dict], config: SearchConfig, device_name: str, command: str) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        f"Machine: {device_name}; {today}; `{command}` "
        f"(built-in proposer, up to {config.rounds} rounds of {config.ideas_per_round} ideas x "
        f"{config.impls_per_idea} implementations, {config.seeds_per_round} seeds, tolerance {config.tolerance:g}, "
        f"{config.trials} trials per kernel).",
        "",
        "| problem | eager | torch.compile | best kernel | vs eager | vs torch.compile | roofline | precision "
        "| checks passed | rounds run (wall budget) | candidates (correct) | goal | best kernel's recipe |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['problem']} | reference failed: {r['error']} |||||||||")
            continue
        lines.append(
            f"| {r['problem']} | {_fmt(r.get('ref_ms'), '.3f', ' ms')} | {_fmt(r.get('compile_ms'), '.3f', ' ms')} "
            f"| {_fmt(r.get('cand_ms'), '.3f', ' ms')} | {_fmt(r.get('speedup'), '.2f', 'x')} "
            f"| {_fmt(r.get('speedup_vs_compile'), '.2f', 'x')} | {_fmt(r.get('roofline_pct'), '.0f', '%')} "
            f"| {r.get('precision') or 'fp32'} | {r.get('checks_passed', 0)}/{r.get('checks_total', 0)} "
            f"| {r.get('rounds_run', 0)} ({_fmt(r.get('wall_budget_s'), '.0f', ' s')}, stop: {r.get('stop', '?')}) "
            f"| {r['candidates']} ({r['correct']}) | {r.get('goal') or '–'} | {r.get('title', '–')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ideas", type=int, default=4)
    parser.add_argument("--impls", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--trials", type=int, default=5, help="input sets each kernel is checked on")
    parser.add_argument("--wall", type=float, default=None, help="wall-clock budget of each search, seconds")
    parser.add_argument("--deadline", type=float, default=None,
                        help="total seconds for every problem; what is left is shared among those still to run")
    parser.add_argument("--only", default="", help="comma-separated file names from examples/study")
    parser.add_argument("--problems", nargs="*", type=Path, default=[],
                        help="other reference files to search instead (no goals)")
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--json", type=Path, help="write every result here")
    args = parser.parse_args()
    config = SearchConfig(proposer="builtin", device=args.device, rounds=args.rounds,
                          ideas_per_round=args.ideas, impls_per_idea=args.impls, seeds_per_round=args.seeds,
                          tolerance=args.tolerance, use_library=False, trials=args.trials,
                          max_wall_s=args.wall)
    only = set(filter(None, args.only.split(",")))
    chosen = [(label, ROOT / "examples" / "study" / name) for label, name in PROBLEMS if not only or name in only]
    if args.problems:
        chosen = [(path.stem, path.resolve()) for path in args.problems]
    rows = []
    started = time.monotonic()
    for index, (label, path) in enumerate(chosen):
        if args.deadline is not None:
            # Margin for validating the reference and for the batch that crosses the budget.
            share = (args.deadline - (time.monotonic() - started)) / (len(chosen) - index) * 0.6
            config.max_wall_s = max(20.0, min(share, args.wall or share))
        row = run_problem(label, path, config)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "kernels"}), flush=True)
        if args.json:  # written after every problem: a cut-off run keeps what it finished
            args.json.write_text(json.dumps(rows, indent=1))
    device_name = args.device
    if args.device == "cuda":
        import torch

        device_name = torch.cuda.get_device_name()
    table = markdown(rows, config, device_name, "python benchmarks/study.py " + " ".join(sys.argv[1:]))
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
