"""The runner's Python API: check a reference, evaluate one candidate or a batch.

The pipeline, each stage its own module: reference (trusted worker, cached) -> build (a pool
of sandboxed workers for C++/CUDA sources) -> run (one sandboxed worker per candidate, one at
a time so timings do not interfere) -> judge (pure comparisons here, in the parent).
"""

from __future__ import annotations

import atexit
import os
import shutil
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from gpurunner import build, cache
from gpurunner.judge import judge_run
from gpurunner.report import EvalOptions, ReferenceReport, Verdict
from gpurunner.sandbox import Worker, WorkerResult, describe_exit

REFERENCE_RUN_S = 900.0  # validation plus both baselines (torch.compile can take minutes)
SPARE_WORKERS = 4  # workers importing torch ahead of the candidates that will need them
# (cache dir, problem key) -> (monotonic time, eager timing) of the last eager timing taken here.
_EAGER_TIMED: dict[tuple[str, str], tuple[float, dict[str, Any]]] = {}


def timing_params(device: str) -> dict[str, Any]:
    """Keyword arguments for timing.bench on this kind of device."""
    if device.startswith("cuda"):
        return {"warmup": 5, "target_ms": 100.0, "min_reps": 20, "max_reps": 400,
                "cross_check_reps": 10}
    return {"warmup": 2, "target_ms": 60.0, "min_reps": 5, "max_reps": 40,
            "cross_check_reps": 0}


@dataclass
class Problem:
    """A validated reference with its cached report and where its outputs live."""

    source: str
    key: str
    report: dict[str, Any]
    seeds: list[int]
    timing_seeds: list[int]
    cache_dir: Path


def _reference_report(result: dict[str, Any], device: str) -> ReferenceReport:
    data = {k: v for k, v in result.items() if k != "ok"}
    return ReferenceReport.from_dict({"ok": bool(result.get("ok")), "device": device, **data})


def _run_reference_worker(source: str, device: str, cache_dir: Path, seeds: list[int],
                          timing_seeds: list[int], *, compute_outputs: bool, time_eager: bool,
                          time_compile: bool, compile_timeout_s: float, run_timeout_s: float,
                          ) -> tuple[dict[str, Any], Path | None, Worker]:
    """Run the reference job; returns (result, outputs file or None, the worker to close)."""
    worker = Worker(cache_dir, device)
    (worker.workdir / "reference.py").write_text(source)
    job = {"mode": "reference", "device": device, "seeds": seeds, "timing_seeds": timing_seeds,
           "compute_outputs": compute_outputs, "time_eager": time_eager,
           "time_compile": time_compile, "timing": timing_params(device)}
    res = worker.run(job, compile_timeout_s, run_timeout_s)
    if res.status == "timeout":
        return {"ok": False, "error": f"the reference did not finish within {run_timeout_s:.0f} s "
                f"({res.phase})"}, None, worker
    if res.status != "done":
        return {"ok": False, "error": f"the reference crashed: {describe_exit(res)}",
                "detail": res.stderr_tail}, None, worker
    if "harness_error" in res.result:
        return {"ok": False, "error": "the runner failed while validating the reference",
                "detail": res.result["harness_error"]}, None, worker
    return res.result, worker.workdir, worker


def check_reference(source: str, device: str = "cpu", timeout_s: float = 300.0) -> ReferenceReport:
    """Validate a KernelBench-format reference in the sandbox.

    Returns ok=True with input/output shapes and dtypes, FLOPs and bytes, or ok=False with
    one specific error (syntax, a missing name, a wrong return type, a forward that raises,
    outputs that are not tensors, inputs too large for the device) and its line when known.
    """
    cache_dir = cache.prepare(None)
    result, _, worker = _run_reference_worker(
        source, device, cache_dir, [1234], [], compute_outputs=False, time_eager=False,
        time_compile=False, compile_timeout_s=timeout_s, run_timeout_s=timeout_s)
    worker.close()
    return _reference_report(result, device)


