"""The public read-only page: tree, best kernel, numbers and checks, link-preview tags."""

from __future__ import annotations

import pytest

from search import services
from tests.fixtures.web import make_finished_search

pytestmark = pytest.mark.django_db


def test_an_anonymous_viewer_sees_the_shared_search(anonymous_client, shared_search):
    response = anonymous_client.get(f"/s/{shared_search.share_slug}")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<meta name="description" content="Softmax over the last dimension.: 1.50x faster' in html
    assert '<meta property="og:title" content="Softmax over the last dimension. — kernelweb">' in html
    assert '<meta property="og:description"' in html
    assert 'id="best-kernel"' in html and '<span class="k">class</span>' in html
    assert "correctness" in html and "1.50×" in html
    assert f'"ws_path": "/ws/share/{shared_search.share_slug}/"' in html


def test_the_share_page_has_no_owner_controls(anonymous_client, shared_search):
    html = anonymous_client.get(f"/s/{shared_search.share_slug}").content.decode()
    for control in ('id="cancel"', 'id="share"', 'id="revoke"', f"/searches/{shared_search.id}/"):
        assert control not in html


def test_a_revoked_link_is_not_found(anonymous_client, shared_search):
    slug = shared_search.share_slug
    services.revoke_share(shared_search)
    assert anonymous_client.get(f"/s/{slug}").status_code == 404
    assert anonymous_client.get(f"/s/{slug}/best.py").status_code == 404


def test_an_unknown_slug_is_not_found(anonymous_client, shared_search):
    assert anonymous_client.get("/s/not-a-real-slug").status_code == 404


def test_the_shared_panel_opens_without_login_and_offers_no_node_download(anonymous_client, shared_search):
    best = shared_search.nodes.get(key="r1/ref/i0/k0")
    response = anonymous_client.get(f"/s/{shared_search.share_slug}/nodes/{best.id}/panel")
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="panel-diff"' in html and "kernel.py" not in html


def test_the_shared_panel_refuses_a_node_of_another_search(anonymous_client, shared_search, owner):
    other = make_finished_search(owner).nodes.get(key="r1/ref/i0/k0")
    assert anonymous_client.get(f"/s/{shared_search.share_slug}/nodes/{other.id}/panel").status_code == 404


def test_the_shared_best_kernel_downloads(anonymous_client, shared_search):
    response = anonymous_client.get(f"/s/{shared_search.share_slug}/best.py")
    assert response.status_code == 200 and b"class ModelNew" in response.content
