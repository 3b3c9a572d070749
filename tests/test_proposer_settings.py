"""Per-provider timeouts, output limits, reasoning effort and thinking budget are settings that
reach the requests the SDKs send; a malformed value is refused by name."""

from __future__ import annotations

import pytest

from search.engine.types import SearchConfig
from search.proposers import make_proposer
from search.proposers.settings import ProviderSettings
from tests.fakes.llm_server import Canned, FakeLLMServer, anthropic_reply


def test_the_environment_names_and_the_short_names_are_both_read():
    settings = ProviderSettings.from_mapping({"OPENAI_API_KEY": "sk-1", "anthropic_timeout_s": "1200",
                                              "LLM_MAX_OUTPUT_TOKENS": "64000", "reasoning_effort": "high",
                                              "ANTHROPIC_THINKING_BUDGET": 8000, "OPENAI_API": "responses",
                                              "LLM_ENDPOINTS": "local=http://127.0.0.1:8000/v1"})
    assert (settings.openai_key, settings.anthropic_timeout_s, settings.openai_timeout_s) == ("sk-1", 1200.0, 900.0)
    assert (settings.max_output_tokens, settings.reasoning_effort, settings.thinking_budget) == (64000, "high", 8000)
    assert settings.openai_api == "responses" and settings.endpoints == {"local": "http://127.0.0.1:8000/v1"}


@pytest.mark.parametrize(("keys", "message"), [
    ({"OPENAI_TIMEOUT_S": "soon"}, "OPENAI_TIMEOUT_S must be a number, not 'soon'"),
    ({"OPENAI_TIMEOUT_S": "0"}, "OPENAI_TIMEOUT_S must be above 0, not '0'"),
    ({"OPENAI_REASONING_EFFORT": "max"}, "OPENAI_REASONING_EFFORT must be one of minimal, low, medium, high, "
                                         "not 'max'"),
    ({"OPENAI_API": "legacy"}, "OPENAI_API must be chat, responses or auto, not 'legacy'"),
    ({"LLM_ENDPOINTS": "local 127.0.0.1"}, "LLM_ENDPOINTS entry 'local 127.0.0.1' must read name=http(s)://host/v1"),
])
def test_a_malformed_setting_is_refused_by_name(keys, message):
    with pytest.raises(ValueError) as refused:
        ProviderSettings.from_mapping(keys)
    assert str(refused.value) == message


def test_the_settings_reach_each_proposer():
    keys = {"openai": "sk-1", "anthropic": "sk-ant-1", "OPENAI_TIMEOUT_S": "1800", "reasoning_effort": "low",
            "ANTHROPIC_THINKING_BUDGET": "4000", "LLM_MAX_OUTPUT_TOKENS": "20000"}
    openai = make_proposer(SearchConfig(proposer="openai", model="o3"), keys)
    assert openai.client.timeout == 1800.0 and openai.reasoning_effort == "low" and openai.max_output_tokens == 20000
    anthropic = make_proposer(SearchConfig(proposer="anthropic", model="claude-opus-4-5"), keys)
    assert anthropic.thinking_budget == 4000 and anthropic.max_output_tokens == 20000


def test_an_anthropic_thinking_budget_is_sent_and_the_limit_leaves_room_for_the_answer():
    server = FakeLLMServer().start()
    try:
        server.queue_anthropic(Canned(200, anthropic_reply('[{"idea": "Fuse.", "category": "memory"}]')))
        proposer = make_proposer(SearchConfig(proposer="anthropic", model="claude-opus-4-5"),
                                 {"anthropic": "sk-ant-1", "anthropic_base_url": server.url,
                                  "thinking_budget": 10000})
        from tests.test_proposer_answer_forms import ideas_of

        assert [i.text for i in ideas_of(proposer, 1)] == ["Fuse."]
        body = server.seen[0].body
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000} and body["max_tokens"] == 26000
    finally:
        server.stop()
