"""The parent's side of an evaluation: drive the trusted workers and the candidate's worker
call by call, time every call on this process's clock, and collect what the reference worker
found in the candidate's outputs.

Per call: the reference worker makes inputs from a fresh seed (never shown to the candidate
beforehand) and the reference's outputs for them; each timed worker (the eager baseline, the
torch.compile baseline, the candidate: the same worker code, so the same treatment by the
operating system) gets the inputs in its shared buffer and a cold cache, and is timed here
around a wake-up and a go/done handshake, in an order that rotates from call to call. A
timed worker is stopped (SIGSTOP) while the reference worker writes its inputs, so nothing of
its own sees them before its clock starts, and again after its `done` until the call's check is
over, so nothing it left running can finish the work while the reference worker reads its
outputs. Stopping takes its process group and every other process of its sandbox user id (one
that left the group with setsid/setpgid is not spared). The channel's round trip is measured
before any timed worker imports its code and taken off each timed round trip (`floor_ms`).
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurunner import build, ncu, transport
from gpurunner.facts import CandidateFacts, kernel_rows, number
from gpurunner.problem import Problem
from gpurunner.report import EvalOptions
from gpurunner.sandbox import INDUCTOR_FOLDER, Worker, WorkerResult, describe_exit
from gpurunner.timing import paired_ratio

_clock = time.perf_counter  # this process's clock; no candidate code ever runs here
CALIBRATION_PINGS = 20
MAX_BLOCKS = 3  # timed blocks, when the speedup's interval stays wide
MIN_TIMED = 3  # fewer timed calls than this within the limit is a timeout
# Two workers take turns: idle OpenMP threads must sleep, not spin on the other's cores.
WORKER_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


NULL_CALLS = 10  # empty calls that measure the harness's own time per call


def timing_params(device: str) -> dict[str, Any]:
    """How many calls to time, and how narrow a speedup's interval must be to be trusted."""
    if device.startswith("cuda"):
        return {"warmup": 5, "target_ms": 100.0, "min_reps": 20, "max_reps": 200,
                "max_ci_ratio": 1.04}
    return {"warmup": 2, "target_ms": 100.0, "min_reps": 15, "max_reps": 60,
            "max_ci_ratio": 1.10}


class RunFailure(Exception):
    """A run that cannot go on: who failed, at which stage, and why (a verdict's reason)."""

    def __init__(self, verdict: str, reason: str, error: str = "", who: str = "candidate",
                 **extra: Any):
        super().__init__(reason)
        self.verdict, self.reason, self.error, self.extra = verdict, reason, error, extra
        self.who = who  # "candidate" or "reference worker": the latter is restarted