def prepare_problem(source: str, options: EvalOptions) -> tuple[Problem | None, ReferenceReport]:
    """The problem's reference outputs and baselines, from the cache or a reference worker."""
    cache_dir = cache.prepare(options.cache_dir)
    device = options.device
    key = cache.problem_key(source, device, options.trials)
    seeds, timing_seeds = cache.seeds_for(cache_dir, key, options.trials)
    report = cache.load_reference(cache_dir, key)
    need_compile = options.compile_baseline and report is not None and (
        "compiled" not in report and "compile_error" not in report)
    if report is None or need_compile:
        result, outputs, worker = _run_reference_worker(
            source, device, cache_dir, seeds, timing_seeds,
            compute_outputs=report is None, time_eager=report is None,
            time_compile=options.compile_baseline, compile_timeout_s=options.compile_timeout_s,
            run_timeout_s=REFERENCE_RUN_S)
        try:
            if not result.get("ok"):
                return None, _reference_report(result, device)
            if report is not None:  # only the compile baseline was missing
                merged = dict(report)
                for k in ("compiled", "compile_error"):
                    if k in result:
                        merged[k] = result[k]
                result, outputs = merged, None
            cache.store_reference(cache_dir, key, result, outputs)
        finally:
            worker.close()
        report = result
        if report.get("eager"):
            _EAGER_TIMED[(str(cache_dir), key)] = (time.monotonic(), report["eager"])
    elif options.retime_eager:
        report = _retime_eager(source, options, cache_dir, key, seeds, timing_seeds, report)
    problem = Problem(source, key, report, seeds, timing_seeds, cache_dir)
    return problem, _reference_report(report, device)


def _retime_eager(source: str, options: EvalOptions, cache_dir: Path, key: str,
                  seeds: list[int], timing_seeds: list[int], report: dict[str, Any],
                  ) -> dict[str, Any]:
    """The cached report with eager PyTorch timed again, in a trusted process, unless this
    runner timed it less than `options.eager_fresh_s` ago.

    Eager is cheap to time, and a time cached while the machine was quiet (or busy) would skew
    every speedup measured under other conditions; torch.compile's baseline stays cached. The
    window spares a search that evaluates candidates one call at a time a reference process
    (several seconds) per call.
    """
    timed_at, eager = _EAGER_TIMED.get((str(cache_dir), key), (None, None))
    if timed_at is not None and eager and time.monotonic() - timed_at < options.eager_fresh_s:
        return {**report, "eager": eager, "eager_retimed": True,
                "eager_age_s": time.monotonic() - timed_at}
    result, _, worker = _run_reference_worker(
        source, options.device, cache_dir, seeds[:1], timing_seeds, compute_outputs=False,
        time_eager=True, time_compile=False, compile_timeout_s=options.compile_timeout_s,
        run_timeout_s=REFERENCE_RUN_S)
    worker.close()
    if not result.get("ok") or "eager" not in result:
        return report  # keep the cached time; the candidate's own run reports any problem
    _EAGER_TIMED[(str(cache_dir), key)] = (time.monotonic(), result["eager"])
    return {**report, "eager": result["eager"], "eager_retimed": True, "eager_age_s": 0.0}


def _output_sizes(report: dict[str, Any]) -> list[int]:
    sizes = []
    for shape, dtype in zip(report.get("output_shapes", []), report.get("output_dtypes", []),
                            strict=False):
        n = 1
        for d in shape:
            n *= d
        try:
            itemsize = torch.empty(0, dtype=getattr(torch, dtype)).element_size()
        except (AttributeError, TypeError):
            itemsize = 4
        sizes.append(n * itemsize)
    return sizes


def _candidate_job(problem: Problem, options: EvalOptions) -> dict[str, Any]:
    return {"mode": "candidate", "device": options.device, "seeds": problem.seeds,
            "timing_seeds": problem.timing_seeds, "policy": options.policy,
            "timing": timing_params(options.device),
            "output_bytes": _output_sizes(problem.report)}


_SPARES: dict[tuple[str, str], list[Worker]] = {}
_SPARES_LOCK = threading.Lock()


