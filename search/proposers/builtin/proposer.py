"""The built-in proposer: ideas from a catalogue, implementations from kernel templates.

No key and no network. It reads the reference (syntax and the runner's ReferenceReport, never
by running it) and writes three kinds of idea, each a sentence a person could have written:

- catalogue ideas that apply and change the seed (framework settings, precision, hand-written
  kernel templates), stacked on what the seed already does;
- retuning the seed's own kernel: the untried parameter settings (block size, threads, vector
  width, rows per task, one- or two-pass schedule) nearest to the fastest setting measured;
- combining the seed with the other fastest kernel: each one's settings applied to the other.

Each idea is implemented on its parent kernel with several parameter variants: implementation j
uses variant j, and a kernel it has already written is never written again.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Iterable
from dataclasses import dataclass

from search.engine.types import Idea, Implementation, Node, ProposalContext, TriedIdea, Usage
from search.proposers.builtin import families, tuning
from search.proposers.builtin.analysis import ProblemShape, analyze
from search.proposers.builtin.catalogue import IdeaSpec, load_catalogue
from search.proposers.builtin.recipe import Recipe, apply_change, normalized
from search.proposers.builtin.render import option_labels, render, summarize

# A category nobody has tried yet is worth this much priority (the study's exploration rule).
_UNEXPLORED_BONUS = 15
_NEVER_WORKED = -60.0
_RETUNE_SCORE = 70.0  # below the strongest catalogue ideas, above the long shots
_COMBINE_SCORE = 74.0
# Options that mean something for each core when carried over from another kernel.


@dataclass
class _Candidate:
    score: float
    order: int
    idea: Idea
    recipes: list[Recipe]  # its implementations, best bet first


class BuiltinProposer:
    """Offline proposer implementing the engine's Proposer protocol.

    `extra_ideas` names catalogue ideas that are off by default (e.g. "torch_compile") to offer
    anyway. The proposer remembers the recipe of every kernel it wrote (to read measurements
    back from the history and never write a kernel twice); a fresh instance on a resumed search
    falls back to what the idea texts and the seeds say.
    """

    name = "builtin"

    def __init__(self, device: str = "cpu", seed: int = 0, extra_ideas: Iterable[str] = ()):
        self.device = device
        self.seed = seed
        self.extra_ideas = set(extra_ideas)
        self._made: dict[tuple[str, int], Recipe] = {}  # (idea text, implementation index) -> recipe
        self._planned: dict[str, tuple[int, list[Recipe]]] = {}  # idea text -> (round, implementations)

    # --- ideas ------------------------------------------------------------------------------
    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """Up to k untried ideas that apply to the problem and change the seed.

        Ordered by expected value: catalogue priority for the pattern, a bonus for categories
        not explored yet, a bonus for ideas that already paid off on another kernel (applied
        again on top of this seed) and a penalty for ideas whose every implementation failed;
        retuning and combining the fastest kernels rank just below the strongest catalogue
        ideas. Fewer than k only when nothing untried is left.
        """
        shape = _shape(ctx.reference, json.dumps(ctx.reference_info or {}, sort_keys=True, default=str))
        device = ctx.device or self.device
        seed = next((s for s in ctx.seeds if s.kind == "kernel"), None)
        parent = Recipe.from_source(seed.source) if seed is not None else Recipe()
        seed_ms = seed.cand_ms if seed is not None else None
        # Written, or planned for an idea of this round on another seed: not to be planned again.
        planned = {r.to_json() for round_, rs in self._planned.values() if round_ == ctx.round for r in rs}
        made = self._made_recipes() | planned | {parent.to_json()}
        measured = self._measured(ctx.history)
        if seed is not None and seed_ms is not None:
            measured.append((parent, seed_ms))
        candidates = self._catalogue_ideas(ctx, shape, device, parent, made)
        candidates += self._retune_idea(shape, parent, measured, made)
        candidates += self._combine_idea(device, parent, seed_ms, measured, made)
        tried = {t.text for t in ctx.history}
        candidates = [c for c in candidates if c.idea.text not in tried]
        candidates.sort(key=lambda c: (c.score, -c.order), reverse=True)
        chosen: list[_Candidate] = []
        claimed: set[str] = set()
        for c in candidates:  # best first; a kernel another chosen idea will write is not written twice
            c.recipes = [r for r in c.recipes if r.to_json() not in claimed]
            if c.recipes and len(chosen) < k:
                chosen.append(c)
                claimed |= {r.to_json() for r in c.recipes}
        for c in chosen:
            self._planned[c.idea.text] = (ctx.round, c.recipes)
        return [c.idea for c in chosen], Usage(model="builtin")

    def explain_no_ideas(self, ctx: ProposalContext) -> str:
        """Why no catalogue idea applies to this problem, in a sentence (for a search that ends
        without trying anything)."""
        shape = _shape(ctx.reference, json.dumps(ctx.reference_info or {}, sort_keys=True, default=str))
        device = ctx.device or self.device
        facts = shape.facts
        if facts is None or not facts.captured:
            seen = f"its graph is missing ({facts.reason if facts else 'no reference report'})"
        else:
            seen = f"its graph has {facts.kernels} operators, none that an idea of the catalogue targets"
        tight = [s.key for s in load_catalogue() if device in s.devices and ctx.tolerance < s.min_tolerance]
        limit = (f"; {len(tight)} precision ideas need a tolerance above the search's {ctx.tolerance:g}"
                 if tight else "")
        return f"the built-in proposer has no idea for this program on {device}: {seen}{limit}"

    def _catalogue_ideas(self, ctx: ProposalContext, shape: ProblemShape, device: str, parent: Recipe,
                         made: set[str]) -> list[_Candidate]:
        unexplored = set(ctx.unexplored_categories or [])
        out = []
        for order, spec in enumerate(load_catalogue()):
            if not (spec.default or spec.key in self.extra_ideas) or not spec.applies(shape, device, ctx.tolerance):
                continue
            fresh = [r for r in self._recipes(spec, shape, parent) if r.to_json() not in made]
            if not fresh:
                continue  # it would change nothing, or every variant was written already
            base_text = spec.render_text(shape, ctx.tolerance)
            record = _track_record(base_text, ctx.history)
            if record <= _NEVER_WORKED:
                continue  # every implementation elsewhere failed or was refused: do not retry it
            score = spec.score(shape) + (_UNEXPLORED_BONUS if spec.category in unexplored else 0) + record
            text = base_text + _stack_suffix(parent, spec)
            out.append(_Candidate(score, order, Idea(text=text, category=spec.category), fresh))
        return out

    def _retune_idea(self, shape: ProblemShape, parent: Recipe, measured: list[tuple[Recipe, float]],
                     made: set[str]) -> list[_Candidate]:
        """One idea per parameter group of the seed's kernel: the untried settings nearest to the
        fastest one measured with the same core and options. Once every group's own
        neighbourhood is spent, one idea that moves all parameters at once."""
        if not tuning.tunable(parent.core, parent.params, shape):
            # A seed with nothing to tune (the reference, a library call): retune the fastest
            # kernel measured that has, from this seed.
            tunable = sorted(((ms, r) for r, ms in measured if tuning.tunable(r.core, r.params, shape)),
                             key=lambda pair: pair[0])
            if not tunable:
                return []
            parent, borrowed = tunable[0][1], True
        else:
            borrowed = False
        core = parent.core
        fixed = _fixed_params(parent, shape)
        family = [(tuning.settings_of(core, r.params, shape), ms) for r, ms in measured
                  if r.core == core and r.options == parent.options and _fixed_params(r, shape) == fixed]
        groups = list(tuning.groups(core))
        out: list[_Candidate] = []
        for rank, group in enumerate(groups):
            candidate = self._retune_group(shape, parent, family, made, group, rank, borrowed)
            if candidate is not None:
                out.append(candidate)
                made = made | {r.to_json() for r in candidate.recipes}
        if not out and len(groups) > 1:
            everything = (tuple(k for g, _ in groups for k in g), ", ".join(knobs for _, knobs in groups))
            candidate = self._retune_group(shape, parent, family, made, everything, len(groups), borrowed)
            out += [candidate] if candidate is not None else []
        return out

    def _retune_group(self, shape: ProblemShape, parent: Recipe, family: list[tuple[dict, float]],
                      made: set[str], group: tuple[tuple[str, ...], str], rank: int,
                      borrowed: bool = False) -> _Candidate | None:
        keys, knobs = group
        core = parent.core
        fixed = _fixed_params(parent, shape)
        current = tuning.settings_of(core, parent.params, shape)
        best, best_ms = min(family, key=lambda pair: pair[1]) if family else (current, None)
        tried = [tuning.settings_of(core, Recipe(**json.loads(j)).params, shape) for j in made
                 if _same_family(json.loads(j), parent, fixed, shape)]
        keep: list[tuple[dict, Recipe]] = []
        # Around the fastest setting first; when that neighbourhood is spent, around the seed's.
        for around in (family, []):
            nxt = tuning.next_settings(core, current, around, tried, shape, count=3, group=keys)
            recipes = [normalized(Recipe(core, {**parent.params, **s}, dict(parent.options))) for s in nxt]
            keep = [(s, r) for s, r in zip(nxt, recipes, strict=True) if r.to_json() not in made]
            if keep:
                break
        if not keep:
            return None
        trials = " or ".join(tuning.describe({k: s[k] for k in keys}) for s, _ in keep)
        if borrowed:
            seed_part = " (the seed itself has nothing to tune)"
        elif all(current[k] == best[k] for k in keys):
            seed_part = ""
        else:
            seed_part = f" (the seed runs {tuning.describe({k: current[k] for k in keys})})"
        measured_part = (f"the fastest measured so far is {tuning.describe({k: best[k] for k in keys})} "
                         f"at {best_ms:.3g} ms, {len(family)} settings timed" if best_ms is not None else
                         f"it runs {tuning.describe({k: current[k] for k in keys})}")
        text = (f"Retune the {knobs} of the {summarize(Recipe(core, {}, {}))}{seed_part}: {measured_part}; "
                f"try {trials}, the nearest settings not measured yet.")
        category = tuning.category_of_change(best, keep[0][0])
        return _Candidate(_RETUNE_SCORE - 2 * rank, 1000 + rank, Idea(text=text, category=category),
                          [r for _, r in keep])

    def _combine_idea(self, device: str, parent: Recipe, seed_ms: float | None,
                      measured: list[tuple[Recipe, float]], made: set[str]) -> list[_Candidate]:
        others = sorted(((ms, r) for r, ms in measured if _differs(r, parent)), key=lambda pair: pair[0])
        for other_ms, other in others[:3]:
            recipes = []
            for a, b in ((parent, other), (other, parent)):
                for combined in _combined(a, b, device):
                    if combined.to_json() not in made and _differs(combined, a) and _differs(combined, b):
                        recipes.append(combined)
                        made = made | {combined.to_json()}
            if not recipes:
                continue
            seed_part = f"{summarize(parent)}, {seed_ms:.3g} ms" if seed_ms is not None else summarize(parent)
            text = (f"Combine the seed ({seed_part}) with the other fast kernel ({summarize(other)}, "
                    f"{other_ms:.3g} ms): give each the settings that only the other has, since each may "
                    f"have found a gain the other lacks.")
            return [_Candidate(_COMBINE_SCORE, 1001, Idea(text=text, category=_combine_category(parent, other)),
                               recipes)]
        return []

    # --- implementations --------------------------------------------------------------------
    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """Up to m implementations of `idea` on `parent`, one per parameter variant or setting.

        An idea it does not know, or a variant that cannot serve this problem, becomes an
        Implementation with an error instead of an exception.
        """
        shape = _shape(ctx.reference, json.dumps(ctx.reference_info or {}, sort_keys=True, default=str))
        base = Recipe.from_source(parent.source) if parent.kind == "kernel" else Recipe()
        recipes = self._recipes_for(idea, shape, ctx.tolerance, base)
        if recipes is None:
            return [Implementation(error=f"the built-in catalogue has no idea reading {idea.text[:80]!r}")]
        out: list[Implementation] = []
        seen = {base.to_json()}
        made = self._made_recipes()
        fresh = [r for r in recipes if r.to_json() not in made] or recipes
        for recipe in fresh:
            if len(out) >= max(m, 0):
                break
            if recipe.to_json() in seen:
                continue
            seen.add(recipe.to_json())
            try:
                source = render(recipe, shape, ctx.reference)
            except (ValueError, KeyError) as exc:
                out.append(Implementation(error=f"cannot build this variant: {exc}"))
                continue
            self._made[(idea.text, len(out))] = recipe
            out.append(Implementation(source=source, usage=Usage(model="builtin")))
        return out

    def _recipes_for(self, idea: Idea, shape: ProblemShape, tolerance: float, base: Recipe) -> list[Recipe] | None:
        if idea.text in self._planned:  # settings it did not get to stay free for later ideas
            return self._planned.pop(idea.text)[1]
        if idea.text.startswith("Retune the "):  # a resumed search: the settings are in the text
            settings = tuning.parse_settings(idea.text.rsplit("; try ", 1)[-1])
            return [normalized(Recipe(base.core, {**base.params, **s}, dict(base.options))) for s in settings] or None
        spec = self._spec_for(idea, shape, tolerance)
        return None if spec is None else self._recipes(spec, shape, base)

    def _recipes(self, spec: IdeaSpec, shape: ProblemShape, parent: Recipe) -> list[Recipe]:
        """The idea's variants applied to the parent, without those that change nothing."""
        out, seen = [], {parent.to_json()}
        for variant in self._ordered_variants(spec, shape):
            recipe = apply_change(parent, spec.change, variant)
            if recipe.to_json() not in seen:
                seen.add(recipe.to_json())
                out.append(recipe)
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

    # --- what it remembers ------------------------------------------------------------------
    def _made_recipes(self) -> set[str]:
        return {r.to_json() for r in self._made.values()}

    def _measured(self, history: list[TriedIdea]) -> list[tuple[Recipe, float]]:
        """(recipe, milliseconds) of every correct kernel it wrote that the history shows timed."""
        out = []
        for tried in history:
            for index, outcome in enumerate(tried.outcomes):
                if outcome.get("status") != "correct" or not outcome.get("cand_ms"):
                    continue
                key = str(outcome.get("key") or "")
                j = int(key.rsplit("/k", 1)[1]) if "/k" in key and key.rsplit("/k", 1)[1].isdigit() else index
                recipe = self._made.get((tried.text, j))
                if recipe is not None:
                    out.append((recipe, float(outcome["cand_ms"])))
        return out


