"""What the runner reports: plain dataclasses that turn into JSON and back.

These are the runner's public contract (the CLI's --json output and the Python API).
Field names are relied on outside the project; add fields, never rename them.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import Any

VERDICTS = ("correct", "incorrect", "compile_error", "runtime_error", "timeout", "rejected")
BACKENDS = ("cuda_cpp", "cpu_cpp", "nvrtc", "triton", "torch")

# How the reason of a candidate a stop (cancel, time budget) kept from being judged begins:
# such a verdict says nothing of the candidate, and a search does not count it as evaluated.
NOT_EVALUATED = "not evaluated: "

@dataclass
class Check:
    """One named integrity or correctness check and its outcome."""

    name: str
    passed: bool
    detail: str = ""


@dataclass
class ReferenceReport:
    """Outcome of validating a reference problem (`python -m gpurunner check`)."""

    ok: bool
    error: str | None = None  # one specific sentence when not ok
    line: int | None = None  # line in the reference the error points at, when known
    device: str = "cpu"
    input_shapes: list[list[int]] = field(default_factory=list)
    input_dtypes: list[str] = field(default_factory=list)
    output_shapes: list[list[int]] = field(default_factory=list)
    output_dtypes: list[str] = field(default_factory=list)
    init_inputs: list[Any] = field(default_factory=list)
    flops: float = 0.0
    bytes: float = 0.0
    operators: list[str] = field(default_factory=list)  # aten ops the forward runs
    parameters: int = 0
    # Median of a few eager calls timed at validation, in the reference's own process: a hint
    # for the first prompt, never a verdict's number (those come from the paired timing).
    eager_ms_estimate: float | None = None
    # The forward as an operator graph (gpurunner/graph.py; the format is in
    # docs/architecture.md); {} from a runner that predates it.
    graph: dict[str, Any] = field(default_factory=dict)
    hardware: dict[str, Any] = field(default_factory=dict)  # gpurunner.hardware.describe()

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ReferenceReport:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


@dataclass
class Verdict:
    """Outcome of evaluating one candidate against a reference.

    `verdict` is one of VERDICTS. `rejected` means the values were right but an integrity
    rule was broken. Times are milliseconds (median); spreads are percent of the median.
    """

    verdict: str
    reason: str
    checks: list[Check] = field(default_factory=list)
    backend: str | None = None
    device: str = "cpu"
    device_name: str = ""
    ref_ms: float | None = None
    ref_spread_pct: float | None = None
    compile_ref_ms: float | None = None
    cand_ms: float | None = None
    cand_spread_pct: float | None = None
    speedup: float | None = None
    speedup_vs_compile: float | None = None
    max_abs_err: float | None = None
    rel_err: float | None = None
    roofline_pct: float | None = None
    roofline_bound: str | None = None  # "memory" or the precision whose ceiling bounds the kernel
    roofline_peak: float | None = None  # that ceiling: bytes/s for memory, else FLOP/s
    achieved_gbps: float | None = None
    achieved_tflops: float | None = None
    precision: str | None = None  # e.g. "tf32", "bf16" when the candidate changed precision
    compile_s: float | None = None
    compile_log: str = ""
    error: str = ""  # traceback or compiler output for failures
    eval_s: float | None = None
    stages_s: dict[str, float] = field(default_factory=dict)  # where eval_s went, by stage
    # The speedups' 95% intervals [low, high], from calls paired with the baselines' calls.
    speedup_ci: list[float] | None = None
    speedup_vs_compile_ci: list[float] | None = None
    noisy: bool = False  # the interval stayed wide: the speedup is not a fact to rank by
    # Where one call's time went, per operator or kernel (us), as the candidate's own process
    # measured it under torch.profiler: context for the next prompt, never a verdict's fact.
    profile: dict[str, Any] | None = None
    # Each GPU kernel of the candidate: registers per thread, local memory per thread (spills,
    # local arrays) and static shared memory from its compiled code, and with `counters`
    # Nsight Compute's figures for one call (gpurunner.kernel_resources, gpurunner.ncu).
    # Advisory, like `profile`.
    kernels: list[dict[str, Any]] | None = None
    kernels_note: str = ""  # why a kernel's counters are missing, where they were asked for

    @property
    def is_correct(self) -> bool:
        return self.verdict == "correct"

    def failed_checks(self) -> list[Check]:
        return [c for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Verdict:
        names = {f.name for f in fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in names}
        kwargs["checks"] = [c if isinstance(c, Check) else Check(**c) for c in data.get("checks", [])]
        return cls(**kwargs)


@dataclass
class EvalOptions:
    """How to evaluate a candidate. Defaults match the CLI's."""

    device: str = "cpu"
    trials: int = 5
    atol: float = 1e-2
    rtol: float = 1e-2
    timeout_s: float = 60.0  # the candidate's run: checks and timing
    compile_timeout_s: float = 600.0  # building the candidate's extensions
    policy: str = "any"  # "any" or "custom-kernels"
    compile_baseline: bool = True  # also time the reference under torch.compile, paired
    profile: bool = False  # profile one call of each candidate (Verdict.profile)
    # On CUDA, also profile one call under Nsight Compute where it is installed (Verdict.kernels).
    counters: bool = False
    cache_dir: str | None = None  # build and baseline cache; default under ~/.cache/kernelweb

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)
