"""run_search: the one entry point that runs (or resumes) a search."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

from search.engine.branching import run_branching
from search.engine.search_run import SearchRun
from search.engine.sequential import run_sequential
from search.engine.types import Evaluator, Proposer, SearchConfig, SearchOutcome, Store

STRATEGIES = {"branching": run_branching, "sequential": run_sequential}


def run_search(
    reference: str,
    reference_info: dict[str, Any],
    config: SearchConfig,
    proposer: Proposer,
    evaluator: Evaluator,
    store: Store,
    *,
    clock: Callable[[], float] = time.monotonic,
    library_seeds: Sequence[str] = (),
) -> SearchOutcome:
    """Run the configured strategy and return its best correct kernel and why it stopped.

    Resumes from whatever the store holds: nodes are keyed, so nothing is duplicated, kernels in
    a final status are not evaluated again and recorded ideas are not proposed again. Proposer
    and runner failures become failed nodes. Budgets and cancel are checked between proposer
    calls and evaluations; the search then ends cleanly with its best so far.
    """
    if config.strategy not in STRATEGIES:
        raise ValueError(f"unknown strategy {config.strategy!r}; expected one of {sorted(STRATEGIES)}")
    run = SearchRun(reference, reference_info, config, proposer, evaluator, store, clock)
    run.root()
    run.library_seeds(list(library_seeds))
    STRATEGIES[config.strategy](run)
    run.finish_batch()
    return run.outcome()
