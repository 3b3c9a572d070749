"""Proposers write optimization ideas and implement them as ModelNew candidates.

make_proposer picks one from a search's settings: builtin (offline), openai, anthropic,
ensemble, scripted.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from dataclasses import replace

from search.engine.types import Proposer, ProposerError, SearchConfig

PROPOSERS = ("builtin", "openai", "anthropic", "ensemble", "scripted")

# Each setting by its environment name, or the short name the web app's settings use.
_KEY_NAMES = {
    "OPENAI_API_KEY": "openai", "OPENAI_BASE_URL": "openai_base_url",
    "ANTHROPIC_API_KEY": "anthropic", "ANTHROPIC_BASE_URL": "anthropic_base_url",
}


def _key(keys: Mapping[str, str], name: str) -> str:
    return keys.get(name) or keys.get(_KEY_NAMES[name]) or ""


def _openai(model: str, keys: Mapping[str, str]) -> Proposer:
    from search.proposers.openai_proposer import OpenAIProposer

    base_url = _key(keys, "OPENAI_BASE_URL") or None
    api_key = _key(keys, "OPENAI_API_KEY")
    if not api_key and not base_url:
        raise ProposerError("OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)")
    # Local OpenAI-compatible servers (Ollama, vLLM) accept any key; the SDK insists on one.
    return OpenAIProposer(model, api_key=api_key or "unused", base_url=base_url)


def _anthropic(model: str, keys: Mapping[str, str]) -> Proposer:
    from search.proposers.anthropic_proposer import AnthropicProposer

    api_key = _key(keys, "ANTHROPIC_API_KEY")
    if not api_key:
        raise ProposerError("ANTHROPIC_API_KEY is not set")
    return AnthropicProposer(model, api_key=api_key, base_url=_key(keys, "ANTHROPIC_BASE_URL") or None)


def builtin_extra_ideas(model: str) -> list[str]:
    """For the built-in proposer, `model` names the catalogue ideas that are off by default to
    offer too, comma-separated (e.g. "torch_compile"). Raises ValueError for an unknown one."""
    from search.proposers.builtin.catalogue import load_catalogue

    wanted = [k.strip() for k in (model or "").split(",") if k.strip()]
    optional = sorted(spec.key for spec in load_catalogue() if not spec.default)
    unknown = [k for k in wanted if k not in optional]
    if unknown:
        raise ValueError(f"the built-in proposer has no optional idea {unknown[0]!r} "
                         f"(it offers: {', '.join(optional)})")
    return wanted


def make_proposer(config: SearchConfig, keys: Mapping[str, str], *, rng: random.Random | None = None) -> Proposer:
    """The proposer a search's settings ask for.

    `config.model` is the model name for openai/anthropic, the recorded file for scripted, and
    `provider:model=weight,...` for ensemble. Raises ProposerError when a key is missing and
    ValueError for an unknown proposer or a malformed ensemble. `keys` holds OPENAI_API_KEY,
    OPENAI_BASE_URL, ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL (or openai, openai_base_url, ...).
    """
    kind = config.proposer
    if kind == "builtin":
        from search.proposers.builtin import BuiltinProposer  # written separately; imported late

        return BuiltinProposer(device=config.device, extra_ideas=builtin_extra_ideas(config.model))
    if kind == "openai":
        return _openai(config.model, keys)
    if kind == "anthropic":
        return _anthropic(config.model, keys)
    if kind == "scripted":
        from search.proposers.scripted import ScriptedProposer

        if not config.model:
            raise ValueError("the scripted proposer needs the recorded file's path as its model")
        return ScriptedProposer(config.model)
    if kind == "ensemble":
        from search.proposers.ensemble import EnsembleProposer, parse_members

        factories = {"openai": _openai, "anthropic": _anthropic}
        members = []
        for provider, model, weight in parse_members(config.model):
            if provider in factories:
                member = factories[provider](model, keys)
            elif provider in ("builtin", "scripted"):
                member = make_proposer(replace(config, proposer=provider, model=model), keys)
            else:
                raise ValueError(f"unknown ensemble member {provider!r}; expected openai, anthropic, "
                                 "builtin or scripted")
            members.append((member, weight))
        return EnsembleProposer(members, rng=rng)
    raise ValueError(f"unknown proposer {kind!r}; expected one of {', '.join(PROPOSERS)}")
