"""Turn what the trusted side measured and checked into a Verdict (runs in the parent).

Correctness comes from the reference worker's comparisons, times from the parent's clock;
the candidate's own facts only add advisory checks (see docs/runner.md).
"""

from __future__ import annotations

from typing import Any

from gpurunner import checks, containment, roofline
from gpurunner.facts import CandidateFacts, number
from gpurunner.paired import CandidateRun, Referee, RunFailure, timing_params
from gpurunner.problem import Problem
from gpurunner.reference import TRIVIAL_OPS
from gpurunner.report import Check, EvalOptions, Verdict
from gpurunner.sandbox import name_disk_full
from gpurunner.timing import paired_ratio, summarize

POLICY_REFERENCE_SHARE = 0.2  # more of the time than this in the reference's own ops: fallback
POLICY_TORCH_SHARE = 0.8  # more than this in torch operators: not custom kernels
TIMER_NAMES = ("time.", "torch.cuda.")
OUTPUT_CHECKS = ("output_count", "shape_dtype", "plain_outputs")


def judge_failure(fail: RunFailure, problem: Problem, options: EvalOptions, backend: str,
                  ) -> Verdict:
    """The verdict for a run that stopped early: its cause, in the failure's words."""
    failed = []
    if fail.extra.get("check") in OUTPUT_CHECKS:  # named by the candidate's worker: known only
        failed = [Check(str(fail.extra["check"]), False, str(fail.extra.get("detail", "")))]
    reason = name_disk_full(fail.reason, fail.error)
    return Verdict(verdict=fail.verdict, reason=reason[:600], error=fail.error,
                   checks=failed,
                   compile_log=str(fail.extra.get("compile_log") or ""), backend=backend,
                   device=options.device, device_name=problem.report.get("device_name", ""))


def _comparison(d: dict[str, Any]) -> checks.Comparison:
    """A Comparison from the reference worker's reply (typed again: it crossed a process)."""
    found = [Check(str(c.get("name")), bool(c.get("passed")), str(c.get("detail", ""))[:500])
             for c in d.get("checks") or [] if isinstance(c, dict)]
    return checks.Comparison(found or [Check("output_count", False, "no comparison")],
                             _error(d.get("max_abs_err")), _error(d.get("rel_err")))


def _error(value: Any) -> float:
    got = number(value, 0.0, float("inf"))
    return float("inf") if got is None else got