class Peer:
    """A started worker seen from here: one command at a time, each under a deadline."""

    def __init__(self, worker: Worker, who: str):
        self.worker, self.who = worker, who
        self.stage = "starting"
        self.peak_memory: int | None = None
        self.floor_ms = float("inf")
        self.load_s = 0.0
        # The containment the worker applied, as it said in `ready`: sent before any
        # untrusted code was imported, so later code in that process cannot rewrite it.
        self.sandbox: dict[str, Any] | None = None

    def call(self, cmd: str, deadline: float, limit: str, fds: tuple[int, ...] = (),
             **args: Any) -> dict[str, Any]:
        """Send one command and return its reply; RunFailure when the worker dies, stops
        answering before `deadline` (`limit` names it), or answers out of protocol."""
        reply, got = self.call_with_fds(cmd, deadline, limit, fds, **args)
        for fd in got:
            os.close(fd)
        return reply

    def call_with_fds(self, cmd: str, deadline: float, limit: str, fds: tuple[int, ...] = (),
                      **args: Any) -> tuple[dict[str, Any], list[int]]:
        """`call`, also returning the fds that came with the reply (the caller closes them)."""
        ch = self.worker.channel
        try:
            ch.send({"cmd": cmd, **args}, fds)
            while True:
                msg, extra = ch.recv(deadline)
                if "event" in msg or msg.get("reply") != cmd:
                    for fd in extra:
                        os.close(fd)
                if "event" in msg:
                    if msg["event"] == "ready" and self.sandbox is None:
                        sandbox = msg.get("sandbox")
                        self.sandbox = sandbox if isinstance(sandbox, dict) else {}
                    continue  # ready / built announcements
                if msg.get("reply") != cmd:
                    raise transport.ChannelError(f"an answer to {msg.get('reply')!r} where "
                                                 f"{cmd!r} was asked")
                return msg, extra
        except transport.ChannelError as exc:
            self.peak_memory = self.worker.peak_memory() or self.peak_memory
            if not ch.closed and time.monotonic() >= deadline and self.worker.proc.poll() is None:
                raise RunFailure("timeout", f"the {self.who} ran past the {limit} while "
                                 f"{self.stage}; its processes were killed",
                                 self.worker.stderr_tail(), self.who) from exc
            raise self.crashed(str(exc)) from exc

    def crashed(self, why: str) -> RunFailure:
        try:
            code = self.worker.proc.wait(timeout=3)
        except Exception:  # noqa: BLE001 - still alive: it broke the protocol instead
            code = None
        if code is None:
            how = f"it broke the protocol ({why})"
        else:
            how = describe_exit(WorkerResult("crashed", self.stage, code,
                                             peak_memory=self.peak_memory))
        return RunFailure("runtime_error", f"the {self.who} crashed while {self.stage}: {how}",
                          self.worker.stderr_tail(), self.who)

    def ping_floor(self, deadline: float, limit: str) -> float:
        """The least round trip of an empty command, in ms (the channel's own cost)."""
        best = float("inf")
        for _ in range(CALIBRATION_PINGS):
            t0 = _clock()
            self.call("ping", deadline, limit)
            best = min(best, (_clock() - t0) * 1e3)
        return best


# The baselines run as candidates whose ModelNew is the reference's Model, eager or compiled.
EAGER_SOURCE = "\n\nclass ModelNew(Model):\n    pass\n"
COMPILED_SOURCE = """

import torch as _torch


class ModelNew(Model):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._compiled = _torch.compile(super().forward)

    def forward(self, *args):
        return self._compiled(*args)
"""


@dataclass
class Referee:
    """The evaluation's trusted workers, started once per batch: the reference worker (inputs,
    expected outputs, checks) and the baselines' workers (eager, compiled), timed like the
    candidate's."""

    peer: Peer
    layout: dict[str, Any]
    floor_ms: float
    baselines: dict[str, Peer] = field(default_factory=dict)
    compile_error: str | None = None
    # Per slot ("baseline": eager and compiled take turns on it; "candidate"), what a timed
    # worker needs to map the slot's buffers: two segment fds (kept open; CPU memfds or CUDA
    # device allocations) and, on CUDA, their padded sizes.
    shared: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def compiled(self) -> bool:
        return "compiled" in self.baselines

    def close(self) -> None:
        for peer in [self.peer, *self.baselines.values()]:
            peer.worker.close()
        for got in self.shared.values():
            for fd in got.get("fds", ()):
                os.close(fd)
        self.shared.clear()


