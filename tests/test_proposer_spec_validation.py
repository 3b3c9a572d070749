"""The one check of a proposer setting that the form, the API and the command share
(search.proposers.validate_spec), which proposers this server can run
(available_proposers), and what the API answers for a setting that cannot run."""

from __future__ import annotations

import json

import pytest

from search.models import Search
from search.proposers import available_proposers, validate_spec
from tests.fixtures.web import SOFTMAX_REFERENCE


def test_a_valid_setting_has_no_error():
    assert validate_spec("openai", "gpt-5") == []
    assert validate_spec("ensemble", "openai:gpt-5=0.7,anthropic:claude-sonnet-4-5=0.3") == []
    assert validate_spec("builtin", "") == []


def test_each_error_is_specific():
    assert validate_spec("magic", "") == ["unknown proposer 'magic'; expected one of builtin, openai, anthropic, "
                                          "ensemble"]
    assert validate_spec("ensemble", "openai:gpt-5:0.7") == [
        "ensemble member 'openai:gpt-5:0.7': write the weight after '=' (openai:gpt-5=0.7)"]
    assert validate_spec("builtin", "fastest")[0].startswith("the built-in proposer has no idea 'fastest'")


def test_with_the_servers_keys_a_missing_key_is_named():
    assert validate_spec("ensemble", "openai:gpt-5=1,anthropic:claude-opus-4-5=1", keys={"openai": "sk-1"}) == [
        "ANTHROPIC_API_KEY is not set"]
    assert validate_spec("openai", "llama3.1", keys={"openai_base_url": "http://127.0.0.1:11434/v1"}) == []


def test_available_proposers_say_why_one_cannot_run():
    rows = {name: (ok, reason) for name, ok, reason in available_proposers({"anthropic": "sk-ant-1"})}
    assert rows["builtin"] == (True, "") and rows["anthropic"] == (True, "") and rows["ensemble"] == (True, "")
    assert rows["openai"] == (False, "OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)")
    assert "scripted" not in rows
    assert dict((n, ok) for n, ok, _ in available_proposers({}))["ensemble"] is False


def post(client, body):
    return client.post("/api/searches", data=json.dumps(body), content_type="application/json")


def test_the_api_refuses_a_malformed_ensemble_at_submit(owner_client):
    response = post(owner_client, {"reference": SOFTMAX_REFERENCE, "proposer": "ensemble",
                                   "model": "gpt-5=0.7,claude=0.3"})
    assert response.status_code == 422 and response.json()["field"] == "model"
    assert response.json()["detail"].startswith("ensemble member 'claude=0.3': 'claude' names no model")
    assert not Search.objects.exists()


@pytest.mark.parametrize("prices", [None, {"qwen3:32b": [0.2]}])
def test_the_api_refuses_a_cost_budget_for_an_unpriced_model(owner_client, prices):
    body = {"reference": SOFTMAX_REFERENCE, "proposer": "openai", "model": "qwen3:32b", "max_cost_usd": 5}
    response = post(owner_client, body | ({"model_prices": prices} if prices else {}))
    assert response.status_code == 422
    assert response.json()["field"] == ("max_cost_usd" if prices is None else "model_prices")
    assert not Search.objects.exists()


def test_the_api_warns_when_a_model_has_no_price(owner_client, settings):
    settings.OPENAI_API_KEY = "sk-test"
    response = post(owner_client, {"reference": SOFTMAX_REFERENCE, "proposer": "openai", "model": "qwen3:32b",
                                   "device": "cpu"})
    assert response.status_code == 201
    assert response.json()["warnings"] == ["qwen3:32b has no price in the price table: its calls count as $0 "
                                           "(give its price with the search, or add it to the file "
                                           "KERNELWEB_PRICES names)"]
    priced = post(owner_client, {"reference": SOFTMAX_REFERENCE, "proposer": "openai", "model": "gpt-5",
                                 "device": "cpu"})
    assert priced.status_code == 201 and priced.json()["warnings"] == []
