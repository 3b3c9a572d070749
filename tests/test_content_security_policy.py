"""Every page carries a Content-Security-Policy that allows only the site's own scripts, and
no page needs more: no inline script, no inline event handler, no script from elsewhere."""

from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.django_db

SCRIPT = re.compile(r"<script\b([^>]*)>(.*?)</script>", re.S | re.I)
HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.I)


def pages(search) -> list[str]:
    return ["/", "/searches/", f"/searches/{search.id}/", "/accounts/token/", "/api/docs",
            f"/s/{search.share_slug}", f"/searches/{search.id}/nodes/{search.best_node_id}/panel"]


def test_every_page_allows_only_its_own_scripts(owner_client, owner):
    from tests.fixtures.web import make_finished_search

    search = make_finished_search(owner, shared=True)
    for path in pages(search):
        response = owner_client.get(path)
        assert response.status_code == 200, path
        policy = response["Content-Security-Policy"]
        assert "script-src 'self';" in policy and "unsafe-inline' ;" not in policy, path
        assert "frame-ancestors 'none'" in policy and "object-src 'none'" in policy
        assert "connect-src 'self' ws://testserver;" in policy
        html = response.content.decode()
        for attrs, body in SCRIPT.findall(html):
            if "application/json" in attrs:
                continue  # data, never executed
            assert 'src="/static/' in attrs and not body.strip(), (path, attrs, body[:80])
        assert not HANDLER.search(html), (path, HANDLER.search(html).group(0))


def test_the_login_page_and_the_api_carry_it_too(anonymous_client):
    assert "script-src 'self'" in anonymous_client.get("/accounts/login/")["Content-Security-Policy"]
    assert "script-src 'self'" in anonymous_client.get("/api/searches")["Content-Security-Policy"]


def test_behind_https_websockets_must_use_wss(owner_client, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    policy = owner_client.get("/searches/", HTTP_X_FORWARDED_PROTO="https")["Content-Security-Policy"]
    assert "connect-src 'self' wss://testserver" in policy and "ws://" not in policy


def test_the_admin_is_off_by_default(owner_client):
    assert owner_client.get("/admin/").status_code == 404
