"""The node panel fragment: idea, highlighted code and diff, checks, timings, cost."""

from __future__ import annotations

import pytest

from tests.fixtures.web import make_finished_search

pytestmark = pytest.mark.django_db


def node(search, key):
    return search.nodes.get(key=key)


def test_a_kernel_panel_shows_idea_code_diff_checks_and_timings(owner_client, finished_search):
    best = node(finished_search, "r1/ref/i0/k0")
    response = owner_client.get(f"/searches/{finished_search.id}/nodes/{best.id}/panel")
    assert response.status_code == 200
    html = response.content.decode()
    assert "Fuse max, exp and sum into one pass" in html
    assert 'id="panel-source"' in html and '<span class="k">class</span>' in html
    # The diff against the reference: its lines removed, the kernel's added, highlighted.
    assert 'id="panel-diff"' in html and "Diff against the reference" in html
    assert '<span class="gi">+class ModelNew' in html
    assert '<span class="gd">-class Model' in html
    for name in ("correctness", "inputs_unchanged", "roofline_floor"):
        assert name in html
    assert "3/3 passed" in html
    assert "1 ms" in html and "± 3%" in html  # kernel time with spread
    assert "1.50×" in html and "12.5%" in html  # speedup and roofline percent
    assert f"/searches/{finished_search.id}/nodes/{best.id}/kernel.py" in html


def test_a_failed_kernel_panel_shows_the_failed_check_and_the_error(owner_client, finished_search):
    wrong = node(finished_search, "r1/ref/i0/k1")
    html = owner_client.get(f"/searches/{finished_search.id}/nodes/{wrong.id}/panel").content.decode()
    assert "✗ fail" in html and "max abs err 0.9" in html
    assert "output mismatch" in html


def test_an_idea_panel_lists_its_implementations(owner_client, finished_search):
    idea = node(finished_search, "r1/ref/i0")
    html = owner_client.get(f"/searches/{finished_search.id}/nodes/{idea.id}/panel").content.decode()
    assert "Memory access" in html
    for key in ("r1/ref/i0/k0", "r1/ref/i0/k1"):
        assert f'data-open-node="{node(finished_search, key).id}"' in html


def test_the_panel_escapes_code(owner_client, owner):
    search = make_finished_search(owner)
    kernel = node(search, "r1/ref/i0/k0")
    kernel.source = kernel.source + '\n# </script><img src=x onerror=alert(1)>\n'
    kernel.save()
    html = owner_client.get(f"/searches/{search.id}/nodes/{kernel.id}/panel").content.decode()
    assert "<img src=x" not in html and "&lt;img src=x" in html


def test_another_users_node_is_not_found(stranger_client, finished_search):
    best = node(finished_search, "r1/ref/i0/k0")
    assert stranger_client.get(f"/searches/{finished_search.id}/nodes/{best.id}/panel").status_code == 404


def test_a_node_of_another_search_is_not_found_under_this_one(owner_client, owner, finished_search):
    other = make_finished_search(owner)
    best = node(other, "r1/ref/i0/k0")
    assert owner_client.get(f"/searches/{finished_search.id}/nodes/{best.id}/panel").status_code == 404
