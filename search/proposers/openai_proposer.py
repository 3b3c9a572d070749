"""Ideas and kernels from an OpenAI model, or any OpenAI-compatible server (vLLM, Ollama, a
gateway) through base_url, with the official `openai` SDK: Chat Completions, or the Responses
API for the models only it serves (gpt-5-pro, o3-pro, ...)."""

from __future__ import annotations

from typing import Any

import openai

from search.engine.types import ProposerError
from search.proposers.chat import ChatProposer, Messages, Reply
from search.proposers.errors import translate

DEFAULT_MODEL = "gpt-5"
# Models OpenAI serves only through the Responses API.
RESPONSES_ONLY = ("gpt-5-pro", "gpt-5-codex", "o3-pro", "o1-pro", "codex-mini", "o3-deep-research",
                  "o4-mini-deep-research")


def uses_responses(model: str, api: str = "auto") -> bool:
    """Whether calls go through the Responses API: asked for, or the model has no other."""
    if api in ("chat", "responses"):
        return api == "responses"
    return model.split("/")[-1].startswith(RESPONSES_ONLY)


class OpenAIProposer(ChatProposer):
    """A ChatProposer over `openai.OpenAI(...)`: chat.completions or responses."""

    name = "openai"

    def __init__(self, model: str = "", *, api_key: str, base_url: str | None = None,
                 timeout_s: float = 900.0, reasoning_effort: str = "", api: str = "auto",
                 client: Any = None, **kwargs: Any) -> None:
        super().__init__(model or DEFAULT_MODEL, timeout_s=timeout_s, **kwargs)
        self.reasoning_effort = reasoning_effort
        self.responses = uses_responses(self.model, api)
        # The SDK's own retries are off: ours honour Retry-After and are bounded the same way.
        self.client = client or openai.OpenAI(api_key=api_key, base_url=base_url or None,
                                              max_retries=0, timeout=timeout_s)

    def send(self, system: str, messages: Messages) -> Reply:
        try:
            if self.responses:
                return self._responses(system, messages)
            return self._chat(system, messages)
        except (AttributeError, IndexError, TypeError) as exc:
            raise ProposerError(f"malformed response from the model server: {exc}") from exc

    def _chat(self, system: str, messages: Messages) -> Reply:
        extra: dict[str, Any] = {}
        if self.max_output_tokens:  # unset: the model's own maximum (gpt-4o refuses more than 16k)
            extra["max_completion_tokens"] = self.max_output_tokens
        if self.reasoning_effort:
            extra["reasoning_effort"] = self.reasoning_effort
        try:
            response = self.client.chat.completions.create(
                model=self.model, messages=[{"role": "system", "content": system}, *messages], **extra)
        except Exception as exc:  # the SDK's errors, sorted into retry / give up / stop
            raise translate(exc, openai, "OpenAI", self.timeout_s) from exc
        choice = response.choices[0]
        usage = response.usage
        message = choice.message
        # vLLM, DeepSeek and Ollama return a reasoning model's thoughts apart from its answer.
        reasoning = getattr(message, "reasoning_content", None) or getattr(message, "reasoning", None)
        return Reply(text=message.content or "",
                     input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                     output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                     stop=choice.finish_reason or "",
                     refusal=getattr(message, "refusal", None) or "",
                     reasoning=reasoning if isinstance(reasoning, str) else "")

    def _responses(self, system: str, messages: Messages) -> Reply:
        extra: dict[str, Any] = {}
        if self.max_output_tokens:
            extra["max_output_tokens"] = self.max_output_tokens
        if self.reasoning_effort:
            extra["reasoning"] = {"effort": self.reasoning_effort}
        try:
            response = self.client.responses.create(model=self.model, instructions=system,
                                                    input=messages, **extra)
        except Exception as exc:
            raise translate(exc, openai, "OpenAI", self.timeout_s) from exc
        refusal = "".join(getattr(part, "refusal", "") or "" for item in response.output or []
                          for part in getattr(item, "content", None) or []
                          if getattr(part, "type", "") == "refusal")
        incomplete = getattr(response.incomplete_details, "reason", "") if response.incomplete_details else ""
        usage = response.usage
        return Reply(text=response.output_text or "", refusal=refusal,
                     input_tokens=getattr(usage, "input_tokens", 0) or 0,
                     output_tokens=getattr(usage, "output_tokens", 0) or 0,
                     stop=incomplete or response.status or "")
