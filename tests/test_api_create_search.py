"""POST /api/searches: 201 {id, url} for a valid reference; bad input answers 413/422 with a
clear message and the text back; login (or a token) is required in production."""

import json

import pytest

from search.models import Problem, Search
from tests.fixtures.web import SOFTMAX_REFERENCE


def post(client, body, **kwargs):
    data = body if isinstance(body, str | bytes) else json.dumps(body)
    return client.post("/api/searches", data=data, content_type="application/json", **kwargs)


def test_it_rejects_an_empty_reference_with_a_clear_message(owner_client):
    response = post(owner_client, {"reference": "   \n"})
    assert response.status_code == 422
    assert "empty" in response.json()["detail"]
    assert not Search.objects.exists()


def test_it_rejects_a_megabyte_of_code_with_413_and_the_limit(owner_client, settings):
    reference = SOFTMAX_REFERENCE + "# padding\n" * (1024 * 1024 // 10)
    response = post(owner_client, {"reference": reference})
    assert response.status_code == 413
    assert f"limit is {settings.REFERENCE_MAX_BYTES // 1024} KB" in response.json()["detail"]
    assert not Problem.objects.exists()


def test_it_rejects_nul_bytes_as_binary_data(owner_client):
    response = post(owner_client, {"reference": SOFTMAX_REFERENCE + "\x00\x01\x02"})
    assert response.status_code == 422
    assert "binary" in response.json()["detail"]


def test_it_rejects_a_body_of_invalid_utf8_as_binary_junk(owner_client):
    response = post(owner_client, b'{"reference": "\xff\xfe\x00junk"}')
    assert response.status_code == 422
    assert "binary" in response.json()["detail"] or "UTF-8" in response.json()["detail"]


def test_it_points_at_the_line_of_a_syntax_error_and_returns_the_text(owner_client):
    reference = SOFTMAX_REFERENCE.replace("return torch.softmax(x, dim=-1)", "return torch.softmax(x, dim=-1")
    response = post(owner_client, {"reference": reference})
    assert response.status_code == 422
    data = response.json()
    assert data["line"] == reference.splitlines().index("        return torch.softmax(x, dim=-1") + 1
    assert data["reference"] == reference  # nothing is lost


def test_it_names_what_a_reference_misses(owner_client):
    response = post(owner_client, {"reference": "import torch\nclass Model: pass\n"})
    assert response.status_code == 422
    assert "get_inputs" in response.json()["detail"] and "get_init_inputs" in response.json()["detail"]


@pytest.mark.parametrize(("field", "value"), [("rounds", 0), ("rounds", 10_000), ("proposer", "nonsense"),
                                              ("device", "tpu"), ("tolerance", -1.0),
                                              ("max_candidates", 0), ("max_cost_usd", -1.0),
                                              ("max_wall_s", 0.0), ("model", "no_such_idea")])
def test_it_rejects_settings_out_of_range_and_names_the_field(owner_client, field, value):
    response = post(owner_client, {"reference": SOFTMAX_REFERENCE, "proposer": "builtin", field: value})
    assert response.status_code == 422
    assert response.json()["field"] == field


def test_it_requires_login_in_production(anonymous_client):
    assert post(anonymous_client, {"reference": SOFTMAX_REFERENCE}).status_code == 401


def test_it_rejects_a_body_without_a_reference(owner_client):
    assert post(owner_client, {"rounds": 2}).status_code == 422


def test_it_creates_a_queued_search_and_answers_201_with_id_and_url(token_client, owner, task_queue_in_memory):
    response = post(token_client, {"reference": SOFTMAX_REFERENCE, "proposer": "builtin", "rounds": 2,
                                   "ideas_per_round": 3, "impls_per_idea": 2, "device": "cpu", "tolerance": 0.01})
    assert response.status_code == 201
    data = response.json()
    assert set(data) == {"id", "url", "warnings"} and data["warnings"] == []
    search = Search.objects.get(id=data["id"])
    assert data["url"] == f"/searches/{search.id}/"
    assert search.owner == owner and search.status == "queued"
    assert (search.config["rounds"], search.config["ideas_per_round"], search.config["impls_per_idea"]) == (2, 3, 2)
    assert search.problem.info["output_shapes"] == [[8, 64]]
    assert search.problem.signature.startswith("ops=")
    assert [t.args for t in task_queue_in_memory.pending()] == [(search.id,)]


def test_it_answers_422_with_the_runners_message_and_line(owner_client):
    reference = SOFTMAX_REFERENCE.replace("return [torch.randn(8, 64)]", "return [torch.randn(8, 64) @ torch.randn(3, 3)]")
    response = post(owner_client, {"reference": reference, "device": "cpu"})
    assert response.status_code == 422
    data = response.json()
    assert data["detail"] and data["reference"] == reference
    assert data["line"] == reference.splitlines().index("    return [torch.randn(8, 64) @ torch.randn(3, 3)]") + 1
    assert not Search.objects.exists()
