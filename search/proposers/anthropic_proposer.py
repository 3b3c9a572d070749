"""Ideas and kernels from an Anthropic model with the official `anthropic` SDK (Messages API)."""

from __future__ import annotations

from typing import Any

import anthropic

from search.engine.types import ProposerError
from search.proposers.chat import ChatProposer, Reply
from search.proposers.retry import TransientError, retry_after

DEFAULT_MODEL = "claude-opus-4-5"
RETRY_STATUSES = {408, 409, 429, 529}  # and every 5xx; 529 is "overloaded"


def translate(exc: Exception) -> Exception:
    """An SDK exception as TransientError (retry) or ProposerError (give up), with a reason."""
    status = getattr(exc, "status_code", None)
    if isinstance(exc, anthropic.APIStatusError) and status is not None:
        headers = exc.response.headers if exc.response is not None else None
        reason = f"HTTP {status} from the model server: {getattr(exc, 'message', '') or exc}"
        if status in RETRY_STATUSES or status >= 500:
            return TransientError(reason, retry_after(headers))
        return ProposerError(reason)
    if isinstance(exc, anthropic.APITimeoutError):
        return TransientError("the model server timed out")
    if isinstance(exc, anthropic.APIConnectionError):
        return TransientError(f"could not reach the model server: {exc}")
    return ProposerError(f"malformed response from the model server: {type(exc).__name__}: {exc}")


class AnthropicProposer(ChatProposer):
    """A ChatProposer over `anthropic.Anthropic(...).messages`."""

    name = "anthropic"

    def __init__(self, model: str = "", *, api_key: str, base_url: str | None = None,
                 timeout_s: float = 300.0, max_tokens: int = 16000, client: Any = None,
                 **kwargs: Any) -> None:
        super().__init__(model or DEFAULT_MODEL, **kwargs)
        self.max_tokens = max_tokens
        # The SDK's own retries are off: ours honour Retry-After and are bounded the same way.
        self.client = client or anthropic.Anthropic(api_key=api_key, base_url=base_url or None,
                                                    max_retries=0, timeout=timeout_s)

    def send(self, system: str, user: str) -> Reply:
        try:
            response = self.client.messages.create(
                model=self.model, max_tokens=self.max_tokens, system=system,
                messages=[{"role": "user", "content": user}],
            )
        except Exception as exc:  # the SDK's errors, sorted into retry / give up
            raise translate(exc) from exc
        try:
            text = "".join(getattr(block, "text", "") or "" for block in response.content
                           if getattr(block, "type", "") == "text")
            stop = response.stop_reason or ""
            return Reply(text=text, input_tokens=response.usage.input_tokens or 0,
                         output_tokens=response.usage.output_tokens or 0, stop=stop,
                         refusal=(text or "the model declined to answer") if stop == "refusal" else "")
        except (AttributeError, TypeError) as exc:
            raise ProposerError(f"malformed response from the model server: {exc}") from exc
