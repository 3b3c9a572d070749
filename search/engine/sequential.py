"""Sequential revision, the common baseline: one candidate at a time, each revising the last.

It spends the same number of candidates as the branching search with the same settings
(rounds x ideas per round x implementations per idea); each step is one idea and one
implementation written from the last kernel (to fix it if it failed, improve it if it passed).
"""

from __future__ import annotations

from search.engine.keys import step_idea_key
from search.engine.search_run import SearchRun


def run_sequential(run: SearchRun) -> None:
    """Run the steps (or until a budget stops the search)."""
    config = run.config
    steps = config.rounds * config.ideas_per_round * config.impls_per_idea
    last = run.seeds(before_round=1, count=1)[0]  # the reference, or the best kept kernel
    for step in range(1, steps + 1):
        if run.check_budgets():
            return
        run.round = step
        run.store.emit("round_started", {"round": step})
        ideas = run.ideas(step, last, [step_idea_key(step)])
        if not ideas:  # the proposer has nothing more to try
            run.finish_round(step)
            return
        kernels = run.implement(step, [(idea, last) for idea in ideas], 1)
        run.evaluate(kernels)
        run.summarize_ideas(ideas)
        run.finish_batch()
        run.finish_round(step)
        written = [k for k in kernels if k.source]
        if written:
            last = written[-1]
