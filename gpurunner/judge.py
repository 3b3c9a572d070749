"""Turn what a candidate worker reported into a Verdict (runs in the trusted parent).

Outputs are compared here, against reference outputs the candidate's process never had.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import torch

from gpurunner import cache, checks, roofline
from gpurunner.reference import TRIVIAL_OPS
from gpurunner.report import Check, EvalOptions, Verdict
from gpurunner.sandbox import WorkerResult, describe_exit

if TYPE_CHECKING:
    from gpurunner.api import Problem

POLICY_REFERENCE_SHARE = 0.2  # more of the time than this in the reference's own ops: fallback
POLICY_TORCH_SHARE = 0.8  # more than this in torch operators: not custom kernels
TIMER_NAMES = ("time.", "torch.cuda.")


def judge_run(res: WorkerResult, problem: Problem, options: EvalOptions, backend: str) -> Verdict:
    """The verdict for one candidate run: every check by name, numbers, one-sentence reason."""
    report = problem.report
    base = {"backend": backend, "device": options.device,
            "device_name": report.get("device_name", ""), "compile_s": res.compile_s}
    base.update(_baselines(report))
    if res.status == "timeout":
        limit = options.timeout_s if res.phase == "built" else options.compile_timeout_s
        what = "ran" if res.phase == "built" else "was still importing or building"
        return Verdict(verdict="timeout", reason=f"the candidate {what} past the {limit:.0f} s "
                       "limit and its processes were killed", error=res.stderr_tail, **base)
    if res.status != "done":
        return Verdict(verdict="runtime_error", reason=f"the candidate crashed: {describe_exit(res)}",
                       error=res.stderr_tail, **base)
    r = res.result
    if "harness_error" in r:
        return Verdict(verdict="runtime_error", reason="the runner failed while running the "
                       "candidate (the candidate may have broken the process)",
                       error=r["harness_error"], **base)
    if r.get("verdict"):
        return Verdict(verdict=r["verdict"], reason=r.get("reason", ""), error=r.get("error", "")
                       or r.get("compile_log", ""), compile_log=r.get("compile_log", ""), **base)
    assert res.workdir is not None
    try:
        # Memory-mapped: each output is read once, straight into the comparison.
        cand = torch.load(res.workdir / "cand_outputs.pt", weights_only=True, mmap=True)
    except Exception as exc:  # noqa: BLE001 - the file comes from the untrusted process
        return Verdict(verdict="runtime_error", reason=f"the candidate's outputs could not be read "
                       f"({type(exc).__name__})", **base)
    return _judge_outputs(r, cand, problem, options, base)


def _baselines(report: dict[str, Any]) -> dict[str, Any]:
    eager, compiled = report.get("eager") or {}, report.get("compiled") or {}
    return {"ref_ms": eager.get("median_ms"), "ref_spread_pct": eager.get("spread_pct"),
            "compile_ref_ms": compiled.get("median_ms")}


def compare_device(device: str) -> str:
    """Where the parent compares outputs: the evaluation's GPU when this process can use it
    (candidates are done with it by then), else the CPU."""
    if device.startswith("cuda") and torch.cuda.is_available():
        return device
    return "cpu"


def _judge_outputs(r: dict[str, Any], cand: dict[str, Any], problem: Problem,
                   options: EvalOptions, base: dict[str, Any]) -> Verdict:
    on = compare_device(options.device)
    comparisons = []
    for seed in problem.seeds:
        got = cand["trials"].get(str(seed))
        ref = cache.load_outputs(problem.cache_dir, problem.key, seed)
        if ref is None:
            raise RuntimeError(f"reference outputs for seed {seed} are missing from the cache")
        if got is None:
            comparisons.append(checks.Comparison([Check("output_count", False, "no output")],
                                                 float("inf"), float("inf")))
            continue
        comparisons.append(checks.compare_outputs(ref, got, options.atol, options.rtol, on))
    merged = checks.merge_trials(comparisons)
    all_checks = list(merged.checks)
    timed = cand.get("timed") or {}
    timed_ref = (cache.load_outputs(problem.cache_dir, problem.key, int(timed["seed"]))
                 if str(timed.get("seed", "")).isdigit() else None)
    timed_cmp = (checks.compare_outputs(timed_ref, timed.get("outputs", []), options.atol,
                                        options.rtol, on) if timed_ref is not None else None)
    if timed_cmp is None:
        all_checks.append(Check("timed_outputs", False, "no output from the timed loop"))
    else:
        failed = [c.detail for c in timed_cmp.checks if not c.passed]
        all_checks.append(Check("timed_outputs", not failed,
                                "the last timed call on fresh inputs matches the reference"
                                if not failed else "the last timed call (fresh inputs refilled "
                                "in place) is wrong: " + failed[0]))
    all_checks.extend(_integrity_checks(r, problem, options))
    timing = r.get("timing") or {}
    cand_ms = timing.get("median_ms")
    precision = _precision_label(r, problem.report)
    all_checks.append(Check("precision", True, f"computes in {precision}" if precision else
                            "no precision change detected"))
    numbers = _numbers(problem.report, cand_ms, base, precision)
    if options.device.startswith("cuda") and cand_ms:
        c = roofline.ceilings_for(base.get("device_name", ""))
        all_checks.append(roofline.floor_check(c, problem.report.get("flops", 0.0),
                                               problem.report.get("bytes", 0.0), cand_ms))
        all_checks.append(checks.host_cross_check(timing.get("event_check_ms") or cand_ms,
                                                  timing.get("host_median_ms")))
    all_checks.append(_sandbox_check(r.get("sandbox") or {}))
    all_checks.append(_baseline_check(problem.report, options))

    wrong = [c for c in all_checks if not c.passed and c.name in checks.CORRECTNESS_CHECKS]
    broken = [c for c in all_checks if not c.passed and c.name not in checks.CORRECTNESS_CHECKS]
    if wrong:
        verdict, reason = "incorrect", f"{wrong[0].name} failed: {wrong[0].detail}"
    elif broken:
        verdict, reason = "rejected", (f"right values, but {broken[0].name} failed: "
                                       f"{broken[0].detail}")
    else:
        verdict, reason = "correct", (f"all {len(all_checks)} checks passed over "
                                      f"{len(problem.seeds)} trials")
    max_abs = merged.max_abs_err if merged.max_abs_err != float("inf") else None
    rel = merged.rel_err if merged.rel_err != float("inf") else None
    return Verdict(verdict=verdict, reason=reason[:500], checks=all_checks,
                   cand_ms=cand_ms, cand_spread_pct=timing.get("spread_pct"),
                   max_abs_err=max_abs, rel_err=rel, precision=precision, **numbers, **base)


def _numbers(report: dict[str, Any], cand_ms: float | None, base: dict[str, Any],
             precision: str | None) -> dict[str, Any]:
    out: dict[str, Any] = {"speedup": None, "speedup_vs_compile": None, "roofline_pct": None,
                           "achieved_gbps": None, "achieved_tflops": None}
    if not cand_ms:
        return out
    if base.get("ref_ms"):
        out["speedup"] = base["ref_ms"] / cand_ms
    if base.get("compile_ref_ms"):
        out["speedup_vs_compile"] = base["compile_ref_ms"] / cand_ms
    nbytes, flops = report.get("bytes", 0.0), report.get("flops", 0.0)
    out["achieved_gbps"] = nbytes / (cand_ms / 1e3) / 1e9
    out["achieved_tflops"] = flops / (cand_ms / 1e3) / 1e12
    c = roofline.ceilings_for(base.get("device_name", ""))
    if c is not None and base.get("device", "cpu") != "cpu":
        dtype = (report.get("output_dtypes") or ["float32"])[0]
        out["roofline_pct"] = roofline.roofline_pct(c, flops, nbytes, cand_ms, dtype, precision)
    return out


def _integrity_checks(r: dict[str, Any], problem: Problem, options: EvalOptions) -> list[Check]:
    out = [checks.inputs_unchanged(r.get("mutated", []))]
    tampered = r.get("tampered", [])
    timers = [n for n in tampered if n.startswith(TIMER_NAMES)]
    others = [n for n in tampered if not n.startswith(TIMER_NAMES)]
    out.append(Check("timer_untouched", not timers,
                     f"replaced: {', '.join(timers)}" if timers else "clocks and events unchanged"))
    out.append(Check("harness_untouched", not others,
                     f"replaced: {', '.join(others)}" if others else
                     "seeding, copying and comparison functions unchanged"))
    threads, native = r.get("threads", []), r.get("native_threads", 0)
    out.append(Check("no_leftover_threads", not threads,
                     f"threads still running: {', '.join(threads)}" if threads else
                     f"no Python threads left ({native} new native threads, e.g. pools)"))
    children = r.get("children", [])
    out.append(Check("no_child_processes", not children,
                     f"processes left running: {children}" if children else "none left"))
    if options.policy == "custom-kernels":
        out.append(_policy_check(r.get("profile") or {}, problem.report))
    return out


def _policy_check(profile: dict[str, Any], report: dict[str, Any]) -> Check:
    """Custom kernels only: the reference's own compute ops, or torch's operators in general,
    must not do the candidate's work."""
    ops: dict[str, float] = profile.get("ops", {})
    total = float(profile.get("total_us") or 0.0)
    if total <= 0:
        return Check("custom_kernels", True, "no profile time recorded")
    ref_ops = {o for o in report.get("operators", []) if o not in TRIVIAL_OPS}
    ref_time = sum(t for name, t in ops.items() if name in ref_ops)
    torch_time = sum(t for name, t in ops.items()
                     if name.startswith("aten::") and name not in TRIVIAL_OPS)
    ref_share, torch_share = ref_time / total, min(1.0, torch_time / total)
    if ref_share > POLICY_REFERENCE_SHARE:
        used = sorted((n for n in ops if n in ref_ops), key=lambda n: -ops[n])
        return Check("custom_kernels", False, f"{100 * ref_share:.0f}% of the time is in the "
                     f"reference's own operators ({', '.join(used[:3])})")
    if torch_share > POLICY_TORCH_SHARE:
        return Check("custom_kernels", False, f"{100 * torch_share:.0f}% of the time is in torch "
                     "operators, not the candidate's own kernels")
    return Check("custom_kernels", True, f"{100 * ref_share:.0f}% in the reference's operators, "
                 f"{100 * torch_share:.0f}% in torch operators")


