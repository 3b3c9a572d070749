"""The search settings a user chooses, described once: their choices and numeric bounds.

`services.clean_config` checks against these (for the form, the API and the command line), the
new-search form takes its limits from them, and the API schema its descriptions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from django.conf import settings

# The proposer is checked with its model by search.proposers.validate_spec.
CHOICES: dict[str, tuple[str, ...]] = {
    "device": ("cpu", "cuda"),
    "policy": ("any", "custom-kernels"),
    "strategy": ("branching", "sequential"),
}


@dataclass(frozen=True)
class Number:
    """A numeric setting: a whole number from `low` to `high`, or a real number above 0 and at
    most `high`. `high` may name the Django setting that holds it (deployment limits)."""

    whole: bool
    high: float | str
    meaning: str
    low: int = 1

    def maximum(self) -> float:
        return float(getattr(settings, self.high)) if isinstance(self.high, str) else self.high

    def check(self, raw: Any) -> tuple[int | float | None, str]:
        """(the value, "") or (None, why it is refused)."""
        high = self.maximum()
        if self.whole:
            try:
                value = int(raw)
            except (TypeError, ValueError):
                return None, "must be a whole number"
            if not self.low <= value <= high:
                return None, f"must be between {self.low} and {high:.0f}"
            return value, ""
        try:
            number = float(raw)
        except (TypeError, ValueError):
            return None, "must be a number"
        if not 0 < number <= high or number == math.inf:  # NaN fails the comparison too
            return None, (f"must be above 0 and at most {high:g}" if high < math.inf
                          else "must be a positive number")
        return number, ""

    def describe(self) -> str:
        high = self.maximum()
        limit = (f"{self.low} to {high:.0f}" if self.whole
                 else f"above 0, at most {high:g}" if high < math.inf else "above 0")
        return f"{self.meaning} ({limit})"


NUMBERS: dict[str, Number] = {
    "rounds": Number(True, "SEARCH_MAX_ROUNDS", "rounds of ideas and implementations"),
    "ideas_per_round": Number(True, "SEARCH_MAX_IDEAS", "ideas proposed per seed each round"),
    "impls_per_idea": Number(True, "SEARCH_MAX_IMPLS", "implementations written per idea"),
    "seeds_per_round": Number(True, 16, "fastest kernels kept as seeds for the next round"),
    "trials": Number(True, 50, "correctness trials on fresh random inputs"),
    "tolerance": Number(False, 1.0, "atol and rtol of the output comparison"),
    # Budgets: the search stops cleanly, with its best so far, at the first one reached.
    "max_candidates": Number(True, 100_000, "budget: stop after this many evaluated candidates"),
    "max_cost_usd": Number(False, math.inf, "budget: stop once model calls cost this many US$"),
    "max_wall_s": Number(False, math.inf, "budget: stop after this many seconds"),
}


def describe(name: str) -> str:
    """One line on a setting, with its bounds or choices (for the API schema)."""
    if name in NUMBERS:
        return NUMBERS[name].describe()
    if name == "proposer":
        from search.proposers import PROPOSERS

        return "one of " + ", ".join(PROPOSERS)
    return "one of " + ", ".join(CHOICES[name])