def _take_worker(cache_dir: Path, device: str) -> Worker:
    """A started worker: the oldest spare (torch already imported) if alive, else a new one."""
    while True:
        with _SPARES_LOCK:
            queue = _SPARES.get((str(cache_dir), device)) or []
            spare = queue.pop(0) if queue else None
        if spare is None:
            return Worker(cache_dir, device)
        if spare.proc.poll() is None:
            return spare
        spare.close()


def _keep_spares(cache_dir: Path, device: str, count: int = 1) -> None:
    """Have `count` workers started, so their torch import (seconds) is done before they are
    needed. On the CPU, called only between candidates: an importing process would skew a
    timing. Extra spares beyond `count` are closed."""
    key = (str(cache_dir), device)
    with _SPARES_LOCK:
        queue = _SPARES.setdefault(key, [])
        extra = queue[count:]
        del queue[count:]
        missing = count - len(queue)
    for w in extra:
        w.close()
    started = [Worker(cache_dir, device) for _ in range(max(0, missing))]
    with _SPARES_LOCK:
        _SPARES[key].extend(started)


@atexit.register
def _close_spares() -> None:
    with _SPARES_LOCK:
        spares = [w for queue in _SPARES.values() for w in queue]
        _SPARES.clear()
    for w in spares:
        w.close(wait=True)


def _job_env(source: str, options: EvalOptions, cache_dir: Path, parallel: int = 1,
             ) -> dict[str, str]:
    """Build variables for a candidate: extensions and Triton caches keyed by its source."""
    backend = build.detect_backend(source, options.device)
    ext_dir = build.extensions_dir(cache_dir, source, options.device)
    env = {"TRITON_CACHE_DIR": str(ext_dir / "triton")}
    if build.needs_build(backend):
        env.update(build.build_env(options.device, parallel, ext_dir))
    return env


def _build_one(source: str, options: EvalOptions, cache_dir: Path, parallel: int,
               ) -> dict[str, Any]:
    """Build a C++/CUDA candidate's extensions in a sandboxed worker (cached by source)."""
    ext_dir = build.extensions_dir(cache_dir, source, options.device)
    marker = ext_dir / ".built"
    if marker.exists():
        return {"built": True, "cached": True, "compile_s": 0.0}
    env = _job_env(source, options, cache_dir, parallel)
    # The build needs no GPU: hide it, so many builds do not each start a CUDA context.
    with Worker(cache_dir, "cpu") as worker:
        (worker.workdir / "candidate.py").write_text(source)
        res = worker.run({"mode": "build", "device": options.device, "env": env},
                         options.compile_timeout_s, options.compile_timeout_s)
    if res.status == "timeout":
        build.clear_stale_locks(ext_dir)
        return {"built": False, "timeout": True, "compile_s": res.wall_s}
    out = dict(res.result)
    if out.get("built"):
        marker.touch()
    return out


def evaluate(reference: str, candidate: str, options: EvalOptions | None = None) -> Verdict:
    """Evaluate one candidate against a reference; see `evaluate_batch`."""
    return evaluate_batch(reference, [candidate], options or EvalOptions())[0]


