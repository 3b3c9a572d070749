"""Read a model's answer: ideas as a JSON list (or a numbered list), code from a fenced block.

Models wrap JSON in fences or prose, leave trailing commas, answer with Markdown lists, draft
inside `<think>` tags and put several code blocks in one answer; these functions accept all of
that and say precisely why an answer cannot be a candidate.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from typing import Any

from search.engine.types import CATEGORIES, Idea, ProposerError
from search.proposers.candidate_rules import broken_rule

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[^\n]*\n(.*?)(```|\Z)", re.DOTALL)
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|\Z)", re.DOTALL | re.IGNORECASE)
_TRAILING_COMMA = re.compile(r",\s*([\]}])")
_NUMBERED = re.compile(r"^\s{0,3}(\d{1,2})[.)]\s+(.*)$")
_CATEGORY_TAG = re.compile(r"[\[(]\s*(?:category\s*:\s*)?`?([A-Za-z_ ]+?)`?\s*[\])]|category\s*:\s*`?([A-Za-z_]+)`?",
                           re.IGNORECASE)
_MARKUP = re.compile(r"\*\*|__|`")
_PYTHON = ("python", "python3", "py", "py3", "")
_TEXT_KEYS = ("idea", "text", "description", "rationale", "summary", "details", "explanation")
_TITLE_KEYS = ("title", "name", "headline")

# Words that place a free-text category on one of the study's categories.
_CATEGORY_WORDS = [
    ("async", ("async", "latency", "pipelin", "overlap", "prefetch", "stream")),
    ("precision", ("precision", "dtype", "data type", "fp16", "bf16", "tf32", "half")),
    ("parallelism", ("parallel", "occupancy", "thread", "block", "warp")),
    ("control_flow", ("control", "loop", "unroll", "branch")),
    ("memory", ("memory", "cache", "shared", "coalesc", "fus", "bandwidth")),
    ("compute", ("comput", "instruction", "math", "arithmetic")),
]


class AnswerError(ProposerError):
    """An answer that cannot be read; `reask` says whether asking again may help."""

    def __init__(self, message: str, reask: bool = True) -> None:
        super().__init__(message)
        self.reask = reask


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


def without_drafts(text: str) -> str:
    """The answer without `<think>` drafts (reasoning models served by vLLM or Ollama)."""
    return _THINK.sub("", text or "")


def _loads(piece: str) -> Any:
    try:
        return json.loads(piece)
    except ValueError:
        return json.loads(_TRAILING_COMMA.sub(r"\1", piece))


def _decoded_at(text: str, opener: str) -> list[Any]:
    """Every JSON value that starts at an `opener` in the text (prose around it ignored)."""
    text = _TRAILING_COMMA.sub(r"\1", text)
    decoder, found, i = json.JSONDecoder(), [], text.find(opener)
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find(opener, i + 1)
            continue
        found.append(value)
        i = text.find(opener, max(end, i + 1))
    return found


def _ideas_from(data: Any) -> list[Idea]:
    if isinstance(data, dict):
        data = data.get("ideas", data.get("items"))
    if not isinstance(data, list):
        return []
    return [i for i in (_idea(item) for item in data) if i is not None]


def _idea(item: Any) -> Idea | None:
    if isinstance(item, str):
        return Idea(item.strip(), category_key(item)) if item.strip() else None
    if not isinstance(item, dict):
        return None
    title = next((item[k] for k in _TITLE_KEYS if isinstance(item.get(k), str) and item[k].strip()), "")
    body = next((item[k] for k in _TEXT_KEYS if isinstance(item.get(k), str) and item[k].strip()), "")
    text = f"{title.strip().rstrip('.')}: {body.strip()}" if title and body else (title or body).strip()
    if not text:
        return None
    return Idea(text, category_key(item.get("category") or text))


def _numbered(text: str) -> list[Idea]:
    """Ideas written as a numbered Markdown list (continuation lines belong to their item)."""
    items: list[str] = []
    for line in text.splitlines():
        match = _NUMBERED.match(line)
        if match:
            items.append(match.group(2))
        elif items and line.strip() and line[:1].isspace():
            items[-1] += " " + line.strip()
        elif items and not line.strip():
            items.append("")  # a blank line ends the item
    ideas = []
    for item in (i for i in items if i.strip()):
        tag = _CATEGORY_TAG.search(item)
        category = category_key((tag.group(1) or tag.group(2)) if tag else item)
        clean = _MARKUP.sub("", _CATEGORY_TAG.sub("", item) if tag else item)
        clean = re.sub(r"\s+([:,.;])", r"\1", " ".join(clean.split())).strip(" -:")
        if clean:
            ideas.append(Idea(clean, category))
    return ideas


def parse_ideas(text: str, k: int | None = None, *, truncated: bool = False) -> list[Idea]:
    """The ideas in an answer: a JSON list of {idea, category} (or of {title, rationale}, or of
    strings) anywhere in it, the complete objects of a list cut short, or a numbered list.

    Raises AnswerError saying what was found instead (and that the answer was cut off).
    """
    text = without_drafts(text)
    fenced = [body for lang, body, _ in _FENCE.findall(text) if lang.lower() in ("json", "")]
    for found in (_fenced_json(fenced), _decoded_at(text, "["), [_decoded_at(text, "{")]):
        for data in found:
            ideas = _ideas_from(data)
            if ideas:
                return ideas[:k] if k else ideas
    ideas = _numbered(text)
    if ideas:
        return ideas[:k] if k else ideas
    cut = " (the answer was cut off at the output token limit)" if truncated else ""
    raise AnswerError(f"malformed answer: no JSON list of ideas{cut} in {excerpt(text)}")


def _fenced_json(pieces: list[str]) -> list[Any]:
    found = []
    for piece in pieces:
        try:
            found.append(_loads(piece.strip()))
        except ValueError:
            found.extend(_decoded_at(piece, "["))
    return found


def extract_code(text: str, *, truncated: bool = False, allowed: Collection[str] = ()) -> str:
    """The candidate file in an answer: the largest fenced block defining `class ModelNew`
    (the last one among equals), `<think>` drafts left out.

    Raises AnswerError when there is none, when the code was cut off at the token limit (an
    unterminated file is never run), or when it breaks a rule of search.proposers.candidate_rules
    (`allowed`: the reserved names the starting kernel itself defines).
    """
    text = without_drafts(text)
    blocks = [(body, close) for lang, body, close in _FENCE.findall(text) if lang.lower() in _PYTHON]
    with_model = [(b, c) for b, c in blocks if re.search(r"^\s*class\s+ModelNew\b", b, re.MULTILINE)]
    if not with_model and not blocks and re.search(r"^class\s+ModelNew\b", text, re.MULTILINE):
        with_model = [(text, "" if truncated else "```")]  # a bare file without fences
    if truncated and (not with_model or not with_model[-1][1]):
        raise AnswerError("the code was cut off at the output token limit before the file ended; "
                          "it was not run", reask=False)
    if not with_model:
        what = "code without `class ModelNew`" if blocks else "no code"
        raise AnswerError(f"{what} in the answer: {excerpt(text)}")
    best = max(range(len(with_model)), key=lambda i: (len(with_model[i][0]), i))
    source = with_model[best][0].strip() + "\n"
    refusal = broken_rule(source, allowed)
    if refusal:
        raise AnswerError(refusal)
    return source


def excerpt(text: str, chars: int = 200) -> str:
    """The start of an answer on one line, quoted, for an error message."""
    flat = " ".join((text or "").split())
    return repr(flat if len(flat) <= chars else flat[:chars] + "...") if flat else "an empty answer"
