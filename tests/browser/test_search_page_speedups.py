"""The search page shows each kernel's own speedup the way the server does: a noisy one reads
as an estimate with its interval, and neither the header's best nor the categories' best
becomes a noisy number."""

from __future__ import annotations

import pytest

from tests.browser.test_search_page_live import seed

pytestmark = pytest.mark.browser

ADD_NOISY = """
from search.events import emit
from search.models import Node, Search
from search.serialize import node_json
from tests.fixtures.web import KERNEL_SOURCE, correct_verdict
s = Search.objects.get(id={search_id})
idea = s.nodes.get(key="r1/ref/i0")
verdict = correct_verdict(3.0, noisy=True, speedup_ci=[1.5, 4.8])
node = Node.objects.create(search=s, parent=idea, key="r1/ref/i0/k7", kind="kernel", round=1,
    source=KERNEL_SOURCE, backend="torch", status="correct", verdict=verdict, speedup=3.0,
    speedup_vs_compile=2.4, cand_ms=0.5)
emit(s.id, "node_added", {{"node": node_json(node)}})
print(node.id)
"""


def test_a_noisy_kernel_reads_as_an_estimate_and_never_as_the_best(page, kernelweb_server):
    search_id = seed(kernelweb_server, status="running")
    page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
    page.wait_for_selector("#conn.live")
    node_id = int(kernelweb_server.shell(ADD_NOISY.format(search_id=search_id)).split()[-1])
    node = page.locator(f'#tree .node[data-id="{node_id}"]')
    node.wait_for()
    assert node.locator("text").text_content() == "≈3.0×"
    assert "≈3.0× (noisy, CI 1.5–4.8) over eager" in node.locator("title").text_content()
    assert page.inner_text("#stat-speedup") == "1.50×"
    memory = page.locator('#categories li[data-category="memory"]')
    assert "1.50×" in memory.inner_text() and "3.0" not in memory.inner_text()
    node.click()
    page.wait_for_selector(f'.panel[data-node-id="{node_id}"]')
    assert "≈3.0× (noisy, CI 1.5–4.8)" in page.inner_text("#panel")


BEST_IS_NOISY = """
from search.engine.speedups import speedup_of
from search.events import emit
from search.models import Node
node = Node.objects.get(id={node_id})
emit(node.search_id, "best_changed", {{"node_id": node.id, **speedup_of(node).to_dict()}})
"""


def test_a_noisy_best_shows_its_estimate_and_interval_within_the_header(page, kernelweb_server):
    # Where every correct kernel is noisy the best is an estimate: the header says so, its
    # interval on a line of its own inside the cell.
    search_id = seed(kernelweb_server, status="running")
    page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
    page.wait_for_selector("#conn.live")
    node_id = int(kernelweb_server.shell(ADD_NOISY.format(search_id=search_id)).split()[-1])
    page.locator(f'#tree .node[data-id="{node_id}"]').wait_for()
    kernelweb_server.shell(BEST_IS_NOISY.format(node_id=node_id))
    page.wait_for_function("document.getElementById('stat-speedup').textContent.startsWith('≈')")
    assert page.inner_text("#stat-speedup") == "≈3.0×\nnoisy, CI 1.5–4.8"
    for cell in ("#stat-speedup", "#stat-compile"):
        assert page.evaluate("(sel) => { const e = document.querySelector(sel);"
                             " return e.scrollWidth <= e.clientWidth; }", cell), cell
