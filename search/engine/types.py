"""Plain data the search engine works on. No Django here: the web app persists these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from search.engine.statuses import FINAL_NODE_STATUSES, NodeStatus

# The optimization categories of the fast-kernels study; every idea carries one.
CATEGORIES = {
    "memory": "Memory access",
    "async": "Asynchronous operations and latency hiding",
    "precision": "Data type and precision",
    "compute": "Computation and instructions",
    "parallelism": "Parallelism and occupancy",
    "control_flow": "Control flow and loops",
}

NODE_KINDS = ("reference", "idea", "kernel")
KERNEL_STATUSES = tuple(s.value for s in NodeStatus)
FINAL_STATUSES = FINAL_NODE_STATUSES


@dataclass
class SearchConfig:
    strategy: str = "branching"  # "branching" or "sequential"
    proposer: str = "builtin"  # builtin | openai | anthropic | ensemble
    model: str = ""
    # USD per million tokens [input, output] for models the price table lacks.
    model_prices: dict[str, list[float]] = field(default_factory=dict)
    rounds: int = 5
    ideas_per_round: int = 4  # K
    impls_per_idea: int = 2  # M
    seeds_per_round: int = 2  # B
    device: str = "cpu"
    tolerance: float = 1e-2  # atol and rtol
    policy: str = "any"  # "any" or "custom-kernels"
    trials: int = 5
    timeout_s: float = 60.0
    max_candidates: int | None = None
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    use_library: bool = True  # start from kept kernels of similar problems
    compile_baseline: bool = True

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SearchConfig:
        known = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in known})


@dataclass
class Usage:
    """What one model call cost."""

    model: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.model or other.model, self.input_tokens + other.input_tokens,
                     self.output_tokens + other.output_tokens, self.cost_usd + other.cost_usd)


@dataclass
class Node:
    """A node of the search tree. Kernel and idea nodes alternate below the reference."""

    kind: str  # "reference" | "idea" | "kernel"
    round: int
    id: int | None = None  # assigned by the store
    parent_id: int | None = None
    key: str = ""  # stable identity inside a search, e.g. "r1/i0/k1"; makes resume idempotent
    # idea nodes
    idea: str = ""
    category: str = ""
    # kernel nodes
    source: str = ""
    backend: str | None = None
    status: str = "proposed"
    verdict: dict[str, Any] = field(default_factory=dict)  # gpurunner Verdict.to_dict()
    speedup: float | None = None  # the verdict's own ratio; read through speedups.speedup_of
    speedup_vs_compile: float | None = None
    cand_ms: float | None = None
    error: str = ""
    usage: Usage = field(default_factory=Usage)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Idea:
    text: str
    category: str  # a key of CATEGORIES


@dataclass
class TriedIdea:
    """History line the proposer sees: an idea and how its implementations fared."""

    round: int
    text: str
    category: str
    outcomes: list[dict[str, Any]]  # per implementation: status, speedup, failed checks, error


@dataclass
class ProposalContext:
    """Everything a proposer may condition on when writing ideas."""

    reference: str
    reference_info: dict[str, Any]  # gpurunner ReferenceReport.to_dict()
    seeds: list[Node]  # current seed kernels with their measurements
    history: list[TriedIdea]  # every idea tried so far with outcomes
    round: int
    device: str
    tolerance: float
    policy: str
    unexplored_categories: list[str]


@dataclass
class Implementation:
    source: str = ""
    error: str = ""  # why the proposer could not produce code (malformed answer, refusal...)
    usage: Usage = field(default_factory=Usage)


class Proposer(Protocol):
    name: str

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """Write k ideas, conditioned on ctx. Raises ProposerError on failure."""
        ...

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """Write m implementations of idea starting from the parent kernel."""
        ...


class ProposerError(Exception):
    """A model call failed in a way the search records on a node and moves past."""


class ProviderRefused(ProposerError):
    """The provider refuses every call (key, quota, credit, unknown model): the search fails
    at once with the provider's message instead of billing or waiting for more refusals."""


class Store(Protocol):
    """Where the engine keeps the tree. The web app persists and streams; tests keep a list."""

    def add_node(self, node: Node) -> Node: ...  # assigns id; returns existing node if key exists
    def update_node(self, node: Node) -> None: ...
    def nodes(self) -> list[Node]: ...
    def emit(self, kind: str, payload: dict[str, Any]) -> None: ...
    def save_checkpoint(self, state: dict[str, Any]) -> None: ...
    def load_checkpoint(self) -> dict[str, Any] | None: ...
    def heartbeat(self) -> None: ...
    def cancel_requested(self) -> bool: ...


@dataclass
class SearchOutcome:
    """How a search ended: its best correct kernel and why it stopped."""

    best: Node | None
    stop_reason: str  # one of STOP_REASONS
    candidates: int  # kernels evaluated
    correct: int  # kernels that passed every check
    usage: Usage = field(default_factory=Usage)  # model calls over the whole search
    detail: str = ""  # the stop reason in a sentence, when a code does not say enough (no_ideas)

    def to_dict(self) -> dict[str, Any]:
        return {"best_node": self.best.id if self.best else None,
                "best_key": self.best.key if self.best else None,
                "best_speedup": self.best.speedup if self.best else None,
                "stop_reason": self.stop_reason, "candidates": self.candidates,
                "correct": self.correct, "usage": asdict(self.usage)}


# Why a search stopped: all rounds done, a budget, the user, or no idea applied to the problem.
STOP_REASONS = ("completed", "max_candidates", "max_cost_usd", "max_wall_s", "cancelled", "no_ideas")
# How the sentence of a `no_ideas` stop begins (the search's status reason).
NO_IDEAS = "no idea applies"


# on_stage(index, stage, verdict dict or None): a candidate reached a stage (see LIVE_STAGES;
# "verdict" comes with its Verdict dict) while the batch runs.
StageCallback = Callable[[int, str, "dict[str, Any] | None"], None]


class Evaluator(Protocol):
    def __call__(self, reference: str, sources: list[str], config: SearchConfig,
                 on_stage: StageCallback | None = None) -> list[dict[str, Any]]:
        """Evaluate candidate sources; returns gpurunner Verdict dicts in the same order.
        An evaluator may report stages as they happen; one without `on_stage` is also
        accepted (its kernels stay queued until the batch returns)."""
        ...
