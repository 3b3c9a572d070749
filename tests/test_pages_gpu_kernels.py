"""The node panel lists a GPU kernel's own kernels: registers, local memory (flagged when a
kernel spills), static shared memory and Nsight Compute's counters; a kernel without them
shows no table, and a missing profile says why."""

from __future__ import annotations

import re

from tests.fixtures.web import correct_verdict, make_finished_search
from tests.test_pages_roofline_label import add_kernel

KERNELS = [
    {"name": "softmax_rows(const float *, float *, int)", "registers": 40, "local_bytes": 0,
     "shared_bytes": 2048, "launches": 1, "duration_us": 61.2, "dram_pct": 88.2, "sm_pct": 12.1,
     "occupancy_pct": 81.5, "theoretical_occupancy_pct": 100.0, "from": "cuobjdump"},
    {"name": "<b>spills</b>", "registers": 24, "local_bytes": 560, "shared_bytes": 0,
     "from": "cuobjdump"},
]


def panel(owner_client, search, node) -> str:
    return owner_client.get(f"/searches/{search.id}/nodes/{node.id}/panel").content.decode()


def test_the_panel_lists_each_kernels_registers_and_counters(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k9", correct_verdict(2.0, device="cuda", kernels=KERNELS))
    html = panel(owner_client, search, node)
    table = html.split('id="gpu-kernels"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", table, re.S)[1:]
    first = re.findall(r"<td[^>]*>(.*?)</td>", rows[0])
    assert first == ["softmax_rows(const float *, float *, int)", "40", "0\xa0bytes", "2.0\xa0KB",
                     "61.2 µs", "88.2%", "12.1%", "81.5% / 100.0%"]
    assert "Nsight Compute's counters for one call" in html


def test_a_spilling_kernel_is_flagged_and_its_name_escaped(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k10", correct_verdict(2.0, device="cuda", kernels=KERNELS))
    html = panel(owner_client, search, node)
    assert "&lt;b&gt;spills&lt;/b&gt;" in html and "<b>spills</b>" not in html
    assert re.search(r'<td class="warn" title="register spills[^"]*">560\xa0bytes</td>', html)


def test_missing_counters_say_why(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k11", correct_verdict(
        2.0, device="cuda", kernels=KERNELS[1:],
        kernels_note="Nsight Compute (ncu) is not installed on this GPU host"))
    html = panel(owner_client, search, node)
    assert "No Nsight Compute counters: Nsight Compute (ncu) is not installed" in html
    assert "counters for one call" not in html


def test_a_cpu_kernel_shows_no_table(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k12", correct_verdict(2.0))
    assert "gpu-kernels" not in panel(owner_client, search, node)