def open_referee(problem: Problem, options: EvalOptions, limit_s: float,
                 take: Any = None) -> Referee:
    """Start the reference worker and the baselines' workers (`take()` gives a started worker;
    default a new one); RunFailure when the reference or its eager baseline cannot run."""
    def new() -> Worker:
        return take() if take else Worker(problem.cache_dir, options.device, WORKER_ENV)

    worker = new()
    peer = Peer(worker, "reference worker")
    ref: Referee | None = None
    try:
        (worker.workdir / "reference.py").write_text(problem.source)
        if worker.uid is not None:
            os.chown(worker.workdir / "reference.py", worker.uid, worker.uid)
        worker.start({"mode": "referee", "device": options.device, "atol": options.atol,
                      "rtol": options.rtol})
        deadline = time.monotonic() + limit_s
        limit = f"{limit_s:.0f} s limit for preparing the reference"
        peer.stage = "importing the reference"
        floor = peer.ping_floor(deadline, limit)
        peer.stage = "laying out the shared buffers"
        layout = _ok(peer.call("layout", deadline, limit, seed=secrets.randbits(31)), peer)
        ref = Referee(peer, layout, floor)
        kinds = [("eager", EAGER_SOURCE)]
        if options.compile_baseline:
            kinds.append(("compiled", COMPILED_SOURCE))
        for kind, tail in kinds:
            base = Peer(new(), f"{kind} baseline")
            # On CUDA Inductor's artefacts name the folder of the worker that made them (the
            # next sandbox got PermissionError on it, measured on an H100): kept on the CPU only.
            keep = kind == "compiled" and options.device == "cpu"
            try:
                if keep:
                    compiled = build.cache_entry(problem.cache_dir, problem.source + tail,
                                                 options.device)
                    _restore_compiled(compiled, base.worker)
                _start_timed(ref, base, "baseline", problem.source + tail, problem.source,
                             options, {}, deadline, limit)
                ref.floor_ms = min(ref.floor_ms, base.floor_ms)
                _warm(ref, base, "baseline", deadline, limit)
                if keep:
                    _keep_compiled(compiled, base.worker)
            except RunFailure as fail:
                base.worker.close()
                if kind == "eager":
                    raise RunFailure(fail.verdict, fail.reason, fail.error,
                                     "reference worker") from fail
                ref.compile_error = fail.reason[:500]
                continue
            ref.baselines[kind] = base
        return ref
    except BaseException:
        if ref is not None:
            ref.close()
        else:
            worker.close()
        raise


def _restore_compiled(entry: Path, worker: Worker) -> None:
    """Put the reference's torch.compile artefacts, kept from an earlier batch, where the
    compiled baseline's Inductor looks (its cache folder): the compile at its first call then
    loads them instead of generating and building its kernels again. Only the artefacts are
    reused; the baseline is timed anew with every candidate."""
    if not build.has_build(entry):
        return
    folder = worker.workdir / INDUCTOR_FOLDER
    try:
        build.restore_build(entry, folder, worker.uid)
    except build.BuildMismatch:  # dropped: this baseline compiles anew and a fresh copy is kept
        shutil.rmtree(folder, ignore_errors=True)  # with whatever was copied before the check


def _keep_compiled(entry: Path, worker: Worker) -> None:
    """After the compiled baseline's first call, the runner keeps its Inductor artefacts,
    copied into the build cache like a candidate's build (keyed by the baseline's source:
    only the same reference gets them back)."""
    if not build.has_build(entry):
        build.store_build(worker.workdir / INDUCTOR_FOLDER, entry, require_library=False)


def _start_timed(ref: Referee, peer: Peer, slot: str, source: str, reference: str,
                 options: EvalOptions, env: dict[str, str], deadline: float, limit: str,
                 ) -> dict[str, Any]:
    """Start a candidate job (the candidate, or a baseline) up to the point where it can be
    timed: its floor measured before its code is imported, imported, buffers mapped."""
    worker = peer.worker
    for name, text in (("reference.py", reference), ("candidate.py", source)):
        (worker.workdir / name).write_text(text)
        if worker.uid is not None:
            os.chown(worker.workdir / name, worker.uid, worker.uid)
    worker.start({"mode": "candidate", "device": options.device, "policy": options.policy,
                  "profile": options.profile, "env": env})
    peer.stage = "starting"
    peer.floor_ms = peer.ping_floor(deadline, limit)
    peer.stage = "importing or building"
    t0 = time.monotonic()
    loaded = _ok(peer.call("load", deadline, limit), peer)
    peer.load_s = time.monotonic() - t0
    _attach(ref, peer, slot, deadline, limit)
    return loaded


