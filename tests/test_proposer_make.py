"""make_proposer picks the proposer a search's settings ask for, with the keys it needs."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from search.engine.types import ProposerError, SearchConfig
from search.proposers import make_proposer
from search.proposers.anthropic_proposer import AnthropicProposer
from search.proposers.openai_proposer import OpenAIProposer

DEMO = str(Path(__file__).resolve().parent.parent / "examples" / "scripted" / "softmax.json")


def test_openai_uses_the_key_model_and_base_url():
    proposer = make_proposer(SearchConfig(proposer="openai", model="gpt-4o"),
                             {"OPENAI_API_KEY": "sk-1", "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})
    assert isinstance(proposer, OpenAIProposer) and proposer.model == "gpt-4o"
    assert str(proposer.client.base_url).startswith("http://127.0.0.1:9/v1")
    assert proposer.client.max_retries == 0  # the proposer's own retry loop decides


def test_a_local_openai_compatible_server_needs_no_key():
    proposer = make_proposer(SearchConfig(proposer="openai", model="llama3.1"),
                             {"openai_base_url": "http://127.0.0.1:11434/v1"})
    assert isinstance(proposer, OpenAIProposer)


def test_a_missing_key_is_a_clear_error():
    with pytest.raises(ProposerError, match="OPENAI_API_KEY is not set"):
        make_proposer(SearchConfig(proposer="openai"), {})
    with pytest.raises(ProposerError, match="ANTHROPIC_API_KEY is not set"):
        make_proposer(SearchConfig(proposer="anthropic"), {"OPENAI_API_KEY": "sk-1"})


def test_anthropic_defaults_its_model():
    proposer = make_proposer(SearchConfig(proposer="anthropic"), {"anthropic": "sk-ant-1"})
    assert isinstance(proposer, AnthropicProposer) and proposer.model


def test_the_scripted_proposer_is_no_search_setting():
    with pytest.raises(ValueError, match="replays recordings in tests and cannot be chosen"):
        make_proposer(SearchConfig(proposer="scripted", model=DEMO), {})


def test_an_unknown_proposer_is_refused():
    with pytest.raises(ValueError, match="unknown proposer 'magic'"):
        make_proposer(SearchConfig(proposer="magic"), {})


@pytest.mark.skipif(importlib.util.find_spec("search.proposers.builtin") is None, reason="no built-in proposer")
def test_builtin_needs_no_key():
    builtin = pytest.importorskip("search.proposers.builtin")
    if not hasattr(builtin, "BuiltinProposer"):
        pytest.skip("the built-in proposer is not there yet")
    proposer = make_proposer(SearchConfig(proposer="builtin", device="cpu"), {})
    assert hasattr(proposer, "propose_ideas") and hasattr(proposer, "implement")


def test_builtin_offers_optional_ideas_named_as_its_model():
    proposer = make_proposer(SearchConfig(proposer="builtin", device="cpu", model="torch_compile_cpu"), {})
    assert proposer.extra_ideas == {"torch_compile_cpu"}
    with pytest.raises(ValueError, match="has no idea 'fastest'"):
        make_proposer(SearchConfig(proposer="builtin", device="cpu", model="fastest"), {})
