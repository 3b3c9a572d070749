"""The answers current models really give, through the official SDKs against the local fake
server, each recorded in tests/fixtures/llm/: what ends up on the search's nodes and why."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import ProposalContext, SearchConfig
from search.proposers.anthropic_proposer import AnthropicProposer
from search.proposers.openai_proposer import OpenAIProposer
from tests.fakes.llm_server import Canned, FakeLLMServer, anthropic_reply, fixture, openai_reply
from tests.test_engine_branching import REFERENCE

ONE_IDEA = '[{"idea": "Call the fused softmax.", "category": "memory"}]'


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


def openai_proposer(server, model="gpt-5", **kwargs):
    return OpenAIProposer(model, api_key="sk-test", base_url=server.url + "/v1", timeout_s=5, backoff_s=0.01,
                          **kwargs)


def anthropic_proposer(server):
    return AnthropicProposer("claude-opus-4-5", api_key="sk-ant-test", base_url=server.url, timeout_s=5,
                             backoff_s=0.01)


def correct(reference, sources, config):
    """Every candidate correct at 0.5 ms: these tests are about what reaches the runner."""
    return [{"verdict": "correct", "reason": "", "checks": [], "backend": "torch", "ref_ms": 1.0,
             "cand_ms": 0.5, "speedup": 2.0} for _ in sources]


def search(proposer, ideas=1):
    store = MemoryStore()
    run_search(REFERENCE, {}, SearchConfig(rounds=1, ideas_per_round=ideas, impls_per_idea=1), proposer,
               correct, store)
    return [n for n in store.nodes() if n.kind == "idea"], [n for n in store.nodes() if n.kind == "kernel"]


def ideas_of(proposer, k):
    ctx = ProposalContext(reference=REFERENCE, reference_info={}, seeds=[], history=[], round=1, device="cpu",
                          tolerance=1e-2, policy="any", unexplored_categories=[])
    return proposer.propose_ideas(ctx, k)[0]


def user_turns(seen):
    return [m["content"] for m in seen.body.get("messages", seen.body.get("input", [])) if m["role"] == "user"]


def test_a_numbered_markdown_list_of_ideas_is_read_with_its_categories(server):
    server.queue_openai(fixture("openai_ideas_numbered_list"))
    ideas = ideas_of(openai_proposer(server), 3)
    assert [(i.text.split(":")[0], i.category) for i in ideas] == [
        ("Fuse the passes", "memory"), ("One thread per row", "parallelism"),
        ("Use exp2 with a pre-scaled input", "compute")]
    assert "each row is read once" in ideas[0].text and "**" not in ideas[0].text


def test_json_after_prose_with_brackets_is_found(server):
    server.queue_openai(fixture("openai_ideas_json_after_prose"))
    ideas = ideas_of(openai_proposer(server), 2)
    assert [i.text for i in ideas] == ["Fuse max, exp and sum into one online-softmax pass per row.",
                                       "Process rows in parallel with OpenMP, one row per thread."]
    assert len(server.seen) == 1


def test_objects_keyed_title_and_rationale_become_ideas(server):
    server.queue_anthropic(fixture("anthropic_ideas_title_rationale"))
    ideas = ideas_of(anthropic_proposer(server), 2)
    assert ideas[0].text == "Online softmax: Track the running max and sum in one pass, halving memory traffic."
    assert [i.category for i in ideas] == ["memory", "compute"]


def test_ideas_cut_off_at_the_token_limit_are_asked_again_quoting_why(server):
    server.queue_openai(fixture("openai_ideas_cut_off"), Canned(200, openai_reply(ONE_IDEA)))
    ideas, _ = search(openai_proposer(server))
    assert [i.idea for i in ideas] == ["Call the fused softmax."]
    [first_ask, again] = [user_turns(s) for s in server.seen[:1]] + [user_turns(server.seen[1])]
    assert len(first_ask) == 1 and len(again) == 2
    assert again[1].startswith("Your answer above could not be used: malformed answer: no JSON list of ideas "
                               "(the answer was cut off at the output token limit)")
    assert server.seen[1].body["messages"][2]["role"] == "assistant"  # its own answer, shown back


def test_ideas_unreadable_twice_fail_the_idea_node_with_the_reason_and_its_cost(server):
    server.queue_openai(Canned(200, openai_reply("I'd be glad to help optimize this!", 1500, 9)),
                        Canned(200, openai_reply("Sure thing.", 1600, 3)))
    [idea], kernels = search(openai_proposer(server))
    assert idea.status == "failed" and kernels == []
    assert idea.error == "malformed answer: no JSON list of ideas in 'Sure thing.'"
    assert idea.usage.input_tokens == 3100


def test_a_python3_fence_is_the_candidate(server):
    server.queue_openai(Canned(200, openai_reply(ONE_IDEA)), fixture("openai_code_python3_fence"))
    _, [kernel] = search(openai_proposer(server))
    assert kernel.status == "correct"
    assert kernel.source.startswith("import torch\n") and "torch.softmax(x, dim=-1)" in kernel.source
    assert "This should be faster" not in kernel.source


def test_a_draft_inside_think_tags_is_ignored(server):
    server.queue_openai(Canned(200, openai_reply(ONE_IDEA)), fixture("vllm_qwen3_code_after_think"))
    _, [kernel] = search(openai_proposer(server, model="Qwen/Qwen3-32B", api="chat"))
    assert kernel.status == "correct" and "TODO" not in kernel.source
    assert "torch.softmax(x, dim=-1)" in kernel.source


def test_anthropic_thinking_blocks_are_not_the_answer(server):
    server.queue_anthropic(Canned(200, anthropic_reply(ONE_IDEA)), fixture("anthropic_code_with_thinking"))
    _, [kernel] = search(anthropic_proposer(server))
    assert kernel.status == "correct" and "TODO" not in kernel.source


def test_code_cut_off_at_the_token_limit_is_never_run(server):
    server.queue_openai(Canned(200, openai_reply(ONE_IDEA)), fixture("openai_code_cut_off"))
    _, [kernel] = search(openai_proposer(server))
    assert kernel.status == "failed" and not kernel.verdict
    assert kernel.error == "the code was cut off at the output token limit before the file ended; it was not run"
    assert kernel.usage.output_tokens == 16384 and len(server.seen) == 2


def test_an_answer_only_in_reasoning_content_is_explained(server):
    server.queue_openai(Canned(200, openai_reply(ONE_IDEA)), fixture("deepseek_reasoning_content_only"))
    _, [kernel] = search(openai_proposer(server, model="deepseek-reasoner"))
    assert kernel.status == "failed"
    assert kernel.error.startswith("the answer held only reasoning (")
    assert kernel.error.endswith("characters of reasoning_content) and no final text, cut off at the output "
                                 "token limit after 32768 tokens: raise LLM_MAX_OUTPUT_TOKENS")
    assert kernel.usage.cost_usd == pytest.approx((2412 * 0.28 + 32768 * 0.42) / 1e6)


def test_a_responses_only_model_is_called_through_the_responses_api(server):
    idea_answer = fixture("openai_responses_gpt5_pro_code")
    idea_answer.body["output"][1]["content"][0]["text"] = ONE_IDEA
    server.queue_responses(idea_answer, fixture("openai_responses_gpt5_pro_code"))
    proposer = openai_proposer(server, model="gpt-5-pro", reasoning_effort="high", max_output_tokens=60000)
    _, [kernel] = search(proposer)
    assert kernel.status == "correct" and "torch.softmax" in kernel.source
    request = server.seen[1]
    assert request.path == "/v1/responses" and request.body["model"] == "gpt-5-pro"
    assert request.body["reasoning"] == {"effort": "high"} and request.body["max_output_tokens"] == 60000
    assert kernel.usage.output_tokens == 9120
    assert kernel.usage.cost_usd == pytest.approx((2412 * 15 + 9120 * 120) / 1e6)


def test_reasoning_effort_and_an_output_limit_reach_chat_completions(server):
    server.queue_openai(Canned(200, openai_reply(ONE_IDEA)), fixture("openai_code_python3_fence"))
    search(openai_proposer(server, reasoning_effort="low", max_output_tokens=20000))
    assert server.seen[0].body["reasoning_effort"] == "low"
    assert server.seen[0].body["max_completion_tokens"] == 20000


def test_an_empty_answer_says_what_it_cost(server):
    empty = anthropic_reply("", 2000, 16000, stop_reason="max_tokens")
    empty["content"] = [{"type": "thinking", "thinking": "", "signature": "EqQBCkgIBxABGAIiQ..."}]
    server.queue_anthropic(Canned(200, anthropic_reply(ONE_IDEA)), Canned(200, empty))
    _, [kernel] = search(anthropic_proposer(server))
    assert kernel.status == "failed"
    assert kernel.error == ("an empty answer (16000 output tokens billed, cut off at the output token limit "
                            "after 16000 tokens: raise LLM_MAX_OUTPUT_TOKENS)")
    assert kernel.usage.cost_usd == pytest.approx((2000 * 5 + 16000 * 25) / 1e6)