def _warm(ref: Referee, peer: Peer, slot: str, deadline: float, limit: str) -> None:
    """One untimed call (torch.compile compiles at its first call)."""
    peer.stage = "its first call"
    _ok(ref.peer.call("make", deadline, limit, seed=secrets.randbits(31)), ref.peer)
    _ok(ref.peer.call("stage", deadline, limit, slot=slot), ref.peer)
    _ok(peer.call("go", deadline, limit), peer)


def _ok(reply: dict[str, Any], peer: Peer) -> dict[str, Any]:
    if not reply.get("ok"):
        if peer.who == "candidate" and reply.get("verdict"):
            raise RunFailure(str(reply["verdict"]), str(reply.get("reason", ""))[:600],
                             str(reply.get("error", ""))[:8000],
                             line=reply.get("line"), check=reply.get("check"),
                             detail=str(reply.get("detail", ""))[:500],
                             compile_log=str(reply.get("compile_log", ""))[:20000])
        # A baseline's failure carries its reason (the exception) apart from its traceback.
        why = reply.get("reason") or reply.get("error") or "no reason given"
        raise RunFailure("runtime_error", f"the {peer.who} failed while {peer.stage}: "
                         f"{str(why)[:600]}",
                         str(reply.get("traceback") or reply.get("error") or "")[:8000], peer.who)
    return reply


@dataclass
class CandidateRun:
    """Everything the judge needs from one candidate's run, all of it established here or in
    the reference worker, plus the candidate's own advisory facts."""

    trials: list[dict[str, Any]] = field(default_factory=list)  # the reference worker's checks
    timed_failures: list[dict[str, Any]] = field(default_factory=list)
    timed_checked: int = 0
    eager_ms: list[float] = field(default_factory=list)
    compiled_ms: list[float] = field(default_factory=list)
    cand_ms: list[float] = field(default_factory=list)
    floor_ms: float = 0.0
    null_ms: float = 0.0  # the harness's own time for an empty call (see _Pair.null_call_ms)
    load_s: float = 0.0
    first_call_s: float = 0.0
    blocks: int = 0
    mutated: list[int] = field(default_factory=list)
    facts: CandidateFacts = field(default_factory=CandidateFacts)
    forward_line: int | None = None
    stages_s: dict[str, float] = field(default_factory=dict)
    sandbox: dict[str, Any] = field(default_factory=dict)  # from `ready`, see Peer.sandbox
    # Processes of the candidate's sandbox that left its process group, as this process found
    # them in /proc while stopping it: until found, one runs outside the pause.
    strays: list[int] = field(default_factory=list)


def run_candidate(ref: Referee, worker: Worker, source: str, reference: str,
                  options: EvalOptions, env: dict[str, str],
                  on_stage: Callable[[str], None] | None = None) -> CandidateRun:
    """One candidate, paired with the baselines call by call; RunFailure when it cannot be
    judged (the failure's verdict and reason say why)."""
    run = CandidateRun()
    t_start = time.monotonic()
    cand = Peer(worker, "candidate")
    compile_limit = f"{options.compile_timeout_s:.0f} s compile limit"
    deadline = time.monotonic() + options.compile_timeout_s + 30.0  # torch import included
    loaded = _start_timed(ref, cand, "candidate", source, reference, options, env, deadline,
                          compile_limit)
    # One floor for every timed worker: the least round trip seen on any of them, each
    # measured before its code was imported (a round trip taken while busy is not the floor).
    run.floor_ms = ref.floor_ms = min(ref.floor_ms, cand.floor_ms)
    run.load_s = cand.load_s
    run.sandbox = cand.sandbox or {}
    run.stages_s["start_worker"] = time.monotonic() - t_start - cand.load_s
    run.stages_s["import"] = cand.load_s
    run.forward_line = loaded.get("forward_line") if isinstance(
        loaded.get("forward_line"), int) else None
    deadline = time.monotonic() + options.timeout_s
    run_limit = f"{options.timeout_s:.0f} s run limit"
    pair = _Pair(ref, cand, run, deadline, run_limit, options)
    t0 = time.monotonic()
    cand.stage = "running the trials"
    if on_stage is not None:
        on_stage("checking")
    for n in range(options.trials):
        times = pair.one_call(check_into=run.trials, kinds=["candidate"], poison=True)
        if n == 0:
            run.first_call_s = times["candidate"] / 1e3
    run.stages_s["trials"] = time.monotonic() - t0
    t0 = time.monotonic()
    if on_stage is not None:
        on_stage("timing")
    pair.time_all()
    run.stages_s["timing"] = time.monotonic() - t0
    run.strays = sorted(worker.strays_seen)
    cand.stage = "reporting its facts"
    t0 = time.monotonic()
    facts = _ok(cand.call("facts", deadline, run_limit), cand)
    run.facts = CandidateFacts.from_message(facts)
    run.stages_s["facts"] = time.monotonic() - t0
    if options.counters and options.device.startswith("cuda") and not run.timed_failures and all(
            isinstance(c, dict) and c.get("passed") for t in run.trials for c in t["checks"]):
        _hardware_counters(cand, run.facts)  # only a kernel worth seeding is worth profiling
    return run


