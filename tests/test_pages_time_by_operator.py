"""The node panel shows where a kernel's profiled call spent its time, slowest operator first,
with each one's share; a kernel without a profile shows no such table."""

from __future__ import annotations

import re

from tests.fixtures.web import correct_verdict, make_finished_search
from tests.test_pages_roofline_label import add_kernel


def test_the_panel_lists_the_slowest_operators_with_their_share(owner, owner_client):
    search = make_finished_search(owner)
    profile = {"total_us": 200.0, "ops": {"aten::empty": 10.0, "softmax_rows_kernel": 150.0,
                                          "aten::copy_": 40.0}}
    node = add_kernel(search, "r1/ref/i0/k7", correct_verdict(2.0, profile=profile))
    html = owner_client.get(f"/searches/{search.id}/nodes/{node.id}/panel").content.decode()
    table = html.split('id="time-by-operator"', 1)[1].split("</table>", 1)[0]
    names = re.findall(r'<td class="mono">([^<]+)</td>', table)
    assert names == ["softmax_rows_kernel", "aten::copy_", "aten::empty"]
    assert "150.0 µs" in table and "75%" in table


def test_a_kernel_without_a_profile_shows_no_table(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k8", correct_verdict(2.0))
    html = owner_client.get(f"/searches/{search.id}/nodes/{node.id}/panel").content.decode()
    assert "time-by-operator" not in html
