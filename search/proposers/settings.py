"""How to reach the model providers: keys, endpoints, timeouts and output limits, read from the
web app's settings (or the environment names) once, then handed to the proposers."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

# Each setting by its environment name and the short name provider_keys() uses.
_NAMES = {
    "openai_key": ("OPENAI_API_KEY", "openai"),
    "openai_base_url": ("OPENAI_BASE_URL", "openai_base_url"),
    "anthropic_key": ("ANTHROPIC_API_KEY", "anthropic"),
    "anthropic_base_url": ("ANTHROPIC_BASE_URL", "anthropic_base_url"),
    "openai_timeout_s": ("OPENAI_TIMEOUT_S", "openai_timeout_s"),
    "anthropic_timeout_s": ("ANTHROPIC_TIMEOUT_S", "anthropic_timeout_s"),
    "max_output_tokens": ("LLM_MAX_OUTPUT_TOKENS", "max_output_tokens"),
    "reasoning_effort": ("OPENAI_REASONING_EFFORT", "reasoning_effort"),
    "thinking_budget": ("ANTHROPIC_THINKING_BUDGET", "thinking_budget"),
    "openai_api": ("OPENAI_API", "openai_api"),
    "endpoints": ("LLM_ENDPOINTS", "endpoints"),
}
REASONING_EFFORTS = ("minimal", "low", "medium", "high")


@dataclass
class ProviderSettings:
    """Everything a model-backed proposer needs besides the model's name."""

    openai_key: str = ""
    openai_base_url: str = ""
    anthropic_key: str = ""
    anthropic_base_url: str = ""
    openai_timeout_s: float = 900.0  # reasoning models think for minutes
    anthropic_timeout_s: float = 900.0
    max_output_tokens: int | None = None  # None: the provider's default
    reasoning_effort: str = ""  # OpenAI reasoning models: minimal | low | medium | high
    thinking_budget: int = 0  # Anthropic extended thinking, in tokens; 0 is off
    openai_api: str = "auto"  # chat | responses | auto (Responses for the models only it serves)
    # OpenAI-compatible servers an ensemble member may name as its provider: {name: base URL}.
    endpoints: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_mapping(cls, keys: Mapping[str, Any]) -> ProviderSettings:
        """From a mapping holding the environment names (OPENAI_API_KEY, ...) or the short ones
        (openai, openai_base_url, ...). Raises ValueError for a malformed value, naming it."""
        values: dict[str, Any] = {}
        for attr, names in _NAMES.items():
            value = next((keys[n] for n in names if keys.get(n) not in (None, "")), None)
            if value is not None:
                values[attr] = _convert(attr, names[0], value)
        return cls(**values)


def _number(kind: type, allow_zero: bool = False) -> Any:
    def convert(env: str, value: Any) -> Any:
        try:
            number = kind(value)
        except (TypeError, ValueError):
            raise ValueError(f"{env} must be a number, not {value!r}") from None
        if number < 0 or (number == 0 and not allow_zero):
            raise ValueError(f"{env} must be above 0, not {value!r}")
        return number
    return convert


def _choice(allowed: tuple[str, ...], wording: str) -> Any:
    def convert(env: str, value: Any) -> str:
        text = str(value).strip()
        if text not in allowed:
            raise ValueError(f"{env} must be {wording}, not {text!r}")
        return text
    return convert


_CONVERT = {
    "openai_timeout_s": _number(float), "anthropic_timeout_s": _number(float),
    "max_output_tokens": _number(int), "thinking_budget": _number(int, allow_zero=True),
    "reasoning_effort": _choice(REASONING_EFFORTS, "one of " + ", ".join(REASONING_EFFORTS)),
    "openai_api": _choice(("chat", "responses", "auto"), "chat, responses or auto"),
    "endpoints": lambda env, value: value if isinstance(value, dict) else parse_endpoints(str(value)),
}


def _convert(attr: str, env: str, value: Any) -> Any:
    convert = _CONVERT.get(attr)
    return convert(env, value) if convert else str(value)


def parse_endpoints(text: str) -> dict[str, str]:
    """`"local=http://127.0.0.1:8000/v1,vllm=http://gpu2:8000/v1"` -> {name: base URL}."""
    endpoints = {}
    for part in (p.strip() for p in text.split(",") if p.strip()):
        name, eq, url = part.partition("=")
        if not eq or not name.strip().isidentifier() or not url.strip().startswith(("http://", "https://")):
            raise ValueError(f"LLM_ENDPOINTS entry {part!r} must read name=http(s)://host/v1")
        endpoints[name.strip()] = url.strip()
    return endpoints