def _hardware_counters(cand: Peer, facts: CandidateFacts) -> None:
    """Nsight Compute's counters for one call (gpurunner.ncu), under a limit of their own:
    the candidate is already judged by now, so a failure here only leaves its reason."""
    cand.stage = "profiling one call under Nsight Compute"
    limit = f"{ncu.TIMEOUT_S + 30:.0f} s profiling limit"
    try:
        reply = cand.call("counters", time.monotonic() + ncu.TIMEOUT_S + 30, limit)
    except RunFailure as failure:
        facts.counters_error = failure.reason[:300]
        return
    facts.counters = kernel_rows(reply.get("kernels"))
    if not facts.counters:
        facts.counters_error = str(reply.get("error") or "no kernel was profiled")[:300]


def _attach(ref: Referee, peer: Peer, slot: str, deadline: float, limit: str) -> None:
    """Map a slot's shared buffers in a timed worker: two segments (inputs, outputs) made once
    per slot, passed as fds. On the CPU the parent creates them (memfd) and the reference
    worker maps them too; on CUDA the reference worker allocates them on the device and sends
    their fds back. Every call restages them, so workers that take turns can share a slot."""
    lay = ref.layout
    args = {"inputs": lay["inputs"], "outputs": lay["outputs"], "values": lay["values"]}
    peer.stage = ref.peer.stage = "mapping the shared buffers"
    got = ref.shared.get(slot)
    if got is None and lay.get("cuda"):
        reply, fds = ref.peer.call_with_fds("attach", deadline, limit, slot=slot)
        ref.shared[slot] = got = {"fds": fds}  # kept before any check, so close() frees them
        _ok(reply, ref.peer)
        sizes = reply.get("sizes")
        if len(fds) != 2 or not (isinstance(sizes, list) and len(sizes) == 2
                                 and all(isinstance(n, int) and n >= 0 for n in sizes)):
            raise ref.peer.crashed(f"its device buffers came as {len(fds)} fds and sizes "
                                   f"{str(sizes)[:80]}, not two of each")
        got["sizes"] = sizes
    elif got is None:
        fds = (transport.new_segment(int(lay["in_size"])),
               transport.new_segment(int(lay["out_size"])))
        ref.shared[slot] = got = {"fds": fds}
        _ok(ref.peer.call("attach", deadline, limit, fds=fds, slot=slot), ref.peer)
    extra = {"sizes": got["sizes"]} if "sizes" in got else {}
    _ok(peer.call("attach", deadline, limit, fds=tuple(got["fds"]), **args, **extra), peer)