def _fixed_params(recipe: Recipe, shape: ProblemShape) -> dict:
    tunable = set(tuning.settings_of(recipe.core, recipe.params, shape))
    return {k: v for k, v in recipe.params.items() if k not in tunable}


def _same_family(data: dict, parent: Recipe, fixed: dict, shape: ProblemShape) -> bool:
    recipe = Recipe(data["core"], data["params"], data["options"])
    return recipe.core == parent.core and recipe.options == parent.options and _fixed_params(recipe, shape) == fixed


def _differs(a: Recipe, b: Recipe) -> bool:
    return a.core != b.core or a.options != b.options or a.params != b.params


def _combined(base: Recipe, other: Recipe, device: str) -> list[Recipe]:
    """`base` with the settings of `other` that mean something for base's computation; for two
    kernels of one core, one recipe per parameter group taken from `other`."""
    options = dict(base.options)
    for key, value in other.options.items():
        if key in options:
            continue
        if key == "cuda_graph" and device != "cuda":
            continue
        if key != "cuda_graph" and not families.family(base.core).framework_options:
            continue  # precision and layout switches do nothing for a hand-written kernel
        if key == "compile" and base.core != "reference":
            continue
        options[key] = value
    if base.core != other.core:
        return [normalized(Recipe(base.core, dict(base.params), options))]
    out = [normalized(Recipe(base.core, {**other.params, **base.params}, options))]
    for group, _ in tuning.groups(base.core):
        taken = {k: other.params[k] for k in group if k in other.params}
        out.append(normalized(Recipe(base.core, {**base.params, **taken}, options)))
    return out


def _combine_category(parent: Recipe, other: Recipe) -> str:
    gained = {k for k in other.options if k not in parent.options} | {k for k in parent.options if k not in other.options}
    for key, category in (("dtype", "precision"), ("tf32", "precision"), ("cuda_graph", "async"),
                          ("channels_last", "memory"), ("cudnn_benchmark", "compute")):
        if key in gained:
            return category
    return "compute"


def _stack_suffix(parent: Recipe, spec: IdeaSpec) -> str:
    """Names the seed an idea builds on, so the same idea on another seed is a new idea."""
    if parent.core == "reference" and not parent.options:
        return ""
    if spec.change.get("kind") == "core" and spec.change.get("core") != parent.core:
        kept = [label for key, label in option_labels(parent) if key == "cuda_graph"]
        keep = f", keeping its {kept[0]}" if kept else ""
        return f" (Instead of the seed kernel's {summarize(parent)}{keep}.)"
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
