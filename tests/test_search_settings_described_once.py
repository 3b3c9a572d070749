"""The search settings are described once (search/search_settings.py): the form's limits, the
API's refusals and its schema come from the same description."""

from __future__ import annotations

import json

import pytest

from search.forms import NewSearchForm
from search.services import InvalidSettings, clean_config
from tests.fixtures.web import SOFTMAX_REFERENCE


def test_a_deployment_limit_reaches_the_form_and_the_checks(settings):
    settings.SEARCH_MAX_ROUNDS = 7
    form = NewSearchForm()
    assert form.fields["rounds"].max_value == 7
    assert 'max="7"' in str(form["rounds"])
    assert clean_config({"rounds": 7}).rounds == 7
    with pytest.raises(InvalidSettings, match="rounds: must be between 1 and 7"):
        clean_config({"rounds": 8})


def test_the_api_refuses_out_of_range_settings_with_the_same_words(token_client, settings):
    settings.SEARCH_MAX_IMPLS = 3
    response = token_client.post("/api/searches", content_type="application/json",
                                 data=json.dumps({"reference": SOFTMAX_REFERENCE, "impls_per_idea": 4}))
    assert response.status_code == 422
    assert response.json() == {"detail": "must be between 1 and 3", "field": "impls_per_idea",
                               "line": None, "reference": SOFTMAX_REFERENCE}


def test_the_api_schema_describes_each_setting(client, db):
    schema = client.get("/api/openapi.json").json()
    props = schema["components"]["schemas"]["SearchIn"]["properties"]
    assert "rounds of ideas and implementations (1 to" in props["rounds"]["description"]
    assert props["device"]["description"] == "one of cpu, cuda"
    assert "above 0, at most 1" in props["tolerance"]["description"]



@pytest.mark.parametrize(("field", "value", "words"), [
    ("tolerance", "0", "must be above 0 and at most 1"), ("tolerance", "1.5", "must be above 0 and at most 1"),
    ("max_cost_usd", "-1", "must be a positive number"), ("max_minutes", "0", "must be a positive number")])
def test_the_form_refuses_out_of_range_numbers_with_the_same_words(field, value, words, db):
    data = {"reference": SOFTMAX_REFERENCE, "proposer": "builtin", "rounds": "1", "ideas_per_round": "1",
            "impls_per_idea": "1", "tolerance": "0.01", "policy": "any", "device": "cpu", field: value}
    form = NewSearchForm(data)
    assert not form.is_valid()
    assert form.errors[field] == [words]


def test_the_form_and_clean_config_say_the_same_of_a_tolerance_of_zero(db):
    with pytest.raises(InvalidSettings, match="tolerance: must be above 0 and at most 1"):
        clean_config({"tolerance": 0})