def judge_run(run: CandidateRun, ref: Referee, problem: Problem, options: EvalOptions,
              backend: str) -> Verdict:
    """The verdict for one candidate run: every check by name, numbers, one-sentence reason."""
    report = problem.report
    base = {"backend": backend, "device": options.device,
            "device_name": report.get("device_name", "")}
    merged = checks.merge_trials([_comparison(t) for t in run.trials])
    all_checks = list(merged.checks)
    if run.timed_failures:
        first = next((c.detail for c in _comparison(run.timed_failures[0]).checks
                      if not c.passed), "wrong outputs")
        all_checks.append(Check("timed_outputs", False, f"{len(run.timed_failures)} of "
                                f"{run.timed_checked} timed calls on fresh inputs were wrong: "
                                f"{first}"))
    else:
        all_checks.append(Check("timed_outputs", run.timed_checked > 0,
                                f"all {run.timed_checked} timed calls on fresh inputs match the "
                                "reference" if run.timed_checked else "no timed call checked"))
    all_checks.append(checks.inputs_unchanged(run.mutated))
    all_checks.extend(_integrity_checks(run.facts, problem, options))
    precision = _precision_label(run.facts, report)
    all_checks.append(Check("precision", True, f"computes in {precision}" if precision else
                            "no precision change detected"))
    compute = _compute_precision(run.facts.precision_flags, problem.report, precision,
                                 base["backend"])
    numbers = _numbers(run, report, base, compute, options)
    if options.device.startswith("cuda") and numbers["cand_ms"]:
        c = roofline.ceilings_for(base.get("device_name", ""))
        all_checks.append(roofline.floor_check(
            c, report.get("flops", 0.0), report.get("bytes", 0.0), numbers["cand_ms"],
            _data_dtype(report), max(options.atol, options.rtol)))
    all_checks.append(_timing_check(run, numbers))
    all_checks.append(_sandbox_check(run.sandbox))
    all_checks.append(_group_check(run.strays))
    all_checks.append(_baseline_check(run, ref, options))

    wrong = [c for c in all_checks if not c.passed and c.name in checks.CORRECTNESS_CHECKS]
    broken = [c for c in all_checks if not c.passed and c.name not in checks.CORRECTNESS_CHECKS]
    if wrong:
        verdict, reason = "incorrect", f"{wrong[0].name} failed: {wrong[0].detail}"
    elif broken:
        verdict, reason = "rejected", (f"right values, but {broken[0].name} failed: "
                                       f"{broken[0].detail}")
    else:
        verdict, reason = "correct", (f"all {len(all_checks)} checks passed over "
                                      f"{len(run.trials)} trials and {run.timed_checked} timed "
                                      "calls")
    max_abs = merged.max_abs_err if merged.max_abs_err != float("inf") else None
    rel = merged.rel_err if merged.rel_err != float("inf") else None
    return Verdict(verdict=verdict, reason=reason[:500], checks=all_checks, max_abs_err=max_abs,
                   rel_err=rel, precision=precision, compile_s=run.load_s + run.first_call_s,
                   profile=_time_by_operator(run.facts.profile),
                   kernels=kernel_figures(run.facts.kernels, run.facts.counters) or None,
                   kernels_note=run.facts.counters_error, **numbers, **base)


def _kernel_key(name: str) -> str:
    """A kernel's name without return type and parameters: cu++filt and Nsight Compute
    write `void f<float>(float *, int)` for what the driver calls `f<float>`."""
    name = name.removeprefix("void ").strip()
    return name.split("(", 1)[0].strip()


def kernel_figures(resources: list[dict[str, Any]], counters: list[dict[str, Any]],
                   top: int = 16) -> list[dict[str, Any]]:
    """One row per kernel: the compiled code's figures joined with Nsight Compute's counters
    by name; the kernels that took the most time under ncu first, then the rest."""
    rows: dict[str, dict[str, Any]] = {}
    for counted in counters:
        rows.setdefault(_kernel_key(counted["name"]), {}).update(counted)
    for res in resources:
        row = rows.setdefault(_kernel_key(res["name"]), {"name": res["name"]})
        row.update({k: v for k, v in res.items() if k != "name" and k not in row})
    return sorted(rows.values(), key=lambda r: -(r.get("duration_us") or 0.0))[:top]


def _time_by_operator(profile: dict[str, Any] | None, top: int = 12) -> dict[str, Any] | None:
    """The slowest operators of the candidate's profiled call (on CUDA its device kernels,
    which include the candidate's own), for the proposer's next prompt."""
    if not profile:
        return None
    times = profile.get("kernels") or profile.get("ops") or {}
    slowest = dict(sorted(times.items(), key=lambda kv: -kv[1])[:top])
    return {"total_us": profile.get("total_us") or sum(times.values()), "ops": slowest}


