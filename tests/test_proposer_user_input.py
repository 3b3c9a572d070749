"""Bob tries to make the worker read a file of his choosing through the test-only scripted
proposer: as the proposer, as an ensemble member, from the API and the form. Every way is refused
with a specific message and nothing is stored; no proposer reads a path a user gave."""

from __future__ import annotations

import json

import pytest

from search.engine.types import SearchConfig
from search.models import Search
from search.proposers import make_proposer, validate_spec
from search.proposers.scripted import ScriptedProposer
from tests.fixtures.web import SOFTMAX_REFERENCE

REFUSED = "the scripted proposer replays recordings in tests"


def post(client, body):
    return client.post("/api/searches", data=json.dumps(body), content_type="application/json")


@pytest.fixture
def bob_client(stranger_client):
    return stranger_client  # another account than the owner's: Bob


def test_bobs_scripted_path_is_refused_by_the_api(bob_client):
    response = post(bob_client, {"reference": SOFTMAX_REFERENCE, "proposer": "scripted", "model": "/etc/passwd"})
    assert response.status_code == 422
    assert response.json()["field"] == "proposer" and response.json()["detail"].startswith(REFUSED)
    assert not Search.objects.exists()


def test_bobs_scripted_ensemble_member_is_refused_by_the_api(bob_client):
    response = post(bob_client, {"reference": SOFTMAX_REFERENCE, "proposer": "ensemble",
                                 "model": "openai:gpt-5=1,scripted:/proc/self/environ=1"})
    assert response.status_code == 422
    assert response.json()["field"] == "model"
    assert response.json()["detail"] == ("ensemble member 'scripted:/proc/self/environ=1': the scripted proposer "
                                         "replays recordings in tests and cannot be an ensemble member")
    assert not Search.objects.exists()


def test_bobs_scripted_form_post_is_refused(bob_client):
    assert 'value="scripted"' not in bob_client.get("/").content.decode()
    response = bob_client.post("/", {"reference": SOFTMAX_REFERENCE, "proposer": "scripted",
                                     "model": "/etc/passwd", "rounds": "1", "ideas_per_round": "1",
                                     "impls_per_idea": "1", "tolerance": "0.01", "policy": "any",
                                     "device": "cpu"})
    assert response.status_code == 422 and "scripted is not one of the available choices" in response.content.decode()
    assert not Search.objects.exists()


@pytest.mark.parametrize(("proposer", "model"), [("scripted", "/etc/passwd"), ("ensemble", "scripted:/etc/passwd=1"),
                                                 ("ensemble", "scripted:/etc/passwd")])
def test_a_search_stored_with_a_scripted_setting_cannot_build_its_proposer(proposer, model):
    assert validate_spec(proposer, model) and REFUSED in validate_spec(proposer, model)[0]
    with pytest.raises(ValueError, match=REFUSED):
        make_proposer(SearchConfig(proposer=proposer, model=model), {})


def test_a_recording_cannot_name_a_file_outside_its_folder(tmp_path):
    (tmp_path / "inside.py").write_text("class ModelNew: ...\n")
    proposer = ScriptedProposer({"rounds": [{"ideas": []}]}, base_dir=tmp_path)
    assert proposer._load({"file": "inside.py"}).source == "class ModelNew: ...\n"
    for outside in ("/etc/passwd", "../../etc/passwd"):
        with pytest.raises(ValueError, match="a recorded file must lie in"):
            proposer._load({"file": outside})
