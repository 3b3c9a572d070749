"""The real `openai` client against a local server replaying recorded Chat Completions responses."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import Idea, Node, ProposerError, SearchConfig
from search.proposers.openai_proposer import OpenAIProposer
from search.proposers.scripted import ScriptedProposer
from tests.fakes.engine import FakeEvaluator, kernel, two_round_script
from tests.fakes.llm_server import Canned, FakeLLMServer, openai_reply
from tests.fixtures.net import free_port
from tests.test_engine_branching import REFERENCE

IDEAS = """Here are my ideas:
```json
[
  {"idea": "Fuse max, exp and sum into one pass per row.", "category": "memory"},
  {"idea": "Use one warp per row.", "category": "Parallelism and occupancy"},
]
```"""


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


@pytest.fixture
def proposer(server):
    return OpenAIProposer("gpt-4.1", api_key="sk-test", base_url=server.url + "/v1", timeout_s=5,
                          backoff_s=0.01)


@pytest.fixture
def ctx():
    store, scripted = MemoryStore(), ScriptedProposer(two_round_script())
    run_search(REFERENCE, {}, SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=1), scripted,
               FakeEvaluator(), store)
    return scripted.last_context


def parent():
    return Node(kind="reference", round=0, key="ref", source=REFERENCE)


def test_it_reads_ideas_and_records_tokens_and_cost(server, proposer, ctx):
    server.queue_openai(Canned(200, openai_reply(IDEAS, prompt_tokens=1200, completion_tokens=300)))
    ideas, usage = proposer.propose_ideas(ctx, 2)
    assert ideas == [Idea("Fuse max, exp and sum into one pass per row.", "memory"),
                     Idea("Use one warp per row.", "parallelism")]
    assert (usage.model, usage.input_tokens, usage.output_tokens) == ("gpt-4.1", 1200, 300)
    assert usage.cost_usd == pytest.approx((1200 * 2.0 + 300 * 8.0) / 1e6)
    request = server.seen[0]
    assert request.path == "/v1/chat/completions" and request.body["model"] == "gpt-4.1"
    assert [m["role"] for m in request.body["messages"]] == ["system", "user"]
    assert "Task: propose 2 optimization ideas" in request.body["messages"][1]["content"]


def test_it_waits_for_retry_after_then_retries_a_rate_limit(server, proposer, ctx):
    server.queue_openai(Canned(429, {"error": {"message": "Rate limit reached"}}, {"retry-after": "0.2"}),
                        Canned(200, openai_reply(IDEAS)))
    ideas, _ = proposer.propose_ideas(ctx, 2)
    assert len(ideas) == 2 and len(server.seen) == 2
    assert server.gaps()[0] >= 0.2


def test_a_server_error_is_retried(server, proposer, ctx):
    server.queue_openai(Canned(500, {"error": {"message": "internal"}}), Canned(200, openai_reply(IDEAS)))
    ideas, _ = proposer.propose_ideas(ctx, 2)
    assert len(ideas) == 2 and len(server.seen) == 2


def test_it_gives_up_after_a_bounded_number_of_tries(server, proposer, ctx):
    server.queue_openai(*[Canned(429, {"error": {"message": "slow down"}}, {"retry-after": "0.01"})] * 6)
    with pytest.raises(ProposerError, match="HTTP 429.*gave up after 4 tries"):
        proposer.propose_ideas(ctx, 2)
    assert len(server.seen) == 4


def test_a_rejected_key_is_not_retried(server, proposer, ctx):
    server.queue_openai(Canned(401, {"error": {"message": "Incorrect API key provided"}}))
    with pytest.raises(ProposerError, match="HTTP 401"):
        proposer.propose_ideas(ctx, 2)
    assert len(server.seen) == 1


def test_a_malformed_json_body_is_a_failed_implementation(server, proposer, ctx):
    server.queue_openai(Canned(200, '{"id": "chatcmpl-1", "choices": [{"message": '))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.source == "" and impl.error.startswith("malformed response from the model server")


def test_an_answer_without_ideas_twice_fails_the_ideas_call_but_keeps_its_cost(server, proposer, ctx):
    server.queue_openai(Canned(200, openai_reply("Sure, happy to help with that.", 900, 40)),
                        Canned(200, openai_reply("Fusing is good.", 1000, 10)))
    with pytest.raises(ProposerError, match="malformed answer: no JSON list of ideas in 'Fusing") as failure:
        proposer.propose_ideas(ctx, 2)
    assert failure.value.usage.input_tokens == 1900 and failure.value.usage.output_tokens == 50


def test_a_response_without_code_twice_is_a_failed_implementation(server, proposer, ctx):
    server.queue_openai(Canned(200, openai_reply("I think you should fuse the kernels.", 500, 20)),
                        Canned(200, openai_reply("I think you should fuse the kernels.", 600, 20)))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error.startswith("no code in the answer: 'I think you should fuse")
    assert impl.usage.input_tokens == 1100


def test_code_comes_from_the_fenced_block(server, proposer, ctx):
    answer = f"Here is the kernel:\n```python\n{kernel('k', 0.5)}```\nIt fuses the passes."
    server.queue_openai(Canned(200, openai_reply(answer)))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error == "" and impl.source == kernel("k", 0.5)


def test_a_refusal_is_recorded_as_the_reason(server, proposer, ctx):
    server.queue_openai(Canned(200, openai_reply("", refusal=None) | {"choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": None, "refusal": "I can't help with that."}}]}))
    [impl] = proposer.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error == "the model refused: I can't help with that."


def test_a_timeout_is_recorded_and_not_asked_again(server, ctx):
    slow = OpenAIProposer("gpt-4.1", api_key="sk-test", base_url=server.url + "/v1", timeout_s=0.2,
                          backoff_s=0.01, tries=2)
    server.queue_openai(Canned(200, openai_reply(IDEAS), delay_s=1.0), Canned(200, openai_reply(IDEAS), delay_s=1.0))
    [impl] = slow.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.error == ("OpenAI did not answer within 0.2 s; not retried, since an abandoned request may "
                          "still be billed (raise OPENAI_TIMEOUT_S for slow reasoning models)")
    assert len(server.seen) == 1


def test_a_refused_connection_is_a_clear_failure(ctx):
    nowhere = OpenAIProposer("gpt-4.1", api_key="sk-test", base_url=f"http://127.0.0.1:{free_port()}/v1",
                             timeout_s=2, backoff_s=0, tries=2)
    with pytest.raises(ProposerError, match=r"could not reach the model server.*gave up after 2 tries"):
        nowhere.propose_ideas(ctx, 2)
    [impl] = nowhere.implement(ctx, parent(), Idea("Fuse.", "memory"), 1)
    assert impl.source == "" and impl.error.startswith("could not reach the model server: Connection error")


def test_a_search_records_model_failures_on_nodes_and_finishes(server, proposer):
    proposer.max_parallel = 1  # answers are queued in call order
    server.queue_openai(
        Canned(200, openai_reply(IDEAS, 1000, 100)),
        Canned(429, {"error": {"message": "slow down"}}, {"retry-after": "0.05"}),
        Canned(200, openai_reply(f"```python\n{kernel('k', 0.5)}```", 2000, 400)),
        Canned(200, openai_reply("Sorry, I cannot write that kernel.", 2000, 10)),
        Canned(200, openai_reply("Still no.", 2000, 10)),
    )
    config = SearchConfig(proposer="openai", rounds=1, ideas_per_round=2, impls_per_idea=1)
    store = MemoryStore()
    outcome = run_search(REFERENCE, {}, config, proposer, FakeEvaluator(), store)
    kernels = {n.key: n for n in store.nodes() if n.kind == "kernel"}
    assert kernels["r1/ref/i0/k0"].status == "correct" and kernels["r1/ref/i0/k0"].usage.input_tokens == 2000
    assert kernels["r1/ref/i1/k0"].status == "failed"
    assert "no code in the answer" in kernels["r1/ref/i1/k0"].error
    assert outcome.stop_reason == "completed" and outcome.best.key == "r1/ref/i0/k0"
    assert outcome.usage.input_tokens == 7000
    assert outcome.usage.cost_usd == pytest.approx((7000 * 2.0 + 520 * 8.0) / 1e6)
