"""What the OpenAI and Anthropic proposers share: prompts, retries, parsing and cost.

A subclass only sends one (system, user) exchange to its provider and turns the provider's
exceptions into TransientError (retried) or ProposerError (recorded on the node).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from search.engine.types import Idea, Implementation, Node, ProposalContext, ProposerError, Usage
from search.proposers import parsing, templates
from search.proposers.pricing import usage_of
from search.proposers.retry import with_retries


@dataclass
class Reply:
    """One model answer: its text, tokens, and why it stopped ("length" when cut off)."""

    text: str
    input_tokens: int = 0
    output_tokens: int = 0
    stop: str = ""
    refusal: str = ""


class ChatProposer:
    """Writes ideas and implementations with a chat model. Thread-safe: calls share no state."""

    name = "chat"
    max_parallel = 4  # the engine may run this many implement calls at once

    def __init__(self, model: str, *, tries: int = 4, backoff_s: float = 1.0, max_wait_s: float = 30.0,
                 sleep: Callable[[float], None] = time.sleep,
                 prices: dict[str, tuple[float, float]] | None = None) -> None:
        self.model = model
        self.tries = tries
        self.backoff_s = backoff_s
        self.max_wait_s = max_wait_s
        self.sleep = sleep
        self.prices = prices

    def send(self, system: str, user: str) -> Reply:
        """One exchange with the provider. Raises TransientError or ProposerError."""
        raise NotImplementedError

    def ask(self, user: str) -> tuple[Reply, Usage]:
        """Send a prompt with retries; the reply and what it cost."""
        reply = with_retries(lambda: self.send(templates.system_prompt(), user), tries=self.tries,
                             base_s=self.backoff_s, cap_s=self.max_wait_s, sleep=self.sleep)
        return reply, usage_of(self.model, reply.input_tokens, reply.output_tokens, self.prices)

    def propose_ideas(self, ctx: ProposalContext, k: int) -> tuple[list[Idea], Usage]:
        """k ideas from the model. Raises ProposerError (with `.usage` when tokens were spent)."""
        reply, usage = self.ask(templates.ideas_prompt(ctx, k))
        try:
            if reply.refusal:
                raise ProposerError(f"the model refused: {reply.refusal}")
            return parsing.parse_ideas(reply.text, k), usage
        except ProposerError as exc:
            exc.usage = usage  # the failed call still cost money
            raise

    def implement(self, ctx: ProposalContext, parent: Node, idea: Idea, m: int) -> list[Implementation]:
        """m independent answers; each failure becomes an Implementation with the reason."""
        prompt = templates.implement_prompt(ctx, parent, idea)
        return [self._one(prompt) for _ in range(m)]

    def _one(self, prompt: str) -> Implementation:
        try:
            reply, usage = self.ask(prompt)
        except ProposerError as exc:
            return Implementation(error=str(exc))
        if reply.refusal:
            return Implementation(error=f"the model refused: {reply.refusal}", usage=usage)
        try:
            return Implementation(source=parsing.extract_code(reply.text), usage=usage)
        except ProposerError as exc:
            cut = " (the answer was cut off at the token limit)" if reply.stop in ("length", "max_tokens") else ""
            return Implementation(error=f"{exc}{cut}", usage=usage)