def _precision_label(r: dict[str, Any], report: dict[str, Any]) -> str | None:
    labels = []
    before, after = r.get("precision_flags_before") or {}, r.get("precision_flags") or {}
    if (after.get("matmul_tf32") and not before.get("matmul_tf32")) or (
            after.get("cudnn_tf32") and not before.get("cudnn_tf32")) or (
            after.get("float32_matmul_precision") != before.get("float32_matmul_precision")):
        labels.append("tf32")
    ref_dtypes = set(report.get("output_dtypes", [])) | set(report.get("input_dtypes", []))
    produced = set(r.get("dtypes_produced", []))
    for low, name in (("bfloat16", "bf16"), ("float16", "fp16")):
        if low in produced and low not in ref_dtypes:
            labels.append(name)
    return "+".join(labels) or None


def _baseline_check(report: dict[str, Any], options: EvalOptions) -> Check:
    """How the baselines were measured (informational: it never fails a candidate)."""
    eager = (report.get("eager") or {}).get("median_ms")
    parts = [f"eager {eager:.4g} ms" if eager else "eager not timed"]
    if report.get("compiled"):
        parts.append(f"torch.compile {report['compiled']['median_ms']:.4g} ms")
    elif report.get("compile_error"):
        parts.append(f"torch.compile failed: {report['compile_error']}")
    elif not options.compile_baseline:
        parts.append("torch.compile baseline skipped")
    age = report.get("eager_age_s")
    when = f"{age:.0f} s ago" if age else "for this evaluation"
    how = (f"eager timed {when} in a trusted process, torch.compile cached per problem and "
           "device" if report.get("eager_retimed") else "cached per problem and device")
    return Check("baselines", True, "; ".join(parts) + f" ({how})")


def _sandbox_check(applied: dict[str, Any]) -> Check:
    parts = [f"user id {applied.get('uid')}"]
    parts.append("no network" if applied.get("no_network") else "network not isolated (not root)")
    if applied.get("pid_namespace"):
        parts.append("own PID namespace")
    if applied.get("hidden"):
        parts.append("runner's cache hidden")
    return Check("sandbox", True, ", ".join(parts) + ", scrubbed environment, temporary directory")