def _numbers(run: CandidateRun, report: dict[str, Any], base: dict[str, Any],
             compute: str, options: EvalOptions) -> dict[str, Any]:
    """Times (medians of the paired calls), speedups with their intervals, roofline."""
    out: dict[str, Any] = {k: None for k in (
        "ref_ms", "ref_spread_pct", "compile_ref_ms", "cand_ms", "cand_spread_pct", "speedup",
        "speedup_ci", "speedup_vs_compile", "speedup_vs_compile_ci", "roofline_pct",
        "roofline_bound", "roofline_peak", "achieved_gbps", "achieved_tflops")}
    out["noisy"] = False
    if not run.cand_ms or len(run.eager_ms) != len(run.cand_ms):
        return out
    cand, eager = summarize(run.cand_ms), summarize(run.eager_ms)
    out.update(cand_ms=cand.median_ms, cand_spread_pct=cand.spread_pct, ref_ms=eager.median_ms,
               ref_spread_pct=eager.spread_pct)
    speedup, low, high = paired_ratio(run.eager_ms, run.cand_ms)
    out["speedup"], out["speedup_ci"] = speedup, [low, high]
    max_ratio = timing_params(options.device)["max_ci_ratio"]
    out["noisy"] = not (low > 0 and high / low <= max_ratio) or _at_resolution(
        run, cand.median_ms, eager.median_ms)
    if len(run.compiled_ms) == len(run.cand_ms):
        s, lo, hi = paired_ratio(run.compiled_ms, run.cand_ms)
        out.update(compile_ref_ms=summarize(run.compiled_ms).median_ms, speedup_vs_compile=s,
                   speedup_vs_compile_ci=[lo, hi])
    if base.get("device", "cpu") == "cpu":
        return out  # a CPU's rates depend on its cores and caches: no roofline to judge by
    ms = cand.median_ms
    nbytes, flops = report.get("bytes", 0.0), report.get("flops", 0.0)
    out["achieved_gbps"] = nbytes / (ms / 1e3) / 1e9 if nbytes else None
    out["achieved_tflops"] = flops / (ms / 1e3) / 1e12 if flops else None
    c = roofline.ceilings_for(base.get("device_name", ""))
    if c is not None:
        pct, bound, peak = roofline.roofline(c, flops, nbytes, ms, compute)
        out.update(roofline_pct=pct, roofline_bound=bound, roofline_peak=peak)
    return out


def _data_dtype(report: dict[str, Any]) -> str:
    """The dtype the reference computes in: its first floating output's (else float32)."""
    return next((d for d in report.get("output_dtypes") or [] if "float" in d), "float32")


def _compute_precision(flags: dict[str, Any], report: dict[str, Any], label: str | None,
                       backend: str | None) -> str:
    """The precision the candidate's arithmetic runs at, for its roofline percent."""
    reduced = roofline.tf32_allowed(flags or {}, report.get("operators", []), backend)
    return roofline.compute_precision(_data_dtype(report), label, reduced)


# A call shorter than this many times the harness's own empty call (wake-up, two round trips,
# their jitter; CandidateRun.null_ms) measures the harness about as much as the code: identical
# code on this project's 2-core CPU read 0.47x to 1.08x at 0.1-0.2 ms a call.
RESOLUTION_EMPTY_CALLS = 10


def _at_resolution(run: CandidateRun, cand_ms: float, eager_ms: float) -> bool:
    return run.null_ms > 0 and min(cand_ms, eager_ms) < RESOLUTION_EMPTY_CALLS * run.null_ms


def _timing_check(run: CandidateRun, numbers: dict[str, Any]) -> Check:
    """How the times were taken and how sure the speedup is (never fails: `noisy` marks it)."""
    if not numbers["speedup"]:
        return Check("timing", True, "not timed")
    low, high = numbers["speedup_ci"]
    detail = (f"{len(run.cand_ms)} paired calls in {run.blocks} block(s), timed by the runner's "
              f"clock (channel floor {run.floor_ms:.3f} ms taken off); speedup "
              f"{numbers['speedup']:.3g}x, 95% interval {low:.3g}-{high:.3g}")
    if _at_resolution(run, numbers["cand_ms"], numbers["ref_ms"]):
        faster = min(numbers["cand_ms"], numbers["ref_ms"])
        detail += (f": noisy, a call of {faster:.3g} ms is within {RESOLUTION_EMPTY_CALLS}x "
                   f"the harness's own empty call ({run.null_ms:.3g} ms), so the ratio measures "
                   "the harness about as much as the code (a larger input measures the code)")
    elif numbers["noisy"]:
        detail += ": noisy, the interval stayed wide (the machine is busy)"
    return Check("timing", True, detail)


