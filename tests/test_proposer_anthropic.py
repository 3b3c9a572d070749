"""The real `anthropic` client against a local server replaying recorded Messages responses."""

from __future__ import annotations

import pytest

from search.engine.types import Idea, Node, ProposerError
from search.proposers.anthropic_proposer import AnthropicProposer
from tests.fakes.engine import kernel
from tests.fakes.llm_server import Canned, FakeLLMServer, anthropic_reply
from tests.fixtures.net import free_port
from tests.test_proposer_openai import IDEAS, ctx  # noqa: F401 - the shared context fixture

RATE_LIMITED = {"type": "error", "error": {"type": "rate_limit_error", "message": "Number of requests exceeded"}}
OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def proposer(server):
    return AnthropicProposer("claude-opus-4-5", api_key="sk-ant-test", base_url=server.url, timeout_s=5,
                             backoff_s=0.01, max_output_tokens=4096)


def parent():
    return Node(kind="reference", round=0, key="ref", source="class Model: ...")


def test_it_reads_ideas_and_records_tokens_and_cost(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, anthropic_reply(IDEAS, 2000, 300)))
    ideas, usage = proposer.propose_ideas(ctx, 2)
    assert [i.category for i in ideas] == ["memory", "parallelism"]
    assert (usage.input_tokens, usage.output_tokens) == (2000, 300)
    assert usage.cost_usd == pytest.approx((2000 * 5.0 + 300 * 25.0) / 1e6)
    body = server.seen[0].body
    assert server.seen[0].path == "/v1/messages"
    assert body["model"] == "claude-opus-4-5" and body["max_tokens"] == 4096
    assert "performance engineer" in body["system"]
    assert body["messages"][0]["role"] == "user" and "Task: propose 2" in body["messages"][0]["content"]


def test_it_waits_for_retry_after_then_retries_a_rate_limit(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(429, RATE_LIMITED, {"retry-after": "0.2"}), Canned(200, anthropic_reply(IDEAS)))
    ideas, _ = proposer.propose_ideas(ctx, 2)
    assert len(ideas) == 2 and len(server.seen) == 2
    assert server.gaps()[0] >= 0.2


def test_overloaded_and_server_errors_are_retried(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(529, OVERLOADED), Canned(500, {"type": "error", "error": {
        "type": "api_error", "message": "Internal server error"}}), Canned(200, anthropic_reply(IDEAS)))
    ideas, _ = proposer.propose_ideas(ctx, 2)
    assert len(ideas) == 2 and len(server.seen) == 3


def test_it_gives_up_after_a_bounded_number_of_tries(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(*[Canned(500, {"type": "error", "error": {"type": "api_error", "message": "down"}})] * 5)
    with pytest.raises(ProposerError, match="HTTP 500.*gave up after 4 tries"):
        proposer.propose_ideas(ctx, 2)
    assert len(server.seen) == 4


def test_a_malformed_json_body_is_a_failed_implementation(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, '{"type": "message", "content": [{"type": "text", "te'))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error.startswith("malformed response from the model server")


def test_a_response_without_code_twice_is_a_failed_implementation(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, anthropic_reply("You could fuse the two loops.", 800, 12)),
                           Canned(200, anthropic_reply("Fuse them, really.", 900, 5)))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error.startswith("no code in the answer: 'Fuse them, really.'")
    assert impl.usage.output_tokens == 17 and len(server.seen) == 2


def test_an_answer_cut_off_at_the_token_limit_says_so(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, anthropic_reply("```python\nimport torch\nclass Mo", stop_reason="max_tokens")))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error == ("the code was cut off at the output token limit before the file ended; "
                          "it was not run")
    assert len(server.seen) == 1  # asking again would be cut off again


def test_a_refusal_is_recorded_as_the_reason(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, anthropic_reply("I can't help with that.", stop_reason="refusal")))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error == "the model refused: I can't help with that."


def test_each_implementation_is_its_own_call(server, proposer, ctx):  # noqa: F811
    server.queue_anthropic(Canned(200, anthropic_reply(f"```python\n{kernel('a')}```")),
                           Canned(200, anthropic_reply(f"```python\n{kernel('b')}```")))
    impls = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 2)
    assert [i.source for i in impls] == [kernel("a"), kernel("b")]
    assert "Fuse." in server.seen[0].body["messages"][0]["content"]


def test_a_refused_connection_is_a_clear_failure(ctx):  # noqa: F811
    nowhere = AnthropicProposer("claude-opus-4-5", api_key="sk-ant-test", base_url=f"http://127.0.0.1:{free_port()}",
                                timeout_s=2, backoff_s=0, tries=2)
    with pytest.raises(ProposerError, match=r"could not reach the model server.*gave up after 2 tries"):
        nowhere.propose_ideas(ctx, 2)
    [impl] = nowhere.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.source == "" and impl.error.startswith("could not reach the model server: Connection error")