def evaluate_batch(reference: str, candidates: list[str], options: EvalOptions | None = None,
                   workers: int | None = None) -> list[Verdict]:
    """Evaluate candidates against one reference; one Verdict per candidate, in order.

    C++/CUDA candidates are built first in a pool of sandboxed processes (`workers`, default
    the number of CPU cores), cached by source hash. Then every candidate runs in its own
    sandboxed process, one at a time (on CUDA so timings do not interfere; on the CPU for the
    same reason), the next process starting while the current one runs.
    """
    options = options or EvalOptions()
    t_start = time.monotonic()
    cache_dir = cache.prepare(options.cache_dir)
    if not candidates:
        return []
    problem, ref_report = prepare_problem(reference, options)
    reference_s = time.monotonic() - t_start
    if problem is None:
        reason = f"the reference is invalid: {ref_report.error}"
        return [Verdict(verdict="runtime_error", reason=reason, device=options.device,
                        error=reason) for _ in candidates]

    builds: dict[int, dict[str, Any]] = {}
    to_build = [i for i, s in enumerate(candidates)
                if build.needs_build(build.detect_backend(s, options.device))]
    if to_build and (len(to_build) > 1 or len(candidates) > 1):
        parallel = max(1, min(len(to_build), workers or os.cpu_count() or 1))
        with ThreadPoolExecutor(parallel) as pool:
            futures = {i: pool.submit(_build_one, candidates[i], options, cache_dir, parallel)
                       for i in to_build}
            builds = {i: f.result() for i, f in futures.items()}

    verdicts: list[Verdict] = []
    for i, source in enumerate(candidates):
        t0 = time.monotonic()
        backend = build.detect_backend(source, options.device)
        b = builds.get(i)
        if b is not None and not b.get("built"):
            failure = _build_failure(b, backend, options)
            failure.eval_s = time.monotonic() - t0
            verdicts.append(failure)
            continue
        worker = _take_worker(cache_dir, options.device)
        try:
            if options.device != "cpu":  # the next processes start while this one runs
                _keep_spares(cache_dir, options.device,
                             max(1, min(SPARE_WORKERS, len(candidates) - i - 1)))
            for name, text in (("reference.py", reference), ("candidate.py", source)):
                (worker.workdir / name).write_text(text)
                if worker.uid is not None:
                    os.chown(worker.workdir / name, worker.uid, worker.uid)
            job = _candidate_job(problem, options)
            job["env"] = _job_env(source, options, cache_dir)
            t_run = time.monotonic()
            res = worker.run(job, options.compile_timeout_s, options.timeout_s)
            if res.status != "done":
                build.clear_stale_locks(build.extensions_dir(cache_dir, source, options.device))
            t_judge = time.monotonic()
            verdict = judge_run(res, problem, options, backend)
            stages = {"start_worker": t_run - t0, "worker": t_judge - t_run,
                      "judge": time.monotonic() - t_judge}
            for k in ("device_init_s", "import_s", "trials_s", "timing_s", "save_s"):
                if isinstance(res.result.get(k), int | float):
                    stages["worker_" + k[:-2]] = float(res.result[k])
            for k, val in (res.result.get("parent_marks") or {}).items():
                stages["mark_" + k] = float(val)
            verdict.stages_s = stages
        finally:
            worker.close()
        if options.device == "cpu" or i == len(candidates) - 1:
            _keep_spares(cache_dir, options.device, 1)  # for the next candidate or call
        if b is not None and b.get("compile_s") and not b.get("cached"):
            verdict.compile_s = float(b["compile_s"]) + float(verdict.compile_s or 0.0)
        verdict.eval_s = time.monotonic() - t0
        verdicts.append(verdict)
    if len(candidates) == 1 and verdicts:
        verdicts[0].eval_s = time.monotonic() - t_start
        verdicts[0].stages_s["reference"] = reference_s
    return verdicts


def _build_failure(b: dict[str, Any], backend: str, options: EvalOptions) -> Verdict:
    if b.get("timeout"):
        return Verdict(verdict="timeout", backend=backend, device=options.device,
                       reason=f"the build ran past the {options.compile_timeout_s:.0f} s compile "
                       "limit", compile_s=b.get("compile_s"))
    return Verdict(verdict="compile_error", backend=backend, device=options.device,
                   reason=f"build failed: {b.get('error', 'unknown error')}",
                   compile_log=b.get("compile_log", ""), error=b.get("compile_log", ""),
                   compile_s=b.get("compile_s"))


def clear_cache(cache_dir: str | None = None) -> None:
    """Remove cached reference results and builds (tests and benchmarks use this)."""
    path = Path(cache_dir) if cache_dir else cache.default_cache_dir()
    shutil.rmtree(path, ignore_errors=True)


__all__ = ["check_reference", "evaluate", "evaluate_batch", "prepare_problem", "WorkerResult"]
