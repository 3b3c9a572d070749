"""What the OpenAI and Anthropic proposers share: prompts, retries, parsing, re-asking and cost.

A subclass only sends one conversation to its provider and turns the provider's exceptions into
TransientError (retried), ProviderRefused (the search stops) or ProposerError (on the node).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from search.engine.types import (
    Idea,
    Implementation,
    Node,
    ProposalContext,
    ProposerError,
    ProviderRefused,
    Usage,
)
from search.proposers import parsing, templates
from search.proposers.candidate_rules import reserved_names
from search.proposers.pricing import usage_of
from search.proposers.retry import with_retries

Messages = list[dict[str, str]]
T = TypeVar("T")
CUT_OFF = ("length", "max_tokens", "max_output_tokens")  # stop reasons of an answer cut short


@dataclass
class Reply:
    """One model answer: its text, its reasoning (when the server returns it apart), tokens,
    and why it stopped ("length" / "max_tokens" when cut off)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop: str = ""
    refusal: str = ""
    reasoning: str = ""

    @property
    def truncated(self) -> bool:
        return self.stop in CUT_OFF


class ChatProposer:
    """Writes ideas and implementations with a chat model. Thread-safe: calls share no state."""

    name = "chat"
    max_parallel = 4  # the engine may run this many implement calls at once

    def __init__(self, model: str, *, tries: int = 4, backoff_s: float = 1.0, max_wait_s: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep,
                 prices: dict[str, tuple[float, float]] | None = None,
                 max_output_tokens: int | None = None, timeout_s: float = 900.0) -> None:
        self.model = model
        self.tries = tries
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.prices = prices
        self.max_output_tokens = max_output_tokens
        self.timeout_s = timeout_s

    def send(self, system: str, messages: Messages) -> Reply:
        """One exchange with the provider. Raises TransientError, ProviderRefused or ProposerError."""
        raise NotImplementedError

    def ask(self, messages: Messages) -> tuple[Reply, Usage]:
        """Send a conversation with retries; the reply and what it cost."""
        reply = with_retries(lambda: self.send(templates.system_prompt(), messages), tries=self.tries,
                             base_s=self.backoff_s, cap_s=self.max_wait_s, sleep=self.sleep)
        return reply, usage_of(self.model, reply.input_tokens, reply.output_tokens, self.prices)

    def answer(self, prompt: str, read: Callable[[Reply], T]) -> tuple[T, Usage]:
        """Ask, read the reply with `read`; on a malformed answer ask once more, quoting the
        error. Raises ProposerError carrying `.usage` (failed calls still cost money)."""
        messages: Messages = [{"role": "user", "content": prompt}]
        total = Usage(self.model)
        for attempt in range(2):
            try:
                reply, usage = self.ask(messages)
            except ProposerError as exc:
                exc.usage = total
                raise
            total = total + usage
            try:
                return read(reply), total
            except parsing.AnswerError as exc:
                exc.usage = total
                if attempt or not exc.reask or not reply.text.strip():
                    raise
                messages = messages + [
                    {"role": "assistant", "content": reply.text},
                    {"role": "user", "content": templates.reask_prompt(str(exc))},
                ]
            except ProposerError as exc:
                exc.usage = total
                raise
        raise AssertionError("unreachable")

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """k ideas from the model. Raises ProposerError (with `.usage` when tokens were spent)."""
        return self.answer(templates.ideas_prompt(ctx, k),
                           lambda r: parsing.parse_ideas(_text(r), k, truncated=r.truncated))

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """m independent answers; each failure becomes an Implementation with the reason.
        ProviderRefused is raised: no later call would do better."""
        prompt = templates.implement_prompt(ctx, parent, idea)
        allowed = reserved_names(parent.source) if parent.kind == "kernel" else set()
        return [self._one(prompt, allowed) for _ in range(m)]

    def _one(self, prompt: str, allowed: set[str]) -> Implementation:
        try:
            source, usage = self.answer(prompt, lambda r: parsing.extract_code(
                _text(r), truncated=r.truncated, allowed=allowed))
        except ProviderRefused:
            raise
        except ProposerError as exc:
            return Implementation(error=str(exc), usage=getattr(exc, "usage", None) or Usage(self.model))
        return Implementation(source=source, usage=usage)


def _text(reply: Reply) -> str:
    """The reply's text, or ProposerError saying why there is none to read."""
    if reply.refusal:
        raise ProposerError(f"the model refused: {reply.refusal}")
    if reply.text.strip():
        return reply.text
    cut = (f", cut off at the output token limit after {reply.output_tokens} tokens: raise "
           "LLM_MAX_OUTPUT_TOKENS") if reply.truncated else ""
    if reply.reasoning.strip():
        raise ProposerError(f"the answer held only reasoning ({len(reply.reasoning)} characters of "
                            f"reasoning_content) and no final text{cut}")
    raise ProposerError(f"an empty answer ({reply.output_tokens} output tokens billed{cut})")
