"""The branching search of the fast-kernels study.

Each round: K ideas in natural language, shared out over the B seeds (each seed's proposer call
sees the seed with its measurements and every idea tried so far); each idea implemented M times
from its seed; all candidates of the round evaluated as one batch; the B fastest correct kernels
seed the next round.
"""

from __future__ import annotations

from search.engine.keys import idea_key
from search.engine.search_run import SearchRun, split_evenly
from search.engine.types import Node


def run_branching(run: SearchRun) -> None:
    """Run the configured rounds (or until a budget stops the search)."""
    config = run.config
    for round_ in range(1, config.rounds + 1):
        if run.check_budgets():
            return
        run.round = round_
        seeds = run.seeds(before_round=round_, count=max(1, config.seeds_per_round))
        run.store.emit("round_started", {"round": round_})
        work: list[tuple[Node, Node]] = []
        ideas: list[Node] = []
        index = 0
        for seed, count in zip(seeds, split_evenly(config.ideas_per_round, len(seeds)), strict=True):
            keys = [idea_key(round_, seed.key, index + j) for j in range(count)]
            index += count
            for idea in run.ideas(round_, seed, keys):
                ideas.append(idea)
                work.append((idea, seed))
        if not ideas:  # the proposer has nothing more to try from any seed
            run.finish_round(round_)
            return
        kernels = run.implement(round_, work, config.impls_per_idea)
        run.evaluate(kernels)
        run.summarize_ideas(ideas)
        run.finish_batch()
        run.finish_round(round_)
