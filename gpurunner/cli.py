"""The command line that scripts and the search use. Names and exit codes are a contract.

    python -m gpurunner check REF.py [--device cpu|cuda] [--json]
        exit 0 and a summary when the reference is valid; exit 2 and the error when not.
    python -m gpurunner evaluate REF.py CAND.py [--device] [--trials N] [--atol X] [--rtol X]
        [--timeout S] [--compile-timeout S] [--policy any|custom-kernels]
        [--no-compile-baseline] [--cache-dir DIR] [--json]
        exit 0 whenever the evaluation ran, whatever the verdict.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from gpurunner.kernel_resources import describe
from gpurunner.report import EvalOptions, ReferenceReport, Verdict


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m gpurunner", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("check", help="validate a KernelBench-format reference")
    c.add_argument("reference", type=Path)
    c.add_argument("--device", default="cpu")
    c.add_argument("--timeout", type=float, default=300.0)
    c.add_argument("--json", action="store_true")
    e = sub.add_parser("evaluate", help="evaluate a candidate (ModelNew) against a reference")
    e.add_argument("reference", type=Path)
    e.add_argument("candidate", type=Path)
    d = EvalOptions()
    e.add_argument("--device", default=d.device)
    e.add_argument("--trials", type=int, default=d.trials)
    e.add_argument("--atol", type=float, default=d.atol)
    e.add_argument("--rtol", type=float, default=d.rtol)
    e.add_argument("--timeout", type=float, default=d.timeout_s,
                   help="limit for the candidate's run (checks and timing), seconds")
    e.add_argument("--compile-timeout", type=float, default=d.compile_timeout_s,
                   help="limit for importing and building the candidate, seconds")
    e.add_argument("--policy", choices=["any", "custom-kernels"], default=d.policy)
    e.add_argument("--no-compile-baseline", action="store_true",
                   help="skip timing the reference under torch.compile (its fields are null)")
    e.add_argument("--profile", action="store_true",
                   help="profile one call under torch.profiler (time per operator or kernel)")
    e.add_argument("--counters", action="store_true",
                   help="on CUDA, also profile one call under Nsight Compute (where installed)")
    e.add_argument("--cache-dir", default=None)
    e.add_argument("--json", action="store_true")
    return p


def _summary(report: ReferenceReport) -> str:
    lines = [f"valid reference on {report.device}"]
    for label, shapes, dtypes in (("inputs", report.input_shapes, report.input_dtypes),
                                  ("outputs", report.output_shapes, report.output_dtypes)):
        items = ", ".join(f"{tuple(s)} {d}" for s, d in zip(shapes, dtypes, strict=False))
        lines.append(f"  {label}: {items}")
    lines.append(f"  FLOPs: {report.flops:.4g}   bytes: {report.bytes:.4g}   "
                 f"parameters: {report.parameters}")
    if report.operators:
        lines.append(f"  operators: {', '.join(report.operators[:12])}")
    graph = report.graph or {}
    if graph.get("captured"):
        lines.append(f"  graph: {len(graph.get('nodes', []))} operators ({graph.get('method')})")
    elif graph:
        lines.append(f"  graph: not captured: {graph.get('reason')}")
    return "\n".join(lines)


def _fmt(x: float | None, unit: str = "", digits: int = 4) -> str:
    return "-" if x is None else f"{x:.{digits}g}{unit}"


def _interval(v: Verdict) -> str:
    if not v.speedup_ci:
        return ""
    return f" [{v.speedup_ci[0]:.3g}-{v.speedup_ci[1]:.3g}]" + (" noisy" if v.noisy else "")


def _verdict_text(v: Verdict) -> str:
    lines = [f"{v.verdict}: {v.reason}",
             f"  backend {v.backend}  device {v.device} {v.device_name}".rstrip(),
             f"  candidate {_fmt(v.cand_ms, ' ms')} (spread {_fmt(v.cand_spread_pct, '%', 3)})  "
             f"eager {_fmt(v.ref_ms, ' ms')}  torch.compile {_fmt(v.compile_ref_ms, ' ms')}",
             f"  speedup {_fmt(v.speedup, 'x', 3)}{_interval(v)}  vs compile {_fmt(v.speedup_vs_compile, 'x', 3)}"
             f"  roofline {_fmt(v.roofline_pct, '%', 3)}"
             f"{f' ({v.roofline_bound} bound)' if v.roofline_bound else ''}"
             f"  max abs err {_fmt(v.max_abs_err)}  "
             f"rel err {_fmt(v.rel_err)}  compile {_fmt(v.compile_s, ' s', 3)}"]
    for c in v.checks:
        lines.append(f"  [{'pass' if c.passed else 'FAIL'}] {c.name}: {c.detail}")
    lines.extend(f"  kernel {describe(row)}" for row in v.kernels or [])
    if v.kernels_note:
        lines.append(f"  no Nsight Compute counters: {v.kernels_note}")
    if v.verdict != "correct" and (v.compile_log or v.error):
        lines.append((v.compile_log or v.error).rstrip()[-3000:])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    import gpurunner

    if args.command == "check":
        report = gpurunner.check_reference(args.reference.read_text(), device=args.device,
                                           timeout_s=args.timeout)
        if args.json:
            print(json.dumps(report.to_dict(), indent=2))
        elif report.ok:
            print(_summary(report))
        else:
            where = f" (line {report.line})" if report.line else ""
            print(f"invalid reference{where}: {report.error}", file=sys.stderr)
        return 0 if report.ok else 2
    options = EvalOptions(device=args.device, trials=args.trials, atol=args.atol, rtol=args.rtol,
                          timeout_s=args.timeout, compile_timeout_s=args.compile_timeout,
                          policy=args.policy, compile_baseline=not args.no_compile_baseline,
                          profile=args.profile, counters=args.counters, cache_dir=args.cache_dir)
    verdict = gpurunner.evaluate(args.reference.read_text(), args.candidate.read_text(), options)
    print(json.dumps(verdict.to_dict(), indent=2) if args.json else _verdict_text(verdict))
    return 0
