"""The example references shipped in examples/, for the new-search page's loader."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

# The examples in the order a newcomer meets them; any other file follows alphabetically.
ORDER = ["softmax", "layernorm", "matmul", "conv", "conv_relu_maxpool"]


@dataclass
class Example:
    name: str  # file stem, e.g. "softmax"
    label: str  # first line of the module docstring
    source: str


def examples_dir() -> Path:
    return Path(settings.BASE_DIR) / "examples"


def _label(source: str, fallback: str) -> str:
    try:
        doc = ast.get_docstring(ast.parse(source))
    except SyntaxError:
        doc = None
    return doc.strip().splitlines()[0] if doc else fallback


def list_examples(directory: Path | None = None) -> list[Example]:
    """Every examples/*.py as an Example, the newcomer's order first."""
    directory = directory or examples_dir()
    found = []
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        source = path.read_text()
        found.append(Example(path.stem, _label(source, path.stem), source))
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(found, key=lambda e: (rank.get(e.name, len(ORDER)), e.name))