class _Pair:
    """The call-by-call protocol between the two workers (see the module docstring)."""

    def __init__(self, ref: Referee, cand: Peer, run: CandidateRun, deadline: float,
                 limit: str, options: EvalOptions):
        self.ref, self.cand, self.run = ref, cand, run
        self.deadline, self.limit, self.options = deadline, limit, options
        self.params = timing_params(options.device)
        self.cuda = options.device.startswith("cuda")
        self.calls = 0

    def _stage(self, peer: Peer, slot: str) -> None:
        """The reference worker stages a call's inputs in `slot` while `peer` is stopped
        (nothing of the worker's runs while its inputs arrive), then `peer` continues."""
        ref = self.ref.peer
        ref.stage = f"staging the inputs of the {peer.who}"
        _stop(peer.worker)
        try:
            _ok(ref.call("stage", self.deadline, self.limit, slot=slot), ref)
        finally:
            _continue(peer.worker)

    def _timed(self, peer: Peer, floor: float, command: str = "go") -> tuple[float, dict]:
        """A wake-up round trip and `command` (`go`; `ping` for an empty call), on this
        process's clock, two floors taken off: whatever the worker does once its inputs can
        be seen is inside the time."""
        t0 = _clock()
        _ok(peer.call("ping", self.deadline, self.limit), peer)
        reply = peer.call(command, self.deadline, self.limit)
        wall = (_clock() - t0) * 1e3
        _ok(reply, peer)
        trusted = max(wall - 2 * floor, 1e-6)
        event = number(reply.get("event_ms"), 0.0, wall) if self.cuda else None
        # Device events may refine the time, never undercut it beyond the channel's floor.
        return (max(event, trusted) if event is not None else trusted), reply

    def _peer(self, kind: str) -> Peer:
        return self.cand if kind == "candidate" else self.ref.baselines[kind]

    def one_call(self, check_into: list[dict[str, Any]] | None, kinds: list[str],
                 poison: bool = False) -> dict[str, float]:
        """Fresh inputs, then each of `kinds` (eager, compiled, candidate) timed in turn, then
        the candidate's check; returns the times by kind.

        Each timed worker gets the same preparation: stopped, its buffers staged by the
        reference worker, continued, then a wake-up round trip and `go` timed together."""
        ref = self.ref.peer
        ref.stage = "making inputs"
        _ok(ref.call("make", self.deadline, self.limit, seed=secrets.randbits(31)), ref)
        times: dict[str, float] = {}
        shift = self.calls % len(kinds)
        self.calls += 1
        for kind in kinds[shift:] + kinds[:shift]:
            peer = self._peer(kind)
            if poison:
                _ok(peer.call("poison", self.deadline, self.limit), peer)
            self._stage(peer, "candidate" if kind == "candidate" else "baseline")
            try:
                times[kind], _ = self._timed(peer, self.run.floor_ms)
            finally:
                _stop(peer.worker)  # every timed worker alike: stopped until the check is over
        ref.stage = "checking the candidate's outputs"
        try:
            got = _ok(ref.call("check", self.deadline, self.limit, slot="candidate"), ref)
        finally:
            for kind in kinds:
                _continue(self._peer(kind).worker)
        result = {"checks": got.get("checks") or [], "max_abs_err": got.get("max_abs_err"),
                  "rel_err": got.get("rel_err")}
        mutated = got.get("mutated") or []
        self.run.mutated.extend(i for i in mutated if isinstance(i, int))
        if check_into is not None:
            check_into.append(result)
        else:
            self.run.timed_checked += 1
            if not all(isinstance(c, dict) and c.get("passed") for c in result["checks"]):
                self.run.timed_failures.append(result)
        return times

    def null_call_ms(self, calls: int = NULL_CALLS) -> float:
        """The harness's own time for a call that does nothing: the candidate's worker
        stopped, its inputs staged and its caches flushed, continued, then two empty round
        trips timed like a `go`, floors taken off (median). A time not well above it measures
        the wake-up and the channel more than the code."""
        times = []
        for _ in range(calls):
            self._stage(self.cand, "candidate")
            times.append(self._timed(self.cand, self.run.floor_ms, command="ping")[0])
        return statistics.median(times)

    def time_all(self) -> None:
        """Warm-up calls, the harness's empty-call time, then blocks of timed calls until the
        speedup's interval is narrow enough (or MAX_BLOCKS blocks, or the run limit is near)."""
        kinds = ["eager", *self.ref.baselines.keys() - {"eager"}, "candidate"]
        self.cand.stage = "timing"
        for _ in range(int(self.params["warmup"])):
            self.one_call(None, kinds)
        self.run.null_ms = self.null_call_ms()
        t0 = time.monotonic()
        per_call_ms = 0.0
        for block in range(MAX_BLOCKS):
            est = max(1e-3, (sum(self.run.cand_ms[-3:]) / 3) if self.run.cand_ms else 1.0)
            reps = int(min(self.params["max_reps"],
                           max(self.params["min_reps"], self.params["target_ms"] / est)))
            for _ in range(reps):
                spent = time.monotonic() - t0
                per_call_s = spent / max(1, len(self.run.cand_ms))
                if len(self.run.cand_ms) >= MIN_TIMED and (
                        time.monotonic() + 2 * per_call_s > self.deadline - 1.0):
                    break  # keep what was measured; the interval says how sure it is
                times = self.one_call(None, kinds)
                self.run.eager_ms.append(times["eager"])
                self.run.cand_ms.append(times["candidate"])
                if "compiled" in times:
                    self.run.compiled_ms.append(times["compiled"])
                per_call_ms = sum(times.values())
            self.run.blocks = block + 1
            _, low, high = paired_ratio(self.run.eager_ms, self.run.cand_ms)
            if low > 0 and high / low <= self.params["max_ci_ratio"]:
                break
            if time.monotonic() + per_call_ms / 1e3 * reps > self.deadline - 1.0:
                break


