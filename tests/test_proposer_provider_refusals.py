"""A bad key, no quota, no credit or an unknown model stops the search at the first call, with the
provider's own message: no retries, no more billed calls, no search that "finished"."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import ProviderRefused, SearchConfig
from search.proposers.anthropic_proposer import AnthropicProposer
from search.proposers.openai_proposer import OpenAIProposer
from tests.fakes.llm_server import Canned, FakeLLMServer, fixture, openai_reply
from tests.test_engine_branching import REFERENCE


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


def openai_proposer(server):
    return OpenAIProposer("gpt-5", api_key="sk-test", base_url=server.url + "/v1", timeout_s=5, backoff_s=0.01)


def anthropic_proposer(server):
    return AnthropicProposer("claude-opus-4-5", api_key="sk-ant-test", base_url=server.url, timeout_s=5,
                             backoff_s=0.01)


def searched(proposer):
    store = MemoryStore()
    with pytest.raises(ProviderRefused) as refused:
        run_search(REFERENCE, {}, SearchConfig(rounds=3, ideas_per_round=2, impls_per_idea=2), proposer,
                   lambda *a: [], store)
    return refused.value, store.nodes()


@pytest.mark.parametrize(("name", "message"), [
    ("openai_401_invalid_api_key", "OpenAI refused the request (HTTP 401): Incorrect API key provided: "
                                   "sk-proj-****************************abcd."),
    ("openai_429_insufficient_quota", "OpenAI refused the request (HTTP 429): You exceeded your current quota, "
                                      "please check your plan and billing details."),
    ("openai_404_model_not_found", "OpenAI refused the request (HTTP 404): The model `gpt-5.7` does not exist "
                                   "or you do not have access to it."),
])
def test_an_openai_account_error_stops_the_search_at_the_first_call(server, name, message):
    server.queue_openai(fixture(name))
    refused, nodes = searched(openai_proposer(server))
    assert str(refused).startswith(message)
    assert len(server.seen) == 1  # not retried: quota does not come back in a few seconds
    [idea] = [n for n in nodes if n.kind == "idea"]
    assert idea.status == "failed" and idea.error == str(refused)


@pytest.mark.parametrize(("name", "message"), [
    ("anthropic_400_credit_balance", "Anthropic refused the request (HTTP 400): Your credit balance is too low "
                                     "to access the Anthropic API."),
    ("anthropic_401_invalid_key", "Anthropic refused the request (HTTP 401): invalid x-api-key"),
    ("anthropic_404_unknown_model", "Anthropic refused the request (HTTP 404): model: claude-sonnet-5"),
])
def test_an_anthropic_account_error_stops_the_search_at_the_first_call(server, name, message):
    server.queue_anthropic(fixture(name))
    refused, _ = searched(anthropic_proposer(server))
    assert str(refused).startswith(message) and len(server.seen) == 1


def test_a_refusal_while_implementing_stops_the_search_after_recording_the_kernel(server):
    server.queue_openai(Canned(200, openai_reply('[{"idea": "Fuse.", "category": "memory"}]')),
                        fixture("openai_429_insufficient_quota"))
    proposer = openai_proposer(server)
    proposer.max_parallel = 1
    store = MemoryStore()
    with pytest.raises(ProviderRefused, match="exceeded your current quota"):
        run_search(REFERENCE, {}, SearchConfig(rounds=2, ideas_per_round=1, impls_per_idea=3), proposer,
                   lambda *a: [], store)
    [kernel] = [n for n in store.nodes() if n.kind == "kernel"]
    assert kernel.status == "failed" and "exceeded your current quota" in kernel.error
    assert len(server.seen) == 2


def test_an_ordinary_rate_limit_is_still_waited_out(server):
    server.queue_openai(fixture("openai_429_rate_limit"),
                        Canned(200, openai_reply('[{"idea": "Fuse.", "category": "memory"}]')))
    proposer = openai_proposer(server)
    ctx_store = MemoryStore()
    run_search(REFERENCE, {}, SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=1, max_candidates=1),
               proposer, lambda *a: [], ctx_store)
    ideas = [n for n in ctx_store.nodes() if n.kind == "idea"]
    assert ideas[0].idea == "Fuse." and server.gaps()[0] >= 0.05
