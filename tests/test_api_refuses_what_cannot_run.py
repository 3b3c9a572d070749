"""POST /api/searches answers 422 with a specific message, and stores nothing, for settings this
deployment cannot run: a proposer without its key, a malformed or keyless ensemble, the GPU on
a server without one. The same messages as the new-search form."""

import json

import pytest

from search.models import Search
from tests.fixtures.web import SOFTMAX_REFERENCE


def post(client, **settings):
    return client.post("/api/searches", data=json.dumps({"reference": SOFTMAX_REFERENCE, **settings}),
                       content_type="application/json")


@pytest.fixture
def no_keys(settings):
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = settings.ANTHROPIC_API_KEY = ""
    return settings


def test_a_proposer_without_its_key_is_refused_naming_the_variable(token_client, no_keys):
    response = post(token_client, proposer="openai", model="gpt-5")
    assert response.status_code == 422
    body = response.json()
    assert body["field"] == "proposer"
    assert body["detail"] == "OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)"
    assert body["reference"] == SOFTMAX_REFERENCE  # nothing is lost
    assert not Search.objects.exists()


@pytest.mark.parametrize(("spec", "message"), [
    ("openai:gpt-5=0.7,anthropic:claude=x", "ensemble member 'anthropic:claude=x': the weight 'x' is not a number"),
    ("openai:gpt-5=1,mistral:large=1", "ensemble member 'mistral:large=1': say which provider serves "
                                       "'mistral:large' (openai:mistral:large, anthropic:mistral:large); "
                                       "the providers are openai, anthropic, builtin"),
    ("openai:gpt-5=0,anthropic:claude=0",
     "ensemble 'openai:gpt-5=0,anthropic:claude=0' has no member with a positive weight"),
    ("openai:gpt-5=1,anthropic:claude=1", "ANTHROPIC_API_KEY is not set"),
])
def test_an_ensemble_spec_is_parsed_at_submit_with_a_specific_message(token_client, no_keys, spec, message):
    no_keys.OPENAI_API_KEY = "sk-test"
    response = post(token_client, proposer="ensemble", model=spec)
    assert response.status_code == 422
    assert response.json()["field"] == "model"
    assert response.json()["detail"] == message
    assert not Search.objects.exists()


def test_the_gpu_is_refused_on_a_server_without_one(token_client, settings):
    settings.RUNNER_DEVICE, settings.RUNNER_REMOTE = "cpu", False
    response = post(token_client, device="cuda")
    assert response.status_code == 422
    assert response.json()["field"] == "device"
    assert response.json()["detail"].startswith("this server has no GPU and no GPU workers")
    assert not Search.objects.exists()