def _stop(worker: Worker) -> None:
    """Stop a timed worker's processes (SIGSTOP) and wait until they are: the candidate's
    stay stopped while the reference worker reads its outputs, so nothing it left running can
    finish the work after its `done`. The baselines are stopped too, so that the operating
    system treats every timed worker alike."""
    try:
        os.killpg(worker.proc.pid, signal.SIGSTOP)
    except OSError:
        return
    strays = _outside_group(worker)
    for pid in strays:
        try:
            os.kill(pid, signal.SIGSTOP)
        except OSError:
            pass
    worker.strays = strays
    worker.strays_seen.update(strays)
    pids = [worker.proc.pid, *_children(worker.proc.pid), *strays]
    end = time.monotonic() + 0.05
    while time.monotonic() < end and not all(_stopped(p) for p in pids):
        time.sleep(0.0002)


def _continue(worker: Worker) -> None:
    for pid in worker.strays:
        try:
            os.kill(pid, signal.SIGCONT)
        except OSError:
            pass
    try:
        os.killpg(worker.proc.pid, signal.SIGCONT)
    except OSError:
        pass


def _outside_group(worker: Worker) -> list[int]:
    """Processes of the worker's sandbox user id that left its process group (setsid or
    setpgid): they must be stopped with it. Empty when the worker has no id of its own."""
    if worker.uid is None:
        return []
    group = worker.proc.pid
    out = []
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            if entry.stat().st_uid != worker.uid:
                continue
            stat = Path(f"/proc/{entry.name}/stat").read_text()
            pgid = int(stat.rsplit(")", 1)[1].split()[2])
        except (OSError, ValueError, IndexError):
            continue
        if pgid != group:
            out.append(int(entry.name))
    return out


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []


def _stopped(pid: int) -> bool:
    """Whether every thread of `pid` is stopped (or gone)."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        return True
    for task in tasks:
        try:
            state = (task / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state not in ("T", "t", "Z", "X"):
            return False
    return True