def _integrity_checks(facts: CandidateFacts, problem: Problem, options: EvalOptions,
                      ) -> list[Check]:
    """Advisory checks from the candidate's own report (see CandidateFacts)."""
    out = []
    tampered = facts.tampered
    timers = [n for n in tampered if n.startswith(TIMER_NAMES)]
    others = [n for n in tampered if not n.startswith(TIMER_NAMES)]
    out.append(Check("timer_untouched", not timers,
                     f"replaced: {', '.join(timers)}" if timers else "clocks and events unchanged"))
    out.append(Check("harness_untouched", not others,
                     f"replaced: {', '.join(others)}" if others else
                     "seeding, copying and comparison functions unchanged"))
    threads, native = facts.threads, facts.native_threads
    out.append(Check("no_leftover_threads", not threads,
                     f"threads still running: {', '.join(threads)}" if threads else
                     f"no Python threads left ({native} new native threads, e.g. pools)"))
    children = facts.children
    out.append(Check("no_child_processes", not children,
                     f"processes left running: {children}" if children else "none left"))
    if options.policy == "custom-kernels":
        out.append(_policy_check(facts.profile or {}, problem.report))
    if facts.malformed:
        out.append(Check("facts_readable", False, "the candidate's process sent unreadable "
                         f"facts: {', '.join(facts.malformed)}"))
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
        used = sorted((n for n in ops if n.startswith("aten::") and n not in TRIVIAL_OPS),
                      key=lambda n: -ops[n])
        return Check("custom_kernels", False, f"{100 * torch_share:.0f}% of the time is in torch "
                     f"operators ({', '.join(used[:3])}), not the candidate's own kernels")
    return Check("custom_kernels", True, f"{100 * ref_share:.0f}% in the reference's operators, "
                 f"{100 * torch_share:.0f}% in torch operators")


def _precision_label(facts: CandidateFacts, report: dict[str, Any]) -> str | None:
    labels = []
    before, after = facts.precision_flags_before, facts.precision_flags
    if (after.get("matmul_tf32") and not before.get("matmul_tf32")) or (
            after.get("cudnn_tf32") and not before.get("cudnn_tf32")) or (
            after.get("float32_matmul_precision") != before.get("float32_matmul_precision")):
        labels.append("tf32")
    ref_dtypes = set(report.get("output_dtypes", [])) | set(report.get("input_dtypes", []))
    produced = set(facts.dtypes_produced)
    for low, name in (("bfloat16", "bf16"), ("float16", "fp16")):
        if low in produced and low not in ref_dtypes:
            labels.append(name)
    return "+".join(labels) or None


def _baseline_check(run: CandidateRun, ref: Referee, options: EvalOptions) -> Check:
    """How the baselines were measured (informational: it never fails a candidate)."""
    parts = [f"eager timed in {len(run.eager_ms)} calls"]
    if run.compiled_ms:
        parts.append(f"torch.compile in {len(run.compiled_ms)} calls")
    elif ref.compile_error:
        parts.append(f"torch.compile failed: {ref.compile_error}")
    elif not options.compile_baseline:
        parts.append("torch.compile baseline skipped")
    return Check("baselines", True, "; ".join(parts) + ", interleaved with the candidate's "
                 "calls on the same inputs, in a trusted process")


def _group_check(strays: list[int]) -> Check:
    """Established here, not by the candidate: whether a process of its sandbox left the
    worker's process group. Such a process runs between a call's `done` and the moment the
    runner finds it in /proc, so it could finish the work off the clock."""
    if not strays:
        return Check("stayed_in_group", True, "every process of the sandbox stayed in the "
                                              "worker's process group")
    return Check("stayed_in_group", False, f"{len(strays)} process(es) of the sandbox left the "
                 "worker's process group (setsid or setpgid): found and paused at each stop, "
                 "but running until found, off the clock")


def _sandbox_check(applied: dict[str, Any]) -> Check:
    passed, detail = containment.describe(applied)
    return Check("sandbox", passed, detail)
