"""The app serves its own scripts and styles (daphne serves no static files)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize("path,kind", [("js/search_page.js", "javascript"), ("css/app.css", "text/css")])
def test_static_files_are_served_with_their_type(client, path, kind):
    response = client.get(f"/static/{path}")
    assert response.status_code == 200
    assert kind in response["Content-Type"]


def test_static_serving_stays_inside_the_static_folders(client):
    for path in ("/static/../manage.py", "/static/%2e%2e/kernelweb/settings.py"):
        response = client.get(path)
        assert response.status_code in (400, 404)
        assert b"SECRET_KEY" not in response.content and b"django" not in response.content[:200]
