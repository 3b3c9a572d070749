"""Several models with weights, one drawn at random for each call (as OpenEvolve does)."""

from __future__ import annotations

import random
import re
import threading
from collections.abc import Iterable

from search.engine.types import Idea, Implementation, Node, ProposalContext, Proposer, Usage

MEMBER_PROVIDERS = ("openai", "anthropic", "builtin")
# Which provider serves a model named without one.
_INFERRED = (("openai", ("gpt-", "o1", "o3", "o4", "chatgpt", "codex")), ("anthropic", ("claude-",)))
_EXAMPLE = {"openai": "openai:gpt-5", "anthropic": "anthropic:claude-sonnet-4-5"}
_WEIGHT_AFTER_COLON = re.compile(r"^(.*):(\d+(?:\.\d*)?|\.\d+)$")


def parse_members(spec: str, endpoints: Iterable[str] = ()) -> list[tuple[str, str, float]]:
    """`"openai:gpt-5=0.7,anthropic:claude-sonnet-4-5=0.3"` -> [(provider, model, weight)].

    A member is `[provider:]model[=weight]`: the provider is openai, anthropic, builtin or one
    of `endpoints` (OpenAI-compatible servers named in the settings); gpt-/o-series and claude-
    models may leave it out; a provider alone means its default model; the weight defaults
    to 1. Raises ValueError naming the member and what is wrong with it.
    """
    providers = (*MEMBER_PROVIDERS, *endpoints)
    members = []
    for part in (p.strip() for p in (spec or "").split(",")):
        if not part:
            continue
        name, eq, weight_text = part.rpartition("=") if "=" in part else (part, "", "")
        name, weight = name.strip(), _weight(part, weight_text if eq else "")
        head, colon, tail = name.partition(":")
        if colon and head.strip() in providers:
            provider, model = head.strip(), tail.strip()
        elif colon and head.strip() in ("scripted",):
            raise ValueError(f"ensemble member {part!r}: the scripted proposer replays recordings in "
                             "tests and cannot be an ensemble member")
        elif name in providers:
            provider, model = name, ""
        else:
            provider, model = _inferred(part, name, providers), name
        if provider in ("openai", "anthropic") or provider in endpoints:
            colon_weight = _WEIGHT_AFTER_COLON.match(model)
            if colon_weight and not eq:
                raise ValueError(f"ensemble member {part!r}: write the weight after '=' "
                                 f"({provider}:{colon_weight.group(1)}={colon_weight.group(2)})")
        members.append((provider, model, weight))
    if not members:
        raise ValueError("the ensemble names no member; write provider:model=weight, separated by commas "
                         "(e.g. openai:gpt-5=0.7,anthropic:claude-sonnet-4-5=0.3)")
    if sum(w for *_, w in members) <= 0:
        raise ValueError(f"ensemble {spec!r} has no member with a positive weight")
    return members


def _inferred(part: str, name: str, providers: tuple[str, ...]) -> str:
    head = name.partition(":")[0].strip()
    if not head:
        raise ValueError(f"ensemble member {part!r} has no provider (expected provider:model=weight)")
    for provider, prefixes in _INFERRED:
        if name.startswith(prefixes):
            return provider
        if any(name == p.rstrip("-") for p in prefixes):
            raise ValueError(f"ensemble member {part!r}: {name!r} names no model; write "
                             f"{provider}:<model> (e.g. {_EXAMPLE[provider]}) or {provider} alone "
                             "for its default model")
    raise ValueError(f"ensemble member {part!r}: say which provider serves {name!r} "
                     f"({', '.join(p + ':' + name for p in providers if p != 'builtin')}); the providers "
                     f"are {', '.join(providers)}")


def _weight(part: str, text: str) -> float:
    if not text.strip():
        return 1.0
    try:
        weight = float(text)
    except ValueError:
        raise ValueError(f"ensemble member {part!r}: the weight {text.strip()!r} is not a number") from None
    if not 0 <= weight < float("inf"):
        raise ValueError(f"ensemble member {part!r} has a weight of {weight:g}; weights are 0 or more")
    return weight


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
