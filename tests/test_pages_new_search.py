"""The new-search page: examples, settings, and references refused next to the code."""

from __future__ import annotations

import pytest

from search.models import Search
from tests.fixtures.web import SOFTMAX_REFERENCE

pytestmark = pytest.mark.django_db

SETTINGS = {"proposer": "builtin", "model": "", "rounds": "2", "ideas_per_round": "2",
            "impls_per_idea": "1", "tolerance": "0.01", "policy": "any", "device": "cpu"}


def test_it_lists_every_example_with_its_source(owner_client):
    response = owner_client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    for name in ("softmax", "layernorm", "matmul", "conv", "conv_relu_maxpool"):
        assert f'data-example="{name}"' in html
    examples = response.context["examples"]
    assert examples[0]["name"] == "softmax"
    assert "class Model" in examples[0]["source"]


def test_it_shows_every_setting(owner_client):
    html = owner_client.get("/").content.decode()
    for field in ("proposer", "model", "rounds", "ideas_per_round", "impls_per_idea", "tolerance",
                  "policy", "device", "reference_file"):
        assert f'name="{field}"' in html
    assert "custom-kernels" in html


def test_it_sends_anonymous_visitors_to_login(anonymous_client):
    response = anonymous_client.get("/")
    assert response.status_code == 302
    assert response["Location"].startswith("/accounts/login/")


def test_single_user_mode_needs_no_account_only_the_printed_link(local_mode, client):
    from search.local_user import login_link

    assert client.get("/").status_code == 302
    assert client.get(login_link("http://testserver")).status_code == 302
    assert client.get("/").status_code == 200


def test_it_keeps_the_pasted_text_and_points_at_the_error_line(owner_client):
    broken = SOFTMAX_REFERENCE.replace("def forward(self, x):", "def forward(self, x)")
    response = owner_client.post("/", {"reference": broken, **SETTINGS})
    assert response.status_code == 422
    html = response.content.decode()
    line = broken.splitlines().index("    def forward(self, x)") + 1
    assert f'data-error-line="{line}"' in html
    assert f"Line {line}:" in html
    assert "def forward(self, x)\n" in response.context["form"]["reference"].value()
    assert Search.objects.count() == 0


def test_it_refuses_empty_code(owner_client):
    response = owner_client.post("/", {"reference": "   \n", **SETTINGS})
    assert response.status_code == 422
    assert "empty" in response.content.decode()
    assert Search.objects.count() == 0


def test_it_refuses_a_megabyte_of_code(owner_client):
    huge = SOFTMAX_REFERENCE + "#" * 1_000_000
    response = owner_client.post("/", {"reference": huge, **SETTINGS})
    assert response.status_code == 422
    assert "limit" in response.content.decode()
    assert Search.objects.count() == 0


def test_it_refuses_binary_junk(owner_client):
    response = owner_client.post("/", {"reference": "import torch\x00\x01\x02", **SETTINGS})
    assert response.status_code == 422
    assert response.context["form"].errors["reference"]
    assert 'id="reference-error"' in response.content.decode()
    assert Search.objects.count() == 0


def test_it_refuses_a_module_without_the_kernelbench_names(owner_client):
    response = owner_client.post("/", {"reference": "import torch\nx = 1\n", **SETTINGS})
    assert response.status_code == 422
    assert "get_inputs" in response.content.decode()


def test_it_refuses_out_of_range_settings_next_to_the_field(owner_client):
    response = owner_client.post("/", {"reference": SOFTMAX_REFERENCE, **SETTINGS, "rounds": "0"})
    assert response.status_code == 422
    assert response.context["form"].errors["rounds"]
    assert Search.objects.count() == 0


def test_an_uploaded_file_fills_an_empty_editor(owner_client):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("ref.py", b"import torch\nthis is ( broken\n")
    response = owner_client.post("/", {"reference": "", "reference_file": upload, **SETTINGS})
    assert response.status_code == 422
    assert "this is ( broken" in response.context["form"]["reference"].value()
