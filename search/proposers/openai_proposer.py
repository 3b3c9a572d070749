"""Ideas and kernels from an OpenAI model, or any OpenAI-compatible server (vLLM, Ollama, a
gateway) through base_url, with the official `openai` SDK's Chat Completions API."""

from __future__ import annotations

from typing import Any

import openai

from search.engine.types import ProposerError
from search.proposers.chat import ChatProposer, Reply
from search.proposers.retry import TransientError, retry_after

DEFAULT_MODEL = "gpt-4.1"
RETRY_STATUSES = {408, 409, 429}  # and every 5xx


def translate(exc: Exception) -> Exception:
    """An SDK exception as TransientError (retry) or ProposerError (give up), with a reason."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, openai.APIStatusError) and status is not None:
        headers = exc.response.headers if exc.response is not None else None
        reason = f"HTTP {status} from the model server: {getattr(exc, 'message', '') or exc}"
        if status in RETRY_STATUSES or status >= 500:
            return TransientError(reason, retry_after(headers))
        return ProposerError(reason)
    if isinstance(exc, openai.APITimeoutError):
        return TransientError("the model server timed out")
    if isinstance(exc, openai.APIConnectionError):
        return TransientError(f"could not reach the model server: {exc}")
    return ProposerError(f"malformed response from the model server: {type(exc).__name__}: {exc}")


class OpenAIProposer(ChatProposer):
    """A ChatProposer over `openai.OpenAI(...).chat.completions`."""

    name = "openai"

    def __init__(self, model: str = "", *, api_key: str, base_url: str | None = None,
                 timeout_s: float = 300.0, client: Any = None, **kwargs: Any) -> None:
        super().__init__(model or DEFAULT_MODEL, **kwargs)
        # The SDK's own retries are off: ours honour Retry-After and are bounded the same way.
        self.client = client or openai.OpenAI(api_key=api_key, base_url=base_url or None,
                                              max_retries=0, timeout=timeout_s)

    def send(self, system: str, user: str) -> Reply:
        try:
            response = self.client.chat.completions.create(
                model=self.model,
                messages=[{"role": "system", "content": system}, {"role": "user", "content": user}],
            )
        except Exception as exc:  # the SDK's errors, sorted into retry / give up
            raise translate(exc) from exc
        try:
            choice = response.choices[0]
            usage = response.usage
            return Reply(text=choice.message.content or "",
                         input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
                         output_tokens=getattr(usage, "completion_tokens", 0) or 0,
                         stop=choice.finish_reason or "",
                         refusal=getattr(choice.message, "refusal", None) or "")
        except (AttributeError, IndexError, TypeError) as exc:
            raise ProposerError(f"malformed response from the model server: {exc}") from exc
