"""Replays a recorded file of ideas and code: for tests and demos, no model needed.

The file (JSON) holds rounds; each round a list of ideas, each with its implementations:

    {"rounds": [{"ideas": [{"idea": "...", "category": "memory",
                            "implementations": ["<ModelNew source>", {"error": "refused"}]}]}]}

An implementation is a source string, {"source": ...}, {"file": name of a file in the JSON
file's folder}, or {"error": reason} (a proposer failure). Test code constructs this proposer;
no search setting can name it or its file. A round with {"error": reason} fails its idea call.
Calls in a round take its ideas in order (wrapping around); later rounds reuse the last one.
Every ideas prompt it would have sent is kept in `prompts`, rendered like a model's.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

from search.engine.types import Idea, Implementation, Node, ProposalContext, ProposerError, Usage
from search.proposers import parsing, templates


class ScriptedProposer:
    name = "scripted"
    max_parallel = 1

    def __init__(self, script: dict[str, Any] | str | Path, base_dir: Path | None = None) -> None:
        if isinstance(script, str | Path):
            path = Path(script)
            base_dir = base_dir or path.parent
            script = json.loads(path.read_text())
        self.base_dir = base_dir or Path(".")
        self.rounds: list[dict[str, Any]] = list(script.get("rounds") or [])
        if not self.rounds:
            raise ValueError("a scripted proposer file needs at least one round")
        self.prompts: list[str] = []  # every ideas prompt, in call order
        self.implement_prompts: list[str] = []
        self.last_context: ProposalContext | None = None
        self.idea_calls = 0
        self.implement_calls = 0
        self._cursor: dict[int, int] = {}
        self._lock = threading.Lock()

    def _round(self, number: int) -> dict[str, Any]:
        return self.rounds[min(max(number, 1), len(self.rounds)) - 1]

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """The next k recorded ideas of the context's round. Raises ProposerError for an error round."""
        with self._lock:
            self.idea_calls += 1
            self.last_context = ctx
            self.prompts.append(templates.ideas_prompt(ctx, k))
            recorded = self._round(ctx.round)
            if recorded.get("error"):
                raise ProposerError(str(recorded["error"]))
            entries = recorded.get("ideas") or []
            if not entries:
                return [], Usage(self.name)
            start = self._cursor.get(ctx.round, 0)
            self._cursor[ctx.round] = start + k
            picked = [entries[(start + i) % len(entries)] for i in range(min(k, len(entries)))]
        return [Idea(e["idea"], parsing.category_key(e.get("category"))) for e in picked], Usage(self.name)

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """The idea's recorded implementations, in order, repeated to make m."""
        with self._lock:
            self.implement_calls += 1
            self.implement_prompts.append(templates.implement_prompt(ctx, parent, idea))
        entry = next((e for r in self.rounds for e in r.get("ideas") or [] if e.get("idea") == idea.text), None)
        recorded = (entry or {}).get("implementations") or []
        if not recorded:
            return [Implementation(error="no recorded implementation for this idea", usage=Usage(self.name))]
        return [self._load(recorded[j % len(recorded)]) for j in range(m)]

    def _load(self, item: Any) -> Implementation:
        if isinstance(item, str):
            return Implementation(source=item, usage=Usage(self.name))
        if "error" in item:
            return Implementation(error=str(item["error"]), usage=Usage(self.name))
        if "file" in item:
            return Implementation(source=self._file(str(item["file"])).read_text(), usage=Usage(self.name))
        return Implementation(source=str(item.get("source", "")), usage=Usage(self.name))

    def _file(self, name: str) -> Path:
        """A file beside the recording; nothing outside its folder."""
        base = self.base_dir.resolve()
        path = (base / name).resolve()
        if not path.is_relative_to(base):
            raise ValueError(f"a recorded file must lie in {base}, not {name!r}")
        return path
