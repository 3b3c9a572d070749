"""Proposers write optimization ideas and implement them as ModelNew candidates.

make_proposer picks one from a search's settings: builtin (offline), openai, anthropic or
ensemble. validate_spec checks a proposer and model at submit; available_proposers says which
can run with the keys this server has. The scripted proposer (search.proposers.scripted)
replays recordings for tests: test code constructs it, no user setting can reach it.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from search.engine.types import Proposer, ProposerError, SearchConfig
from search.proposers.settings import ProviderSettings

PROPOSERS = ("builtin", "openai", "anthropic", "ensemble")
_NOT_A_CHOICE = {"scripted": "the scripted proposer replays recordings in tests and cannot be "
                             "chosen for a search"}


def _openai(model: str, settings: ProviderSettings, config: SearchConfig,
            base_url: str | None = None, api_key: str | None = None) -> Proposer:
    from search.proposers.openai_proposer import OpenAIProposer
    from search.proposers.pricing import prices_with

    base_url = base_url or settings.openai_base_url or None
    key = settings.openai_key if api_key is None else api_key
    if not key and not base_url:
        raise ProposerError("OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)")
    # Local OpenAI-compatible servers (Ollama, vLLM) accept any key; the SDK insists on one.
    return OpenAIProposer(model, api_key=key or "unused", base_url=base_url,
                          timeout_s=settings.openai_timeout_s, reasoning_effort=settings.reasoning_effort,
                          api=settings.openai_api, max_output_tokens=settings.max_output_tokens,
                          prices=prices_with(config.model_prices))


def _anthropic(model: str, settings: ProviderSettings, config: SearchConfig) -> Proposer:
    from search.proposers.anthropic_proposer import AnthropicProposer
    from search.proposers.pricing import prices_with

    if not settings.anthropic_key:
        raise ProposerError("ANTHROPIC_API_KEY is not set")
    return AnthropicProposer(model, api_key=settings.anthropic_key,
                             base_url=settings.anthropic_base_url or None,
                             timeout_s=settings.anthropic_timeout_s, thinking_budget=settings.thinking_budget,
                             max_output_tokens=settings.max_output_tokens,
                             prices=prices_with(config.model_prices))


def builtin_extra_ideas(model: str) -> list[str]:
    """For the built-in proposer, `model` names catalogue ideas to offer even when they are off by
    default, comma-separated (e.g. "torch_compile"); naming one that is on changes nothing.
    Raises ValueError for an unknown one."""
    from search.proposers.builtin.catalogue import load_catalogue

    wanted = [k.strip() for k in (model or "").split(",") if k.strip()]
    known = sorted(spec.key for spec in load_catalogue())
    unknown = [k for k in wanted if k not in known]
    if unknown:
        raise ValueError(f"the built-in proposer has no idea {unknown[0]!r} "
                         f"(it knows: {', '.join(known)})")
    return wanted


def _builtin(model: str, config: SearchConfig) -> Proposer:
    from search.proposers.builtin import BuiltinProposer  # written separately; imported late

    return BuiltinProposer(device=config.device, extra_ideas=builtin_extra_ideas(model))


def _member(provider: str, model: str, settings: ProviderSettings, config: SearchConfig) -> Proposer:
    if provider == "openai":
        return _openai(model, settings, config)
    if provider == "anthropic":
        return _anthropic(model, settings, config)
    if provider == "builtin":
        return _builtin(model, config)
    # An endpoint the operator named: an OpenAI-compatible server that needs no key of ours.
    return _openai(model, settings, config, base_url=settings.endpoints[provider], api_key="")


def make_proposer(config: SearchConfig, keys: Mapping[str, Any], *, rng: random.Random | None = None) -> Proposer:
    """The proposer a search's settings ask for.

    `config.model` is the model name for openai/anthropic, the optional ideas for builtin, and
    `provider:model=weight,...` for ensemble. `keys` holds the provider settings (see
    ProviderSettings.from_mapping). Raises ProposerError when a key is missing and ValueError
    for a proposer that cannot be chosen or a malformed ensemble.
    """
    kind = config.proposer
    if kind in _NOT_A_CHOICE:
        raise ValueError(_NOT_A_CHOICE[kind])
    settings = ProviderSettings.from_mapping(keys)
    if kind == "ensemble":
        from search.proposers.ensemble import EnsembleProposer, parse_members

        members = [(_member(provider, model, settings, config), weight)
                   for provider, model, weight in parse_members(config.model, settings.endpoints)]
        return EnsembleProposer(members, rng=rng)
    if kind in ("builtin", "openai", "anthropic"):
        return _member(kind, config.model, settings, config)
    raise ValueError(f"unknown proposer {kind!r}; expected one of {', '.join(PROPOSERS)}")


def models_of(proposer: str, model: str, endpoints: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """The (provider, model) pairs a setting calls, default models filled in. Raises ValueError."""
    from search.proposers.anthropic_proposer import DEFAULT_MODEL as ANTHROPIC_DEFAULT
    from search.proposers.openai_proposer import DEFAULT_MODEL as OPENAI_DEFAULT

    defaults = {"openai": OPENAI_DEFAULT, "anthropic": ANTHROPIC_DEFAULT}
    if proposer in _NOT_A_CHOICE:
        raise ValueError(_NOT_A_CHOICE[proposer])
    if proposer == "ensemble":
        from search.proposers.ensemble import parse_members

        pairs = [(p, m) for p, m, _ in parse_members(model, endpoints or {})]
    elif proposer in PROPOSERS:
        pairs = [(proposer, model)]
    else:
        raise ValueError(f"unknown proposer {proposer!r}; expected one of {', '.join(PROPOSERS)}")
    for provider, name in pairs:
        if provider == "builtin":
            builtin_extra_ideas(name)
    return [(p, m or defaults.get(p, "")) for p, m in pairs]


def validate_spec(proposer: str, model: str, *, keys: Mapping[str, Any] | None = None) -> list[str]:
    """What is wrong with a proposer and model as a search setting (empty when nothing): an
    unknown or test-only proposer, a malformed ensemble, an optional idea the built-in
    proposer lacks. With `keys`, also a provider whose key this server does not have."""
    try:
        settings = ProviderSettings.from_mapping(keys or {})
        pairs = models_of(proposer, model or "", settings.endpoints)
    except ValueError as exc:
        return [str(exc)]
    if keys is None:
        return []
    missing = {p for p, _ in pairs if p in ("openai", "anthropic") and _missing_key(p, settings)}
    return [_missing_key(p, settings) for p in sorted(missing)]


def _missing_key(provider: str, settings: ProviderSettings) -> str:
    if provider == "openai" and not (settings.openai_key or settings.openai_base_url):
        return "OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)"
    if provider == "anthropic" and not settings.anthropic_key:
        return "ANTHROPIC_API_KEY is not set"
    return ""


def available_proposers(keys: Mapping[str, Any]) -> list[tuple[str, bool, str]]:
    """Each proposer a user may choose, whether this server can run it, and why not."""
    settings = ProviderSettings.from_mapping(keys)
    rows = []
    for name in PROPOSERS:
        reason = _missing_key(name, settings) if name in ("openai", "anthropic") else ""
        if name == "ensemble" and _missing_key("openai", settings) and _missing_key("anthropic", settings) \
                and not settings.endpoints:
            reason = "no model provider is configured (OPENAI_API_KEY, ANTHROPIC_API_KEY or LLM_ENDPOINTS)"
        rows.append((name, not reason, reason))
    return rows


def unpriced_models(proposer: str, model: str, prices: Mapping[str, Any] | None = None,
                    endpoints: Mapping[str, str] | None = None) -> list[str]:
    """The models a setting calls that have no price (their calls would count as $0)."""
    from search.proposers.pricing import price_of, prices_with

    table = prices_with(prices)
    try:
        pairs = models_of(proposer, model, endpoints)
    except ValueError:
        return []
    return [m for p, m in pairs if p != "builtin" and price_of(m, table) is None]


__all__ = ["PROPOSERS", "available_proposers", "builtin_extra_ideas", "make_proposer", "models_of",
           "unpriced_models", "validate_spec"]
