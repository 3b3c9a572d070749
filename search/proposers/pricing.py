"""What model calls cost, from an editable price table (prices.toml, USD per million tokens),
extended by the file KERNELWEB_PRICES names and by the prices a search itself gives."""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping, Sequence
from functools import cache
from pathlib import Path

from search.engine.types import Usage

PRICES = Path(__file__).with_name("prices.toml")
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")
Prices = Mapping[str, Sequence[float]]


def _read(path: Path) -> dict[str, tuple[float, float]]:
    data = tomllib.loads(path.read_text())
    return {name: (float(p.get("input", 0.0)), float(p.get("output", 0.0)))
            for name, p in data.get("models", {}).items()}


@cache
def price_table(path: str | None = None) -> dict[str, tuple[float, float]]:
    """{model: (input USD per Mtok, output USD per Mtok)}: prices.toml, then the entries of the
    file `path` or KERNELWEB_PRICES names (same format), which add models or replace prices."""
    table = _read(PRICES)
    extra = path or os.environ.get("KERNELWEB_PRICES")
    if extra:
        table |= _read(Path(extra))
    return table


def _names(model: str) -> list[str]:
    """The names a model's price may be listed under, most specific first."""
    name = model.split("/")[-1]  # gateways prefix a provider: "openai/gpt-4o"
    base = _SNAPSHOT.sub("", name)
    # OpenRouter writes versions with dots (claude-sonnet-4.5); Anthropic with dashes.
    return list(dict.fromkeys([model, name, base, name.replace(".", "-"), base.replace(".", "-")]))


def price_of(model: str, table: Prices | None = None) -> tuple[float, float] | None:
    """The model's prices: its entry, or the entry of the model it is a dated snapshot,
    `-latest` alias or gateway name of (gpt-4o-2024-08-06 costs what gpt-4o costs); None when
    the table does not know it."""
    table = price_table() if table is None else table
    for name in _names(model):
        if name in table:
            found = table[name]
            return float(found[0]), float(found[1])
    return None


def prices_with(extra: Prices | None) -> dict[str, tuple[float, float]]:
    """The price table with a search's own prices on top."""
    return price_table() | {k: (float(v[0]), float(v[1])) for k, v in (extra or {}).items()}


def usage_of(model: str, input_tokens: int, output_tokens: int, table: Prices | None = None) -> Usage:
    """Usage with its cost; an unpriced model costs 0 (a search is warned at submit) but its
    tokens are still counted."""
    prices = price_of(model, table)
    cost = 0.0 if prices is None else (input_tokens * prices[0] + output_tokens * prices[1]) / 1e6
    return Usage(model, int(input_tokens or 0), int(output_tokens or 0), cost)
