"""What model calls cost, from an editable price table (prices.toml, USD per million tokens)."""

from __future__ import annotations

import os
import re
import tomllib
from functools import cache
from pathlib import Path

from search.engine.types import Usage

PRICES = Path(__file__).with_name("prices.toml")
_SNAPSHOT = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$")


@cache
def price_table(path: str | None = None) -> dict[str, tuple[float, float]]:
    """{model: (input USD per Mtok, output USD per Mtok)} from KERNELWEB_PRICES or prices.toml."""
    source = Path(path or os.environ.get("KERNELWEB_PRICES") or PRICES)
    data = tomllib.loads(source.read_text())
    return {name: (float(p.get("input", 0.0)), float(p.get("output", 0.0)))
            for name, p in data.get("models", {}).items()}


def price_of(model: str, table: dict[str, tuple[float, float]] | None = None) -> tuple[float, float] | None:
    """The model's prices: its entry, or the entry of the model it is a dated snapshot or
    `-latest` alias of (gpt-4o-2024-08-06 costs what gpt-4o costs); None when unknown."""
    table = price_table() if table is None else table
    name = model.split("/")[-1]  # gateways prefix a provider: "openai/gpt-4o"
    if name in table:
        return table[name]
    base = _SNAPSHOT.sub("", name)
    return table.get(base)


def usage_of(model: str, input_tokens: int, output_tokens: int,
             table: dict[str, tuple[float, float]] | None = None) -> Usage:
    """Usage with its cost; an unknown model costs 0 but its tokens are still counted."""
    prices = price_of(model, table)
    cost = 0.0 if prices is None else (input_tokens * prices[0] + output_tokens * prices[1]) / 1e6
    return Usage(model, int(input_tokens or 0), int(output_tokens or 0), cost)
