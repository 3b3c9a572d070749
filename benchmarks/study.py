"""The built-in proposer's branching search on the five problems of the fast-kernels study.

For each problem in examples/study/: validate the reference with the runner, run the real
search (search.engine.run_search with a MemoryStore, the built-in proposer, the runner
evaluator) and report the best kernel: speedup over eager and over torch.compile, roofline
percent, precision, and how many of the verdict's checks passed. Writes a Markdown table
(the "study" section of docs/benchmarks.md) and the full results as JSON.

    python benchmarks/study.py --device cuda --rounds 2 --out study.md --json study.json
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
                 "wall_s": round(time.monotonic() - t0, 1)}
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
    row["kernels"] = [
        {"key": n.key, "status": n.status, "speedup": n.speedup, "cand_ms": n.cand_ms,
         "title": n.source.splitlines()[0].strip('"') if n.source else "", "error": n.error[:300]}
        for n in store.nodes() if n.kind == "kernel"
    ]
    return row


def _fmt(value, spec: str, suffix: str = "") -> str:
    return "–" if value is None else format(value, spec) + suffix


def markdown(rows: list[dict], config: SearchConfig, device_name: str) -> str:
    today = datetime.date.today().isoformat()
    lines = [
        f"Machine: {device_name}; {today}; `python benchmarks/study.py --device {config.device} "
        f"--rounds {config.rounds} --ideas {config.ideas_per_round} --impls {config.impls_per_idea}` "
        f"(built-in proposer, {config.rounds} rounds of {config.ideas_per_round} ideas x "
        f"{config.impls_per_idea} implementations, {config.seeds_per_round} seeds, tolerance {config.tolerance:g}).",
        "",
        "| problem | eager | torch.compile | best kernel | vs eager | vs torch.compile | roofline | precision "
        "| checks passed | candidates (correct) | best kernel's recipe |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
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
            f"| {r['candidates']} ({r['correct']}) | {r.get('title', '–')} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--ideas", type=int, default=4)
    parser.add_argument("--impls", type=int, default=2)
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--tolerance", type=float, default=1e-2)
    parser.add_argument("--only", default="", help="comma-separated file names from examples/study")
    parser.add_argument("--out", type=Path, help="write the Markdown table here")
    parser.add_argument("--json", type=Path, help="write every result here")
    args = parser.parse_args()
    config = SearchConfig(proposer="builtin", device=args.device, rounds=args.rounds,
                          ideas_per_round=args.ideas, impls_per_idea=args.impls, seeds_per_round=args.seeds,
                          tolerance=args.tolerance, use_library=False)
    only = set(filter(None, args.only.split(",")))
    rows = []
    for label, name in PROBLEMS:
        if only and name not in only:
            continue
        row = run_problem(label, ROOT / "examples" / "study" / name, config)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "kernels"}), flush=True)
        if args.json:  # written after every problem: a cut-off run keeps what it finished
            args.json.write_text(json.dumps(rows, indent=1))
    device_name = args.device
    if args.device == "cuda":
        import torch

        device_name = torch.cuda.get_device_name()
    table = markdown(rows, config, device_name)
    print(table)
    if args.out:
        args.out.write_text(table)


if __name__ == "__main__":
    main()
