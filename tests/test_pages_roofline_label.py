"""The node panel says which ceiling a roofline percent was taken against, and shows no
roofline and no rates for a CPU kernel."""

from __future__ import annotations

from search.models import Node
from tests.fixtures.web import KERNEL_SOURCE, correct_verdict, make_finished_search


def add_kernel(search, key: str, verdict: dict) -> Node:
    idea = Node.objects.get(search=search, key="r1/ref/i0")
    return Node.objects.create(search=search, parent=idea, key=key, kind="kernel", round=1,
                               source=KERNEL_SOURCE, status="correct", verdict=verdict,
                               speedup=verdict["speedup"], cand_ms=verdict["cand_ms"])


def test_a_gpu_kernel_names_its_bound_and_ceiling(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k5", correct_verdict(
        2.0, device="cuda", roofline_pct=16.4, roofline_bound="tf32", roofline_peak=400e12,
        achieved_gbps=343.0, achieved_tflops=65.8))
    html = owner_client.get(f"/searches/{search.id}/nodes/{node.id}/panel").content.decode()
    assert "16.4% of the tf32 compute bound (400 TFLOP/s)" in html
    assert "343 GB/s" in html and "65.8 TFLOP/s" in html


def test_a_cpu_kernel_shows_no_roofline_and_no_rates(owner, owner_client):
    search = make_finished_search(owner)
    node = add_kernel(search, "r1/ref/i0/k6", correct_verdict(
        2.0, roofline_pct=None, achieved_gbps=None, achieved_tflops=None))
    html = owner_client.get(f"/searches/{search.id}/nodes/{node.id}/panel").content.decode()
    assert "none on the CPU" in html
    assert "GB/s" not in html and "TFLOP/s" not in html
