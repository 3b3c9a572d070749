"""An ensemble draws one member per call, with probability proportional to its weight."""

from __future__ import annotations

import random

import pytest

from search.engine.types import Idea, Implementation, Node, SearchConfig, Usage
from search.proposers import make_proposer
from search.proposers.anthropic_proposer import AnthropicProposer
from search.proposers.ensemble import EnsembleProposer, parse_members
from search.proposers.openai_proposer import OpenAIProposer
from tests.test_proposer_scripted import ctx


class Named:
    """A proposer that answers with its own name, to see who was drawn."""

    max_parallel = 4

    def __init__(self, name: str) -> None:
        self.name = name

    def propose_ideas(self, ctx, k):
        return [Idea(self.name, "memory")] * k, Usage(self.name)

    def implement(self, ctx, parent, idea, m):
        return [Implementation(source=self.name, usage=Usage(self.name))] * m


def parent() -> Node:
    return Node(kind="reference", round=0, key="ref")


def test_members_are_drawn_by_weight():
    ensemble = EnsembleProposer([(Named("a"), 0.75), (Named("b"), 0.25)], rng=random.Random(1))
    draws = [ensemble.propose_ideas(ctx(1), 1)[0][0].text for _ in range(2000)]
    assert 0.70 < draws.count("a") / len(draws) < 0.80


def test_a_seeded_ensemble_draws_the_same_sequence():
    def draws(seed):
        ensemble = EnsembleProposer([(Named("a"), 1), (Named("b"), 1)], rng=random.Random(seed))
        return [impl.source for impl in ensemble.implement(ctx(1), parent(), Idea("x", "memory"), 20)]

    assert draws(7) == draws(7)
    assert set(draws(7)) == {"a", "b"}  # each implementation is its own draw


def test_a_member_with_zero_weight_is_never_drawn():
    ensemble = EnsembleProposer([(Named("a"), 1), (Named("b"), 0)], rng=random.Random(3))
    assert {ensemble.propose_ideas(ctx(1), 1)[0][0].text for _ in range(200)} == {"a"}


def test_the_spec_names_providers_models_and_weights():
    assert parse_members("openai:gpt-4.1=0.7, anthropic:claude-opus-4-5=0.3") == [
        ("openai", "gpt-4.1", 0.7), ("anthropic", "claude-opus-4-5", 0.3)]
    assert parse_members("openai:gpt-4.1") == [("openai", "gpt-4.1", 1.0)]
    with pytest.raises(ValueError):
        parse_members("openai:gpt-4.1=0")
    with pytest.raises(ValueError):
        parse_members(":model=1")


def test_make_proposer_builds_an_ensemble_of_real_clients():
    config = SearchConfig(proposer="ensemble", model="openai:gpt-4.1=0.7,anthropic:claude-opus-4-5=0.3")
    ensemble = make_proposer(config, {"OPENAI_API_KEY": "sk-1", "ANTHROPIC_API_KEY": "sk-ant-1"})
    members = [(type(p), p.model, w) for p, w in ensemble.members]
    assert members == [(OpenAIProposer, "gpt-4.1", 0.7), (AnthropicProposer, "claude-opus-4-5", 0.3)]


@pytest.mark.parametrize(("spec", "message"), [
    ("gpt-5=0.7,claude=0.3", "ensemble member 'claude=0.3': 'claude' names no model; write anthropic:<model> "
                             "(e.g. anthropic:claude-sonnet-4-5) or anthropic alone for its default model"),
    ("openai:gpt-5:0.7", "ensemble member 'openai:gpt-5:0.7': write the weight after '=' (openai:gpt-5=0.7)"),
    ("openai:gpt-5=heavy", "ensemble member 'openai:gpt-5=heavy': the weight 'heavy' is not a number"),
    ("openai:gpt-5=-1", "ensemble member 'openai:gpt-5=-1' has a weight of -1; weights are 0 or more"),
    ("llama3.1:8b=1", "ensemble member 'llama3.1:8b=1': say which provider serves 'llama3.1:8b' "
                      "(openai:llama3.1:8b, anthropic:llama3.1:8b)"),
    ("", "the ensemble names no member"),
])
def test_a_malformed_spec_is_refused_naming_the_member(spec, message):
    with pytest.raises(ValueError) as refused:
        parse_members(spec)
    assert str(refused.value).startswith(message)


def test_models_named_without_a_provider_find_theirs_and_a_provider_alone_means_its_default():
    assert parse_members("gpt-5=0.7,claude-sonnet-4-5=0.2,anthropic=0.1,openai:llama3.1:8b") == [
        ("openai", "gpt-5", 0.7), ("anthropic", "claude-sonnet-4-5", 0.2), ("anthropic", "", 0.1),
        ("openai", "llama3.1:8b", 1.0)]


def test_a_member_may_name_an_endpoint_the_operator_configured():
    keys = {"OPENAI_API_KEY": "sk-hosted", "LLM_ENDPOINTS": "local=http://127.0.0.1:8000/v1"}
    ensemble = make_proposer(SearchConfig(proposer="ensemble", model="openai:gpt-5=0.5,local:qwen3-coder=0.5"), keys)
    hosted, local = (p for p, _ in ensemble.members)
    assert str(hosted.client.base_url) == "https://api.openai.com/v1/" and hosted.client.api_key == "sk-hosted"
    assert str(local.client.base_url).startswith("http://127.0.0.1:8000/v1") and local.model == "qwen3-coder"
    assert local.client.api_key == "unused"  # the hosted key never goes to another server
    with pytest.raises(ValueError, match="the providers are openai, anthropic, builtin, local$"):
        parse_members("remote:qwen3=1", endpoints=["local"])
