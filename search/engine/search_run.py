"""The state of one running search and the steps both strategies share.

Everything goes through the store and is keyed, so running the same steps again after a crash
finds the nodes already made, proposes nothing twice and re-evaluates only unfinished kernels.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from search.engine import feedback
from search.engine.keys import REFERENCE_KEY, kernel_key, library_key
from search.engine.speedups import best_of, rank_key, speedup_of
from search.engine.statuses import LIVE_STAGES, NodeStatus
from search.engine.types import (
    FINAL_STATUSES,
    NO_IDEAS,
    Evaluator,
    Idea,
    Implementation,
    Node,
    ProposalContext,
    Proposer,
    ProposerError,
    ProviderRefused,
    SearchConfig,
    SearchOutcome,
    Store,
    Usage,
)
from search.engine.verdicts import apply_verdict, runner_failure

# Budgets after which nothing more is evaluated; a cost limit still lets paid-for code run.
_STOP_EVALUATING = {"cancelled", "max_wall_s"}


def _no_ideas_detail(proposer: Any, ctx: ProposalContext) -> str:
    """The sentence a search that never had an idea ends with: the proposer's own explanation
    when it has one."""
    explain = getattr(proposer, "explain_no_ideas", None)
    why = explain(ctx) if callable(explain) else ""
    name = getattr(proposer, "name", "the proposer")
    return f"{NO_IDEAS}: {why or f'the {name} proposer suggested nothing for this problem'}"


def _error_text(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def accepts(evaluator: Any, keyword: str) -> bool:
    """Whether an evaluator takes `keyword` (the runner's take `on_stage` and `time_left_s`;
    simple fakes not)."""
    try:
        params = inspect.signature(evaluator).parameters
    except (TypeError, ValueError):
        return False
    return keyword in params or any(p.kind is p.VAR_KEYWORD for p in params.values())


def _proposer_error(exc: BaseException) -> str:
    """A proposer's failure in its own words (they already say what failed), others typed."""
    if isinstance(exc, ProposerError):
        return str(exc).strip() or type(exc).__name__
    return _error_text(exc)


def split_evenly(total: int, parts: int) -> list[int]:
    """Split total into `parts` counts that differ by at most one, larger ones first."""
    base, extra = divmod(total, parts)
    return [base + (1 if i < extra else 0) for i in range(parts)]


