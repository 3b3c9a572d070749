"""Ideas and kernels from an Anthropic model with the official `anthropic` SDK (Messages API)."""

from __future__ import annotations

from typing import Any

import anthropic

from search.engine.types import ProposerError
from search.proposers.chat import ChatProposer, Messages, Reply
from search.proposers.errors import translate

DEFAULT_MODEL = "claude-opus-4-5"
DEFAULT_MAX_TOKENS = 16000  # the Messages API needs a limit; every current model allows this


class AnthropicProposer(ChatProposer):
    """A ChatProposer over `anthropic.Anthropic(...).messages`, with extended thinking when a
    thinking budget is set."""

    name = "anthropic"

    def __init__(self, model: str = "", *, api_key: str, base_url: str | None = None,
                 timeout_s: float = 900.0, thinking_budget: int = 0, client: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(model or DEFAULT_MODEL, timeout_s=timeout_s, **kwargs)
        self.thinking_budget = thinking_budget
        # The answer must fit beside the thinking budget, which the limit includes.
        self.max_output_tokens = self.max_output_tokens or DEFAULT_MAX_TOKENS + thinking_budget
        # The SDK's own retries are off: ours honour Retry-After and are bounded the same way.
        self.client = client or anthropic.Anthropic(api_key=api_key, base_url=base_url or None,
                                                    max_retries=0, timeout=timeout_s)

    def send(self, system: str, messages: Messages) -> Reply:
        extra: dict[str, Any] = {}
        if self.thinking_budget:
            extra["thinking"] = {"type": "enabled", "budget_tokens": self.thinking_budget}
        try:
            response = self.client.messages.create(model=self.model, max_tokens=self.max_output_tokens,
                                                   system=system, messages=messages, **extra)
        except Exception as exc:  # the SDK's errors, sorted into retry / give up / stop
            raise translate(exc, anthropic, "Anthropic", self.timeout_s) from exc
        try:
            blocks = response.content
            text = "".join(getattr(b, "text", "") or "" for b in blocks if getattr(b, "type", "") == "text")
            thinking = "".join(getattr(b, "thinking", "") or "" for b in blocks
                               if getattr(b, "type", "") == "thinking")
            stop = response.stop_reason or ""
            return Reply(text=text, input_tokens=response.usage.input_tokens or 0,
                         output_tokens=response.usage.output_tokens or 0, stop=stop, reasoning=thinking,
                         refusal=(text or "the model declined to answer") if stop == "refusal" else "")
        except (AttributeError, TypeError) as exc:
            raise ProposerError(f"malformed response from the model server: {exc}") from exc
