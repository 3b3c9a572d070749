"""The new-search form offers what this deployment can run: a proposer without its key is shown
but disabled with the variable to set, and refused if posted anyway; the GPU is offered only
where a GPU or GPU workers exist."""

from __future__ import annotations

import re

import pytest

from search.models import Search
from tests.fixtures.web import SOFTMAX_REFERENCE

pytestmark = pytest.mark.django_db

SETTINGS = {"proposer": "builtin", "model": "", "rounds": "1", "ideas_per_round": "1",
            "impls_per_idea": "1", "tolerance": "0.01", "policy": "any", "device": "cpu"}


def option(html: str, value: str) -> str:
    found = re.search(rf'<option value="{value}"[^>]*>[^<]*</option>', html)
    assert found, f"no option {value}"
    return found.group(0)


def test_a_proposer_without_its_key_is_shown_disabled_with_the_variable(owner_client, settings):
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    settings.ANTHROPIC_API_KEY = "sk-ant-test"
    html = owner_client.get("/").content.decode()
    openai = option(html, "openai")
    assert "disabled" in openai and "OPENAI_API_KEY is not set" in openai
    assert "disabled" not in option(html, "anthropic")
    assert "disabled" not in option(html, "builtin")


def test_a_proposer_without_its_key_posted_anyway_is_refused_by_the_field(owner_client, settings):
    settings.OPENAI_API_KEY = settings.OPENAI_BASE_URL = ""
    response = owner_client.post("/", {**SETTINGS, "proposer": "openai", "reference": SOFTMAX_REFERENCE})
    assert response.status_code == 422
    assert response.context["form"].errors["proposer"] == [
        "OPENAI_API_KEY is not set (or set OPENAI_BASE_URL for a local server)"]
    assert response.context["form"]["reference"].value() == SOFTMAX_REFERENCE  # nothing is lost
    assert not Search.objects.exists()


def test_a_bad_ensemble_spec_is_refused_by_the_model_field(owner_client, settings):
    settings.OPENAI_API_KEY = "sk-test"
    response = owner_client.post("/", {**SETTINGS, "proposer": "ensemble", "model": "openai:gpt-5=lots",
                                       "reference": SOFTMAX_REFERENCE})
    assert response.status_code == 422
    assert response.context["form"].errors["model"] == [
        "ensemble member 'openai:gpt-5=lots': the weight 'lots' is not a number"]


def test_the_gpu_is_offered_only_where_one_can_run(owner_client, settings):
    settings.RUNNER_DEVICE, settings.RUNNER_REMOTE = "cpu", False
    assert 'value="cuda"' not in owner_client.get("/").content.decode()
    settings.RUNNER_REMOTE = True  # GPU workers take the jobs
    assert 'value="cuda"' in owner_client.get("/").content.decode()
