"""The runner's Python API: check a reference, evaluate one candidate or a batch.

The pipeline, each stage its own module: reference validation (a sandboxed worker, report
cached) -> build (a pool of sandboxed workers for C++/CUDA sources) -> run (one sandboxed
worker per candidate, one at a time, paired with the trusted reference worker) -> judge.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import secrets
import shutil
import threading
import time
import traceback
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from gpurunner import build, cache, paired, pch
from gpurunner.judge import judge_failure, judge_run
from gpurunner.problem import Problem
from gpurunner.report import EvalOptions, ReferenceReport, Verdict
from gpurunner.sandbox import Worker, WorkerResult, describe_exit, name_disk_full
from gpurunner.stopping import Stop, stopped_verdict, watch, within

REFERENCE_RUN_S = 900.0  # validation, or starting the reference worker and its torch.compile
SPARE_WORKERS = 4  # workers importing torch ahead of the candidates that will need them
# Copies of each input and output: the reference worker's own and its working copy, the two
# slots' shared buffers (baselines, candidate), and the timed workers' own results.
SHARED_COPIES = 6

log = logging.getLogger(__name__)

# A candidate's stages as `evaluate_batch` reports them; "verdict" comes with the Verdict.
STAGES = ("queued", "compiling", "checking", "timing", "verdict")
StageCallback = Callable[[int, str, "Verdict | None"], None]


def _stage_reporter(on_stage: StageCallback | None) -> Callable[..., None]:
    """Call `on_stage` from this (the parent's) thread; a failing display never fails a batch."""
    def report(index: int, stage: str, verdict: Verdict | None = None) -> None:
        if on_stage is None:
            return
        try:
            on_stage(index, stage, verdict)
        except Exception:  # noqa: BLE001 - progress display only
            log.exception("stage callback failed for candidate %d (%s)", index, stage)
    return report




def _reference_report(result: dict[str, Any], device: str) -> ReferenceReport:
    data = {k: v for k, v in result.items() if k != "ok"}
    return ReferenceReport.from_dict({"ok": bool(result.get("ok")), "device": device, **data})


def _run_reference_worker(source: str, device: str, cache_dir: Path, timeout_s: float,
                          ) -> dict[str, Any]:
    """Validate the reference in a sandboxed worker; its report, or ok=False with the why."""
    with Worker(cache_dir, device) as worker:
        (worker.workdir / "reference.py").write_text(source)
        job = {"mode": "reference", "device": device, "seeds": [secrets.randbits(31)]}
        res = worker.run(job, timeout_s, timeout_s)
    if res.status == "timeout":
        return {"ok": False, "error": f"validating the reference ran past the {timeout_s:.0f} s "
                f"limit ({res.phase})"}
    if res.status != "done":
        return {"ok": False, "error": name_disk_full(f"the reference crashed: "
                                                     f"{describe_exit(res)}", res.stderr_tail),
                "detail": res.stderr_tail}
    if "harness_error" in res.result:
        detail = str(res.result["harness_error"])
        cause = detail.strip().splitlines()[-1:] or ["unknown"]
        return {"ok": False, "error": name_disk_full(f"the runner failed while validating the "
                                                     f"reference: {cause[0][:300]}", detail),
                "detail": detail}
    return res.result


def check_reference(source: str, device: str = "cpu", timeout_s: float = 300.0) -> ReferenceReport:
    """Validate a KernelBench-format reference in the sandbox.

    Returns ok=True with input/output shapes and dtypes, FLOPs and bytes, or ok=False with
    one specific error (syntax, a missing name, a wrong return type, a forward that raises,
    outputs that are not tensors, inputs too large for the device) and its line when known.
    """
    cache_dir = cache.prepare(None)
    return _reference_report(_run_reference_worker(source, device, cache_dir, timeout_s), device)


def prepare_problem(source: str, options: EvalOptions) -> tuple[Problem | None, ReferenceReport]:
    """The validated problem, its report from the cache or from a reference worker."""
    cache_dir = cache.prepare(options.cache_dir)
    key = cache.problem_key(source, options.device)
    report = cache.load_reference(cache_dir, key)
    if report is None:
        report = _run_reference_worker(source, options.device, cache_dir, REFERENCE_RUN_S)
        if not report.get("ok"):
            return None, _reference_report(report, options.device)
        cache.store_reference(cache_dir, key, report)
    return Problem(source, key, report, cache_dir), _reference_report(report, options.device)


def memory_refusal(problem: Problem, device: str) -> str | None:
    """Why the problem cannot be evaluated in this host's memory, with the numbers; or None.

    On the CPU each input and output exists about SHARED_COPIES times (see there)."""
    if device.startswith("cuda"):
        return None  # device memory: the reference worker reports CUDA's own numbers
    ins, outs = problem.tensor_bytes("input"), problem.tensor_bytes("output")
    need = SHARED_COPIES * (ins + outs)
    try:
        avail = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        info = Path("/proc/meminfo").read_text()
        avail = max(avail, int(info.split("MemAvailable:")[1].split()[0]) * 1024)
    except (ValueError, OSError, IndexError):
        return None
    if need <= avail:
        return None
    return (f"out of host memory: evaluating needs about {need / 2**30:.1f} GiB "
            f"({ins / 2**30:.2f} GiB of inputs and {outs / 2**30:.2f} GiB of outputs, "
            f"{SHARED_COPIES} copies each) and {avail / 2**30:.1f} GiB is available")


_SPARES: dict[tuple[str, str], list[Worker]] = {}
_SPARES_LOCK = threading.Lock()


def _take_worker(cache_dir: Path, device: str) -> Worker:
    """A started worker: the oldest spare (torch already imported) if alive, else a new one."""
    while True:
        with _SPARES_LOCK:
            queue = _SPARES.get((str(cache_dir), device)) or []
            spare = queue.pop(0) if queue else None
        if spare is None:
            return Worker(cache_dir, device, paired.WORKER_ENV)
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
    started = [Worker(cache_dir, device, paired.WORKER_ENV) for _ in range(max(0, missing))]
    with _SPARES_LOCK:
        _SPARES[key].extend(started)


@atexit.register
def _close_spares() -> None:
    with _SPARES_LOCK:
        spares = [w for queue in _SPARES.values() for w in queue]
        _SPARES.clear()
    for w in spares:
        w.close(wait=True)


def _job_env(source: str, options: EvalOptions, worker: Worker, parallel: int = 1,
             headers: dict[str, str] | None = None) -> dict[str, str]:
    """Build variables for a candidate: where its extensions are built or found, and on the
    CPU the precompiled headers it may use (`pch.ensure_for`)."""
    if not build.needs_build(build.detect_backend(source, options.device)):
        return {}
    ext_dir = worker.ext_dir
    if not worker.contained:  # runs as the runner's user: builds in the cache directly
        ext_dir = build.cache_entry(worker.cache_dir, source, options.device)
        ext_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    env = build.build_env(options.device, parallel, ext_dir)
    if headers and options.device == "cpu":
        env[pch.ENV] = json.dumps(headers)
    return env


def _restore_build(source: str, options: EvalOptions, worker: Worker) -> str | None:
    """Give a contained worker its verified private copy of the cached build, if there is
    one; returns why a cached build was refused (it is then rebuilt in the sandbox)."""
    entry = build.cache_entry(worker.cache_dir, source, options.device)
    if not worker.contained or not build.has_build(entry):
        return None
    try:
        build.restore_build(entry, worker.ext_host, worker.uid)
    except build.BuildMismatch as exc:
        for part in worker.ext_host.iterdir():  # the folder itself is mounted in the sandbox
            shutil.rmtree(part, ignore_errors=True)
        return str(exc)
    return None


def _keep_build(source: str, options: EvalOptions, worker: Worker) -> None:
    """After a sandbox built a source, the runner keeps the result (see build.store_build)."""
    entry = build.cache_entry(worker.cache_dir, source, options.device)
    if worker.contained and not build.has_build(entry):
        build.store_build(worker.ext_host, entry)


def _build_one(source: str, options: EvalOptions, cache_dir: Path, parallel: int,
               stop: Stop | None = None, headers: dict[str, str] | None = None) -> dict[str, Any]:
    """Build a C++/CUDA candidate's extensions in a sandboxed worker (cached by source)."""
    entry = build.cache_entry(cache_dir, source, options.device)
    if build.has_build(entry) or (entry / ".built").exists():
        return {"built": True, "cached": True, "compile_s": 0.0}
    if stop is not None and stop.is_set():
        return {"built": False, "compile_s": 0.0}
    # The build needs no GPU: hide it, so many builds do not each start a CUDA context.
    with Worker(cache_dir, "cpu") as worker:
        env = _job_env(source, options, worker, parallel, headers)
        unwatch = watch(stop, worker)
        try:
            (worker.workdir / "candidate.py").write_text(source)
            res = worker.run({"mode": "build", "device": options.device, "env": env},
                             options.compile_timeout_s, options.compile_timeout_s)
        finally:
            unwatch()
        stopped = stop is not None and stop.killed(worker)
        if res.status == "done" and res.result.get("built") and not stopped:
            if worker.contained:
                _keep_build(source, options, worker)
            else:
                (entry / ".built").touch()
    if res.status == "timeout" or stopped:
        if not worker.contained:
            build.clear_stale_locks(entry)
        return {"built": False, "timeout": not stopped, "compile_s": res.wall_s}
    return dict(res.result)


def evaluate(reference: str, candidate: str, options: EvalOptions | None = None) -> Verdict:
    """Evaluate one candidate against a reference; see `evaluate_batch`."""
    return evaluate_batch(reference, [candidate], options or EvalOptions())[0]


def evaluate_batch(reference: str, candidates: list[str], options: EvalOptions | None = None,
                   workers: int | None = None, stop: Stop | None = None,
                   on_stage: StageCallback | None = None,
                   time_left_s: float | None = None) -> list[Verdict]:
    """Evaluate candidates against one reference; one Verdict per candidate, in order.

    C++/CUDA candidates are built first in a pool of sandboxed processes (`workers`, default
    the number of CPU cores), cached by source hash. Then every candidate runs in its own
    sandboxed process, one at a time, paired call by call with one trusted reference worker
    (see `gpurunner.paired`). A failure of one candidate, or of the runner on it, becomes that
    candidate's verdict; the others are still evaluated. Once `stop` is set, the running
    candidate's worker is killed and the rest are not started (`stopped_verdict`).
    `on_stage(index, stage, verdict)` is called from this thread as each candidate reaches a
    stage of STAGES: all "queued" first, "compiling" when its build or import starts,
    "checking" and "timing" as its worker says so, "verdict" with its Verdict.
    `time_left_s` (a search's remaining time budget) stops the batch like `stop` once it has
    passed: what was not judged by then says the budget ran out.
    """
    with within(time_left_s, stop) as stop:
        return _evaluate_batch(reference, candidates, options, workers, stop, on_stage)


def _evaluate_batch(reference: str, candidates: list[str], options: EvalOptions | None,
                    workers: int | None, stop: Stop | None,
                    on_stage: StageCallback | None) -> list[Verdict]:
    options = options or EvalOptions()
    stage = _stage_reporter(on_stage)
    t_start = time.monotonic()
    cache_dir = cache.prepare(options.cache_dir)
    if not candidates:
        return []
    for i in range(len(candidates)):
        stage(i, "queued")
    problem, ref_report = prepare_problem(reference, options)
    reference_s = time.monotonic() - t_start
    refusal = (f"the reference is invalid: {ref_report.error}" if problem is None
               else memory_refusal(problem, options.device))
    if problem is None or refusal:
        invalid = [Verdict(verdict="runtime_error", reason=refusal, device=options.device,
                        error=refusal) for _ in candidates]
        for i, verdict in enumerate(invalid):
            stage(i, "verdict", verdict)
        return invalid

    builds: dict[int, dict[str, Any]] = {}
    to_build = [i for i, s in enumerate(candidates)
                if build.needs_build(build.detect_backend(s, options.device))]
    headers = pch.ensure_for([candidates[i] for i in to_build], cache_dir) if (
        options.device == "cpu") else {}
    if to_build and (len(to_build) > 1 or len(candidates) > 1):
        parallel = max(1, min(len(to_build), workers or os.cpu_count() or 1))
        for i in to_build:
            stage(i, "compiling")
        with ThreadPoolExecutor(parallel) as pool:
            futures = {i: pool.submit(_build_one, candidates[i], options, cache_dir, parallel, stop,
                                      headers) for i in to_build}
            builds = {i: f.result() for i, f in futures.items()}

    verdicts: list[Verdict] = []
    referee: paired.Referee | None = None
    try:
        for i, source in enumerate(candidates):
            if stop is not None and stop.is_set():
                verdicts.append(stopped_verdict(options.device, stop.reason))
                continue
            t0 = time.monotonic()
            backend = build.detect_backend(source, options.device)
            b = builds.get(i)
            if b is not None and not b.get("built"):
                verdict = _build_failure(b, backend, options)
            else:
                if b is None:
                    stage(i, "compiling")  # importing it builds NVRTC/Triton code
                if referee is None:
                    try:
                        referee = paired.open_referee(
                            problem, options, REFERENCE_RUN_S,
                            lambda: _take_worker(cache_dir, options.device))
                    except paired.RunFailure as fail:
                        verdict = judge_failure(fail, problem, options, backend)
                        verdicts.append(verdict)
                        stage(i, "verdict", verdict)
                        continue
                verdict, referee_ok = _evaluate_one(referee, problem, source, backend, i,
                                                    len(candidates), options, cache_dir, stop,
                                                    lambda st, i=i: stage(i, st), headers)
                if not referee_ok:
                    referee.close()
                    referee = None
                if b is not None and b.get("compile_s") and not b.get("cached"):
                    verdict.compile_s = float(b["compile_s"]) + float(verdict.compile_s or 0.0)
            verdict.eval_s = time.monotonic() - t0
            verdicts.append(verdict)
            stage(i, "verdict", verdict)
    finally:
        if referee is not None:
            referee.close()
    if len(candidates) == 1 and verdicts:
        verdicts[0].eval_s = time.monotonic() - t_start
        verdicts[0].stages_s["reference"] = reference_s
    return verdicts


def _evaluate_one(referee: paired.Referee, problem: Problem, source: str, backend: str,
                  index: int, count: int, options: EvalOptions, cache_dir: Path,
                  stop: Stop | None = None,
                  on_stage: Callable[[str], None] | None = None,
                  headers: dict[str, str] | None = None) -> tuple[Verdict, bool]:
    """One candidate's verdict, and whether the reference worker is still usable."""
    worker = _take_worker(cache_dir, options.device)
    unwatch = watch(stop, worker)
    referee_ok = True
    try:
        if options.device != "cpu":  # the next processes start while this one runs
            _keep_spares(cache_dir, options.device, max(1, min(SPARE_WORKERS, count - index - 1)))
        t_judge = time.monotonic()
        refused = _restore_build(source, options, worker)
        try:
            run = paired.run_candidate(referee, worker, source, problem.source, options,
                                       _job_env(source, options, worker, headers=headers), on_stage)
            if build.needs_build(backend):
                _keep_build(source, options, worker)
            t_judge = time.monotonic()
            verdict = judge_run(run, referee, problem, options, backend)
            verdict.stages_s = {**run.stages_s, "judge": time.monotonic() - t_judge}
        except paired.RunFailure as fail:
            referee_ok = fail.who == "candidate"  # else restart the trusted workers
            if not worker.contained:
                build.clear_stale_locks(build.cache_entry(cache_dir, source, options.device))
            verdict = judge_failure(fail, problem, options, backend)
        except Exception as exc:  # noqa: BLE001 - the runner's own failure on this candidate
            referee_ok = False
            verdict = Verdict(verdict="runtime_error", backend=backend, device=options.device,
                              reason=f"the runner could not evaluate this candidate: "
                              f"{type(exc).__name__}: {exc}"[:600],
                              error=traceback.format_exc()[-4000:])
    finally:
        unwatch()
        worker.close()
    if stop is not None and stop.killed(worker):
        verdict = stopped_verdict(options.device, stop.reason)
    if refused:
        verdict.reason = f"{verdict.reason} (a cached build was refused and rebuilt: {refused})"[:600]
    if options.device == "cpu" or index == count - 1:
        _keep_spares(cache_dir, options.device, 1)  # for the next candidate or call
    return verdict, referee_ok


def _build_failure(b: dict[str, Any], backend: str, options: EvalOptions) -> Verdict:
    if b.get("timeout"):
        return Verdict(verdict="timeout", backend=backend, device=options.device,
                       reason=f"the build ran past the {options.compile_timeout_s:.0f} s compile "
                       "limit", compile_s=b.get("compile_s"))
    return Verdict(verdict="compile_error", backend=backend, device=options.device,
                   reason=name_disk_full(f"build failed: {b.get('error', 'unknown error')}",
                                         str(b.get("compile_log", ""))),
                   compile_log=b.get("compile_log", ""), error=b.get("compile_log", ""),
                   compile_s=b.get("compile_s"))


def clear_cache(cache_dir: str | None = None) -> None:
    """Remove cached reference results and builds (tests and benchmarks use this)."""
    path = Path(cache_dir) if cache_dir else cache.default_cache_dir()
    shutil.rmtree(path, ignore_errors=True)


__all__ = ["STAGES", "check_reference", "evaluate", "evaluate_batch", "prepare_problem",
           "WorkerResult"]
