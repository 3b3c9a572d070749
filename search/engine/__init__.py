"""The search algorithm: plain Python on dataclasses, no Django (the web app persists and streams)."""

from search.engine.run import run_search
from search.engine.runner_evaluator import runner_evaluator
from search.engine.types import SearchConfig, SearchOutcome

__all__ = ["SearchConfig", "SearchOutcome", "run_search", "runner_evaluator"]
