"""What model calls cost, from the editable price table."""

from __future__ import annotations

import pytest

from search.proposers.pricing import price_of, price_table, usage_of


def test_the_shipped_price_table_reads():
    table = price_table()
    assert table["gpt-4.1"] == (2.0, 8.0)
    assert all(i >= 0 and o >= 0 for i, o in table.values())


def test_cost_is_tokens_times_price_per_million():
    usage = usage_of("gpt-4.1", 1_000_000, 500_000)
    assert usage.cost_usd == pytest.approx(2.0 + 4.0)
    assert (usage.input_tokens, usage.output_tokens) == (1_000_000, 500_000)


def test_a_dated_snapshot_or_gateway_name_costs_what_its_model_costs():
    assert price_of("gpt-4o-2024-08-06") == price_of("gpt-4o")
    assert price_of("claude-opus-4-5-20251101") == price_of("claude-opus-4-5")
    assert price_of("openai/gpt-4o-mini") == price_of("gpt-4o-mini") != price_of("gpt-4o")


def test_an_unknown_model_costs_nothing_but_its_tokens_count():
    usage = usage_of("llama3.1:70b", 1234, 56)
    assert usage.cost_usd == 0.0 and (usage.input_tokens, usage.output_tokens) == (1234, 56)


def test_an_edited_table_is_used(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models."my-local-model"]\ninput = 1.0\noutput = 2.0\n')
    table = price_table(str(path))
    assert usage_of("my-local-model", 1_000_000, 1_000_000, table).cost_usd == 3.0


@pytest.mark.parametrize("model", ["gpt-5.1", "gpt-5-nano", "gpt-5-codex", "o3-mini", "claude-sonnet-4-0",
                                   "claude-opus-4-0", "claude-3-7-sonnet-20250219", "anthropic/claude-sonnet-4.5",
                                   "gemini-2.5-pro", "deepseek-reasoner", "gpt-5-pro", "o3-pro"])
def test_current_models_have_a_price(model):
    assert price_of(model) is not None and usage_of(model, 1_000_000, 0).cost_usd > 0


def test_a_gateway_name_with_dots_costs_what_the_model_costs():
    assert price_of("anthropic/claude-sonnet-4.5") == price_of("claude-sonnet-4-5")
    assert price_of("openai/gpt-4.1") == price_of("gpt-4.1") != price_of("gpt-4")


def test_the_settings_file_extends_the_shipped_table(tmp_path):
    path = tmp_path / "prices.toml"
    path.write_text('[models."my-local-model"]\ninput = 1.0\noutput = 2.0\n\n[models."gpt-4.1"]\ninput = 9.0\n'
                    'output = 9.0\n')
    table = price_table(str(path))
    assert table["my-local-model"] == (1.0, 2.0) and table["gpt-4.1"] == (9.0, 9.0)
    assert table["claude-opus-4-5"] == price_table()["claude-opus-4-5"]  # the rest stays


def test_unpriced_models_are_named_for_each_setting():
    from search.proposers import unpriced_models

    assert unpriced_models("openai", "my-local-model") == ["my-local-model"]
    assert unpriced_models("openai", "my-local-model", {"my-local-model": [0.1, 0.2]}) == []
    assert unpriced_models("ensemble", "openai:gpt-5=1,openai:qwen3:32b=1,builtin=1") == ["qwen3:32b"]
    assert unpriced_models("builtin", "") == []
