"""Several models with weights, one drawn at random for each call (as OpenEvolve does)."""

from __future__ import annotations

import random
import threading

from search.engine.types import Idea, Implementation, Node, ProposalContext, Proposer, Usage


def parse_members(spec: str) -> list[tuple[str, str, float]]:
    """`"openai:gpt-4.1=0.7,anthropic:claude-sonnet-4-5=0.3"` -> [(provider, model, weight)].

    A member without `=weight` weighs 1. Raises ValueError on an empty or malformed spec.
    """
    members = []
    for part in (p.strip() for p in spec.split(",")):
        if not part:
            continue
        name, _, weight = part.partition("=")
        provider, _, model = name.partition(":")
        if not provider.strip():
            raise ValueError(f"ensemble member {part!r} has no provider (expected provider:model=weight)")
        w = float(weight) if weight.strip() else 1.0
        if w < 0:
            raise ValueError(f"ensemble member {part!r} has a negative weight")
        members.append((provider.strip(), model.strip(), w))
    if not members or sum(w for *_, w in members) <= 0:
        raise ValueError(f"ensemble {spec!r} has no member with a positive weight")
    return members


class EnsembleProposer:
    """Draws one member per call, with probability proportional to its weight."""

    name = "ensemble"

    def __init__(self, members: list[tuple[Proposer, float]], rng: random.Random | None = None) -> None:
        if not members:
            raise ValueError("an ensemble needs at least one member")
        self.members = members
        self.rng = rng or random.Random()
        self._lock = threading.Lock()  # the engine may call implement from several threads
        self.max_parallel = min(int(getattr(p, "max_parallel", 1)) for p, _ in members)

    def pick(self) -> Proposer:
        with self._lock:
            return self.rng.choices([p for p, _ in self.members], weights=[w for _, w in self.members])[0]

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        return self.pick().propose_ideas(ctx, k)

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """Each of the m implementations comes from its own draw."""
        return [impl for _ in range(m) for impl in self.pick().implement(ctx, parent, idea, 1)]
