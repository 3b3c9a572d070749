"""Read a model's answer: ideas as a JSON list, code from a fenced block.

Models wrap JSON in fences or prose, leave trailing commas, and put several code blocks in one
answer; these functions accept all of that and reject what cannot be a candidate.
"""

from __future__ import annotations

import json
import re
from typing import Any

from search.engine.types import CATEGORIES, Idea, ProposerError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")

# Words that place a free-text category on one of the study's categories.
_CATEGORY_WORDS = [
    ("async", ("async", "latency", "pipelin", "overlap", "prefetch", "stream")),
    ("precision", ("precision", "dtype", "data type", "fp16", "bf16", "tf32", "half")),
    ("parallelism", ("parallel", "occupancy", "thread", "block", "warp")),
    ("control_flow", ("control", "loop", "unroll", "branch")),
    ("memory", ("memory", "cache", "shared", "coalesc", "fus", "bandwidth")),
    ("compute", ("comput", "instruction", "math", "arithmetic")),
]


def category_key(value: Any) -> str:
    """The CATEGORIES key for a model's category (a key, a label, or a few words)."""
    text = str(value or "").strip().lower()
    if text in CATEGORIES:
        return text
    for key, label in CATEGORIES.items():
        if text == label.lower():
            return key
    for key, words in _CATEGORY_WORDS:
        if any(w in text for w in words):
            return key
    return "compute"


def _json_candidates(text: str) -> list[str]:
    """Pieces of text that may hold the JSON list, most likely first."""
    pieces = [body for lang, body in _FENCE.findall(text) if lang.lower() in ("json", "")]
    start, end = text.find("["), text.rfind("]")
    if start != -1 and end > start:
        pieces.append(text[start:end + 1])
    pieces.append(text)
    return pieces


def _loads(piece: str) -> Any:
    try:
        return json.loads(piece)
    except ValueError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", piece))


def parse_ideas(text: str, k: int | None = None) -> list[Idea]:
    """The ideas in an answer: a JSON list of {idea, category} (or of strings), anywhere in it.

    Raises ProposerError when no list of ideas can be read.
    """
    for piece in _json_candidates(text or ""):
        try:
            data = _loads(piece.strip())
        except ValueError:
            continue
        if isinstance(data, dict):
            data = data.get("ideas", data.get("items"))
        if not isinstance(data, list):
            continue
        ideas = [_idea(item) for item in data]
        ideas = [i for i in ideas if i is not None]
        if ideas:
            return ideas[:k] if k else ideas
    raise ProposerError(f"malformed answer: no JSON list of ideas in {_excerpt(text)}")


def _idea(item: Any) -> Idea | None:
    if isinstance(item, str):
        return Idea(item.strip(), "compute") if item.strip() else None
    if not isinstance(item, dict):
        return None
    text = item.get("idea") or item.get("text") or item.get("description") or ""
    if not isinstance(text, str) or not text.strip():
        return None
    return Idea(text.strip(), category_key(item.get("category")))


def extract_code(text: str) -> str:
    """The candidate file in an answer: the largest fenced block defining `class ModelNew`
    (the last one among equals). Raises ProposerError when there is none."""
    blocks = [body for lang, body in _FENCE.findall(text or "") if lang.lower() in ("python", "py", "")]
    with_model = [b for b in blocks if re.search(r"^\s*class\s+ModelNew\b", b, re.MULTILINE)]
    if not with_model and not blocks and re.search(r"^class\s+ModelNew\b", text or "", re.MULTILINE):
        with_model = [text]  # a bare file without fences
    if not with_model:
        what = "code without `class ModelNew`" if blocks else "no code"
        raise ProposerError(f"{what} in the answer: {_excerpt(text)}")
    best = max(range(len(with_model)), key=lambda i: (len(with_model[i]), i))
    return with_model[best].strip() + "\n"


def _excerpt(text: str, chars: int = 200) -> str:
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= chars else flat[:chars] + "...") if flat else "an empty answer"
