"""The built-in proposer: ideas from a catalogue, implementations from kernel templates.

No key and no network. It reads the reference (syntax and the runner's ReferenceReport, never
by running it), picks catalogue ideas that apply and have not been tried, and implements each
idea on its parent kernel with several parameter variants (block size, vector width, rows or
cluster per block): implementation j of an idea uses variant j.
"""

from __future__ import annotations

import functools
import hashlib
import json

from search.engine.types import Idea, Implementation, Node, ProposalContext, TriedIdea, Usage
from search.proposers.builtin.analysis import ProblemShape, analyze
from search.proposers.builtin.catalogue import IdeaSpec, load_catalogue
from search.proposers.builtin.recipe import Recipe, apply_change
from search.proposers.builtin.render import render, summarize

# A category nobody has tried yet is worth this much priority (the study's exploration rule).
_UNEXPLORED_BONUS = 15
_NEVER_WORKED = -60.0


class BuiltinProposer:
    """Offline proposer implementing the engine's Proposer protocol."""

    name = "builtin"

    def __init__(self, device: str = "cpu", seed: int = 0):
        self.device = device
        self.seed = seed

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """Up to k untried ideas that apply to the problem and change the seed.

        Ordered by expected value: catalogue priority for the pattern, a bonus for categories
        not explored yet, a bonus for ideas that already paid off on another kernel (applied
        again on top of this seed) and a penalty for ideas whose every implementation failed.
        Fewer than k when the catalogue runs out.
        """
        shape = _shape(ctx.reference, json.dumps(ctx.reference_info or {}, sort_keys=True, default=str))
        device = ctx.device or self.device
        tried = {t.text for t in ctx.history}
        seed = next((s for s in ctx.seeds if s.kind == "kernel"), None)
        parent = Recipe.from_source(seed.source) if seed is not None else Recipe()
        suffix = _stack_suffix(parent)
        unexplored = set(ctx.unexplored_categories or [])
        scored: list[tuple[float, int, IdeaSpec, str]] = []
        for order, spec in enumerate(load_catalogue()):
            if not spec.applies(shape, device, ctx.tolerance):
                continue
            base_text = spec.render_text(shape, ctx.tolerance)
            text = base_text + suffix
            if text in tried or not _changes(spec, shape, parent):
                continue
            record = _track_record(base_text, ctx.history)
            if record <= _NEVER_WORKED:
                continue  # every implementation elsewhere failed or was refused: do not retry it
            score = spec.score(shape) + (_UNEXPLORED_BONUS if spec.category in unexplored else 0) + record
            scored.append((score, -order, spec, text))
        scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
        return [Idea(text=text, category=spec.category) for _, _, spec, text in scored[:k]], Usage(model="builtin")

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """Up to m implementations of `idea` on `parent`, one per parameter variant.

        An idea the catalogue does not know, or a variant that cannot serve this problem,
        becomes an Implementation with an error instead of an exception.
        """
        shape = _shape(ctx.reference, json.dumps(ctx.reference_info or {}, sort_keys=True, default=str))
        spec = self._spec_for(idea, shape, ctx.tolerance)
        if spec is None:
            return [Implementation(error=f"the built-in catalogue has no idea reading {idea.text[:80]!r}")]
        base = Recipe.from_source(parent.source) if parent.kind == "kernel" else Recipe()
        out: list[Implementation] = []
        seen: set[str] = set()
        for variant in self._ordered_variants(spec, shape)[: max(m, 0)]:
            recipe = apply_change(base, spec.change, variant)
            if recipe.to_json() in seen:
                continue
            seen.add(recipe.to_json())
            try:
                out.append(Implementation(source=render(recipe, shape, ctx.reference), usage=Usage(model="builtin")))
            except (ValueError, KeyError) as exc:
                out.append(Implementation(error=f"cannot build this variant: {exc}"))
        return out

    def _spec_for(self, idea: Idea, shape: ProblemShape, tolerance: float) -> IdeaSpec | None:
        # The idea's text identifies its catalogue entry, so a resumed search needs no state.
        for spec in load_catalogue():
            if idea.text.startswith(spec.render_text(shape, tolerance)):
                return spec
        return None

    def _ordered_variants(self, spec: IdeaSpec, shape: ProblemShape) -> list[dict]:
        variants = list(spec.variants_for(shape))
        if self.seed and len(variants) > 1:
            # A different seed explores the variants in a different (still deterministic) order.
            shift = self.seed % len(variants)
            variants = variants[shift:] + variants[:shift]
        return variants


def _changes(spec: IdeaSpec, shape: ProblemShape, parent: Recipe) -> bool:
    variant = spec.variants_for(shape)[0]
    return apply_change(parent, spec.change, variant).to_json() != parent.to_json()


def _stack_suffix(parent: Recipe) -> str:
    """Names the seed an idea builds on, so the same idea on another seed is a new idea."""
    if parent.core == "reference" and not parent.options:
        return ""
    return f" (Stacked on the seed kernel: {summarize(parent)}.)"


def _track_record(base_text: str, history: list[TriedIdea]) -> float:
    """Bonus for ideas that were correct and faster elsewhere, penalty for ideas that never worked."""
    outcomes = [o for t in history if t.text.startswith(base_text) for o in t.outcomes]
    if not outcomes:
        return 0.0
    speedups = [o.get("speedup") or 0.0 for o in outcomes if o.get("status") == "correct"]
    if not speedups:
        return _NEVER_WORKED
    return 20.0 if max(speedups) > 1.0 else -20.0


@functools.lru_cache(maxsize=64)
def _shape_cached(digest: str, reference: str, info_json: str) -> ProblemShape:
    return analyze(reference, json.loads(info_json))


def _shape(reference: str, info_json: str) -> ProblemShape:
    digest = hashlib.sha256((reference + info_json).encode()).hexdigest()
    return _shape_cached(digest, reference, info_json)