class SearchRun:
    """One search's plumbing: nodes by key, budgets, proposer calls, batch evaluation."""

    def __init__(
        self,
        reference: str,
        reference_info: dict[str, Any],
        config: SearchConfig,
        proposer: Proposer,
        evaluator: Evaluator,
        store: Store,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.reference = reference
        self.reference_info = dict(reference_info or {})  # gains the measured times
        self.config = config
        self.proposer = proposer
        self.evaluator = evaluator
        self.store = store
        self.clock = clock
        self.started = clock()
        checkpoint = store.load_checkpoint() or {}
        self.elapsed_before = float(checkpoint.get("elapsed_s", 0.0))  # wall time before a crash
        self.by_key: dict[str, Node] = {n.key: n for n in store.nodes()}
        self.stop_reason: str | None = None
        self.stop_detail = ""  # why, in a sentence, for a search no idea applied to
        self.best: Node | None = self._find_best()
        self.round = 0
        self.refused: ProviderRefused | None = None  # the provider refuses every call: stop

    # --- tree -------------------------------------------------------------------------------
    def add(self, node: Node) -> Node:
        """Add a node through the store (which returns the existing node for a known key)."""
        stored = self.store.add_node(node)
        self.by_key[stored.key] = stored
        return stored

    def update(self, node: Node) -> None:
        self.store.update_node(node)
        self.by_key[node.key] = node

    def nodes(self) -> list[Node]:
        return sorted(self.by_key.values(), key=lambda n: (n.id is None, n.id or 0))

    def root(self) -> Node:
        """The reference node, made on the first run."""
        return self.add(Node(kind="reference", round=0, key=REFERENCE_KEY, source=self.reference,
                             status=NodeStatus.CORRECT, speedup=1.0))

    def kernels(self) -> list[Node]:
        return [n for n in self.nodes() if n.kind == "kernel"]

    # --- counts and budgets -----------------------------------------------------------------
    def usage(self) -> Usage:
        total = Usage()
        for node in self.by_key.values():
            total = total + node.usage
        return total

    def counts(self) -> tuple[int, int]:
        """(kernels evaluated, kernels correct); a kernel a stop kept from being judged is
        `failed` and not counted."""
        evaluated = [k for k in self.kernels() if k.verdict and k.status in FINAL_STATUSES
                     and k.status != NodeStatus.FAILED]
        return len(evaluated), sum(1 for k in evaluated if k.status == NodeStatus.CORRECT)

    def elapsed(self) -> float:
        return self.elapsed_before + (self.clock() - self.started)

    def check_budgets(self) -> str | None:
        """Beat the heartbeat and say which budget (or cancel) ends the search, if any."""
        if self.stop_reason:
            return self.stop_reason
        self.store.heartbeat()
        config = self.config
        reason = None
        if self.store.cancel_requested():
            reason = "cancelled"
        elif config.max_wall_s is not None and self.elapsed() >= config.max_wall_s:
            reason = "max_wall_s"
        elif config.max_cost_usd is not None and self.usage().cost_usd >= config.max_cost_usd:
            reason = "max_cost_usd"
        elif config.max_candidates is not None and self.counts()[0] >= config.max_candidates:
            reason = "max_candidates"
        self.stop_reason = reason
        return reason

    def room(self, pending: int) -> int | None:
        """How many more kernels may be written before max_candidates is reached (None: no limit)."""
        if self.config.max_candidates is None:
            return None
        return self.config.max_candidates - self.counts()[0] - pending

    # --- proposing --------------------------------------------------------------------------
    def context(self, round_: int, seeds: list[Node]) -> ProposalContext:
        """What the proposer sees: the reference, the seeds and every idea tried so far."""
        history = feedback.tried_ideas(self.nodes())
        root = self.by_key.get(REFERENCE_KEY)
        info = self.reference_info
        if root is not None and root.cand_ms is not None:
            info = info | {"eager_ms": root.cand_ms}
        return ProposalContext(
            reference=self.reference,
            reference_info=info,
            seeds=seeds,
            history=history,
            round=round_,
            device=self.config.device,
            tolerance=self.config.tolerance,
            policy=self.config.policy,
            unexplored_categories=feedback.unexplored_categories(history),
        )

    def ideas(self, round_: int, seed: Node, keys: Sequence[str]) -> list[Node]:
        """The idea nodes for `keys` under a seed: the recorded ones, or new ones from the proposer.

        A proposer failure becomes one idea node with status `failed` and the reason; a proposer
        with nothing more to suggest (no ideas, no error) adds nothing.
        """
        existing = [self.by_key[k] for k in keys if k in self.by_key]
        if existing or not keys or self.check_budgets():
            return existing
        ctx = self.context(round_, [seed])
        try:
            ideas, usage = self.proposer.propose_ideas(ctx, len(keys))
        except Exception as exc:  # a model failure is recorded, never a crashed search
            node = Node(kind="idea", round=round_, parent_id=seed.id, key=keys[0], status=NodeStatus.FAILED,
                        error=_proposer_error(exc), usage=getattr(exc, "usage", None) or Usage())
            added = self.add(node)
            if isinstance(exc, ProviderRefused):
                raise exc
            return [added]
        ideas = list(ideas)[: len(keys)]
        if not ideas:
            if not any(n.kind == "idea" for n in self.by_key.values()):
                self.stop_reason, self.stop_detail = "no_ideas", _no_ideas_detail(self.proposer, ctx)
            return []  # nothing left to try from this seed: not a failure
        shares = _split_usage(usage, len(ideas))
        return [
            self.add(Node(kind="idea", round=round_, parent_id=seed.id, key=key, idea=idea.text,
                          category=idea.category, usage=share))
            for key, idea, share in zip(keys, ideas, shares, strict=False)
        ]

    def implement(self, round_: int, work: list[tuple[Node, Node]], m: int) -> list[Node]:
        """Kernel nodes for each (idea node, parent kernel): recorded ones, or new implementations.

        Calls run `proposer.max_parallel` at a time (1 unless the proposer says it is thread-safe);
        budgets are checked between groups of calls.
        """
        kernels: list[Node] = []
        todo: list[tuple[Node, Node, int]] = []
        for idea, parent in work:
            if idea.status == NodeStatus.FAILED:
                continue
            keys = [kernel_key(idea.key, j) for j in range(m)]
            existing = [self.by_key[k] for k in keys if k in self.by_key]
            if existing:
                kernels.extend(existing)
            else:
                todo.append((idea, parent, m))
        parallel = max(1, int(getattr(self.proposer, "max_parallel", 1)))
        pending = sum(1 for k in kernels if k.status not in FINAL_STATUSES)
        full = False  # max_candidates leaves no room for more code this round
        for start in range(0, len(todo), parallel):
            if full or self.check_budgets():
                break
            group = []
            for idea, parent, count in todo[start:start + parallel]:
                room = self.room(pending)
                if room is not None and room < count:
                    count, full = room, True
                if count <= 0:
                    break
                group.append((idea, parent, count))
                pending += count
            if not group:
                break
            calls = [(self.context(round_, [parent]), parent, idea, count) for idea, parent, count in group]
            if parallel == 1 or len(calls) == 1:
                results = [self._implement_one(*call) for call in calls]
            else:
                with ThreadPoolExecutor(len(calls)) as pool:
                    results = list(pool.map(lambda call: self._implement_one(*call), calls))
            for (idea, _parent, count), impls in zip(group, results, strict=True):
                for j, impl in enumerate(impls[:count]):
                    kernels.append(self.add(self._kernel_node(round_, idea, j, impl)))
            if self.refused is not None:
                raise self.refused
        return kernels

    def _implement_one(self, ctx: ProposalContext, parent: Node, idea_node: Node, m: int) -> list[Implementation]:
        try:
            impls = list(self.proposer.implement(ctx, parent, Idea(idea_node.idea, idea_node.category), m))
        except Exception as exc:  # a model failure is recorded, never a crashed search
            if isinstance(exc, ProviderRefused):
                self.refused = exc  # recorded on its node, then the search stops
            return [Implementation(error=_proposer_error(exc), usage=getattr(exc, "usage", None) or Usage())]
        return impls or [Implementation(error="the proposer wrote no implementation")]

    def _kernel_node(self, round_: int, idea: Node, index: int, impl: Implementation) -> Node:
        node = Node(kind="kernel", round=round_, parent_id=idea.id, key=kernel_key(idea.key, index),
                    source=impl.source, usage=impl.usage)
        if impl.error or not impl.source.strip():
            node.status = NodeStatus.FAILED
            node.error = impl.error or "the proposer wrote no code"
        return node

    # --- evaluating -------------------------------------------------------------------------
    def library_seeds(self, sources: Sequence[str]) -> None:
        """Evaluate kept kernels of similar problems as round-0 kernels under the reference."""
        if not sources:
            return
        root = self.root()
        nodes = [self.add(Node(kind="kernel", round=0, parent_id=root.id, key=library_key(i), source=src,
                               idea="kept kernel from a similar problem"))
                 for i, src in enumerate(sources)]
        self.evaluate(nodes)
        self.finish_batch()

    def evaluate(self, kernels: list[Node]) -> None:
        """Evaluate every unfinished kernel with code in one evaluator call (one batch).

        Kernels beyond max_candidates, or all of them once the search is cancelled or out of
        time, are marked `failed` as not evaluated.
        """
        pending = [k for k in kernels if k.source and k.status not in FINAL_STATUSES]
        if not pending:
            return
        reason = self.check_budgets()
        room = self.room(0)
        skipped: list[Node] = []
        if reason in _STOP_EVALUATING:
            pending, skipped = [], pending
        elif room is not None:
            pending, skipped = pending[:max(room, 0)], pending[max(room, 0):]
        for node in skipped:
            node.status = NodeStatus.FAILED
            node.error = f"not evaluated: the search stopped ({self.stop_reason or 'max_candidates'})"
            self.update(node)
        if not pending:
            return
        for node in pending:
            node.status = NodeStatus.QUEUED
            self.update(node)
        judged: set[int] = set()  # kernels whose verdict arrived while the batch ran

        def on_stage(index: int, stage: str, verdict: dict[str, Any] | None = None) -> None:
            node = pending[index]
            if stage == "verdict":
                if isinstance(verdict, dict):
                    apply_verdict(node, verdict)
                    self.update(node)
                    judged.add(index)
            elif stage in LIVE_STAGES and node.status != stage:
                node.status = stage
                self.update(node)

        sources = [n.source for n in pending]
        extra: dict[str, Any] = {}
        if accepts(self.evaluator, "on_stage"):
            extra["on_stage"] = on_stage
        if self.config.max_wall_s is not None and accepts(self.evaluator, "time_left_s"):
            # The batch stops when the budget does, not after its slowest candidate.
            extra["time_left_s"] = max(0.0, self.config.max_wall_s - self.elapsed())
        try:
            verdicts = list(self.evaluator(self.reference, sources, self.config, **extra))
        except Exception as exc:  # the runner failing must not crash the search
            verdicts = []
            error = _error_text(exc)
        else:
            error = "the runner returned no verdict for this kernel"
        for i, node in enumerate(pending):
            if i < len(verdicts) and isinstance(verdicts[i], dict):
                if i in judged and node.verdict == verdicts[i]:
                    continue  # already recorded and streamed as it arrived
                apply_verdict(node, verdicts[i])
            else:
                runner_failure(node, error)
            self.update(node)
        self._note_reference_time(verdicts)
        if room is not None and room <= len(pending):
            self.stop_reason = self.stop_reason or "max_candidates"

    def _note_reference_time(self, verdicts: list[Any]) -> None:
        compiled = sorted(v["compile_ref_ms"] for v in verdicts if isinstance(v, dict) and v.get("compile_ref_ms"))
        if compiled:  # the proposer's next prompts show the baselines to beat
            self.reference_info["compile_ms"] = compiled[len(compiled) // 2]
        root = self.by_key.get(REFERENCE_KEY)
        if root is None or root.cand_ms is not None:
            return
        times = sorted(v["ref_ms"] for v in verdicts if isinstance(v, dict) and v.get("ref_ms"))
        if times:
            root.cand_ms = times[len(times) // 2]
            self.update(root)

    def summarize_ideas(self, ideas: list[Node]) -> None:
        """Give each idea node the speedups of its best implementation (trusted ones only)."""
        for idea in ideas:
            best = best_of([k for k in self.kernels() if k.parent_id == idea.id])
            if best is None or not speedup_of(best).rankable:
                continue
            if (best.speedup, best.speedup_vs_compile) != (idea.speedup, idea.speedup_vs_compile):
                idea.speedup, idea.speedup_vs_compile = best.speedup, best.speedup_vs_compile
                self.update(idea)

    def finish_batch(self) -> None:
        """After a batch: emit a new best, costs, and save the checkpoint."""
        best = self._find_best()
        if best is not None and (self.best is None or best.key != self.best.key
                                 or speedup_of(best) != speedup_of(self.best)):
            self.store.emit("best_changed", {"node_id": best.id, **speedup_of(best).to_dict()})
        self.best = best
        candidates, correct = self.counts()
        usage = self.usage()
        gpu_seconds = sum(float(k.verdict.get("eval_s") or 0.0) for k in self.kernels() if k.verdict)
        self.store.emit("costs", {"candidates": candidates, "correct": correct,
                                  "input_tokens": usage.input_tokens, "output_tokens": usage.output_tokens,
                                  "cost_usd": usage.cost_usd, "gpu_seconds": gpu_seconds})
        self.store.heartbeat()
        self.store.save_checkpoint({
            "strategy": self.config.strategy, "round": self.round, "elapsed_s": self.elapsed(),
            "candidates": candidates, "correct": correct,
            "best_key": best.key if best else None, "stop_reason": self.stop_reason,
        })

    def finish_round(self, round_: int) -> None:
        """Tell the stream a round (or a sequential step) is over, with the best so far."""
        best = self.best
        self.store.emit("round_finished", {"round": round_, "best_speedup": best.speedup if best else None,
                                           "best_node_id": best.id if best else None})

    # --- choosing ---------------------------------------------------------------------------
    def _find_best(self) -> Node | None:
        return best_of(list(self.by_key.values()))

    def seeds(self, before_round: int, count: int) -> list[Node]:
        """The `count` correct kernels made before a round with the best measured speedups (the
        reference, 1×, included once timed); never a noisy one; the reference alone when
        nothing is correct yet."""
        root = self.root()
        pool = [k for k in self.kernels() if k.status == NodeStatus.CORRECT and k.round < before_round
                and not speedup_of(k).noisy]
        if root.cand_ms is not None:
            pool.append(root)
        pool.sort(key=rank_key)
        return pool[:count] or [root]

    def outcome(self) -> SearchOutcome:
        candidates, correct = self.counts()
        return SearchOutcome(self._find_best(), self.stop_reason or "completed", candidates, correct,
                             self.usage(), self.stop_detail)


def _split_usage(usage: Usage, parts: int) -> list[Usage]:
    """Share one call's tokens and cost between the nodes it produced (sums stay exact)."""
    ins, outs = split_evenly(usage.input_tokens, parts), split_evenly(usage.output_tokens, parts)
    cost = usage.cost_usd / parts
    return [Usage(usage.model, ins[i], outs[i], cost) for i in range(parts)]
