"""A body over the upload limit gets a JSON 413 with the numbers, not an HTML 400."""

from __future__ import annotations

import pytest

from search.models import Search

pytestmark = pytest.mark.django_db


def test_a_50_mb_body_gets_a_json_413(token_client):
    body = b'{"reference": "' + b"x" * (50 * 2**20) + b'"}'
    response = token_client.post("/api/searches", body, content_type="application/json")
    assert response.status_code == 413
    assert response["Content-Type"].startswith("application/json")
    detail = response.json()["detail"]
    assert "50.0 MB" in detail and "limit is 4.0 MB" in detail
    assert not Search.objects.exists()
