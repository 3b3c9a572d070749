"""The search page in a real browser against a search written straight to the database:
the tree draws, a node opens with highlighted code and diff, new events arrive live and a
dropped connection resumes without losing or repeating events."""

from __future__ import annotations

import json

import pytest

from tests.browser.conftest import SCREENSHOTS

pytestmark = pytest.mark.browser

SEED = """
from search.local_user import local_user
from tests.fixtures.web import make_finished_search
s = make_finished_search(local_user(), status={status!r})
print(s.id)
"""

ADD_KERNEL = """
import json
from search.events import emit
from search.models import Node, Search
from search.serialize import node_json
from tests.fixtures.web import KERNEL_SOURCE, correct_verdict
s = Search.objects.get(id={search_id})
idea = s.nodes.get(key="r1/ref/i0")
node = Node.objects.create(search=s, parent=idea, key="r1/ref/i0/k{n}", kind="kernel", round=1,
    source=KERNEL_SOURCE, backend="torch", status="correct", verdict=correct_verdict({speedup}),
    speedup={speedup}, speedup_vs_compile=1.1, cand_ms=1.5 / {speedup})
emit(s.id, "node_added", {{"node": node_json(node)}})
print(node.id)
"""


def seed(kernelweb_server, status: str = "finished") -> int:
    return int(kernelweb_server.shell(SEED.format(status=status)).strip().splitlines()[-1])


def tree_ids(page) -> list[int]:
    return page.eval_on_selector_all("#tree .node", "els => els.map(e => Number(e.dataset.id))")


def test_the_tree_draws_and_a_node_opens_with_code_and_diff(page, kernelweb_server):
    search_id = seed(kernelweb_server)
    page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
    page.wait_for_selector("#tree .node.kind-kernel")
    assert len(tree_ids(page)) == 6
    assert page.locator("#tree .node.best").count() >= 2  # the reference and the best kernel
    assert page.locator("#tree .edge.best").count() == 2
    assert page.inner_text("#stat-speedup") == "1.50×"
    assert page.locator("#lineage li[data-id]").count() == 2
    # Which kinds of idea paid off: the memory idea's kernel reached 1.5x, one of its two correct.
    memory = page.locator('#categories li[data-category="memory"]')
    assert memory.count() == 1 and "1.50×" in memory.inner_text() and "1/2" in memory.inner_text()
    page.locator("#tree .node.best.kind-kernel").click()
    page.wait_for_selector("#panel-source .hl")
    assert page.locator("#panel-diff .gi").count() > 0
    assert "correctness" in page.inner_text("#checks")
    page.wait_for_selector("#conn.done")  # a finished search's pill says so, not "live"
    assert page.inner_text("#conn") == "finished"


def test_events_arrive_live_and_survive_a_dropped_connection(page, kernelweb_server):
    search_id = seed(kernelweb_server, status="running")
    page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
    page.wait_for_selector("#conn.live")
    before = len(tree_ids(page))
    kernelweb_server.shell(ADD_KERNEL.format(search_id=search_id, n=5, speedup=1.8))
    page.wait_for_function(f"document.querySelectorAll('#tree .node').length === {before + 1}")
    # Drop the socket, add an event while it is down: the reconnect replays it once.
    page.evaluate("window.kernelweb.stream.drop()")
    kernelweb_server.shell(ADD_KERNEL.format(search_id=search_id, n=6, speedup=2.0))
    page.wait_for_function(f"document.querySelectorAll('#tree .node').length === {before + 2}", timeout=20000)
    seen = json.loads(page.evaluate("JSON.stringify([...window.kernelweb.state.nodes.keys()])"))
    assert len(seen) == len(set(seen)) == before + 2
    assert page.locator("#tree .node").count() == before + 2


def test_the_share_page_opens_logged_out(chromium, kernelweb_server):
    search_id = seed(kernelweb_server)
    slug = kernelweb_server.shell(
        f"from search.models import Search; from search.services import share_search\n"
        f"print(share_search(Search.objects.get(id={search_id})))").strip().splitlines()[-1]
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.goto(kernelweb_server.url + slug)
        page.wait_for_selector("#tree .node.kind-kernel")
        assert "1.50x faster" in page.get_attribute('meta[name="description"]', "content")
        assert page.locator("#best-kernel .hl").count() == 1
        assert page.locator("#cancel, #share, #revoke").count() == 0
        page.locator("#tree .node.best.kind-kernel").click()
        page.wait_for_selector("#panel-diff .gi")
    finally:
        context.close()


def test_screenshot_of_the_new_search_page(page, kernelweb_server):
    page.goto(kernelweb_server.url + "/")
    page.click('[data-example="softmax"]')
    assert "class Model" in page.input_value("#id_reference")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "new-search.png"))


def test_a_refused_reference_keeps_the_text_and_marks_the_line(page, kernelweb_server):
    page.goto(kernelweb_server.url + "/")
    page.click('[data-example="softmax"]')
    broken = page.input_value("#id_reference").replace("def forward(self, x: torch.Tensor) -> torch.Tensor:",
                                                       "def forward(self, x) ->:")
    page.fill("#id_reference", broken)
    page.click("#start")
    page.wait_for_selector("#reference-error")
    line = next(i for i, text in enumerate(broken.splitlines(), 1) if "def forward(self, x) ->:" in text)
    assert page.inner_text("#gutter .err") == str(line)
    assert f"Line {line}" in page.inner_text("#reference-error")
    assert page.input_value("#id_reference") == broken


ADD_STAGED = """
from search.events import emit
from search.models import Node, Search
from search.serialize import node_json
from tests.fixtures.web import KERNEL_SOURCE
s = Search.objects.get(id={search_id})
idea = s.nodes.get(key="r1/ref/i0")
node = Node.objects.create(search=s, parent=idea, key="r1/ref/i0/k{n}", kind="kernel", round=1,
    source=KERNEL_SOURCE, backend="torch", status={status!r})
emit(s.id, "node_added", {{"node": node_json(node)}})
print(node.id)
"""

SETTLE = """
from search.events import emit
from search.models import Node
from search.serialize import node_json
from tests.fixtures.web import correct_verdict
node = Node.objects.get(id={node_id})
node.status, node.verdict, node.speedup, node.cand_ms = "correct", correct_verdict(1.2), 1.2, 1.25
node.save()
emit(node.search_id, "node_updated", {{"node": node_json(node)}})
"""


def counts(page) -> tuple[int, int, str]:
    evaluated, rest = page.inner_text("#stat-candidates").split("/", 1)
    planned, _, detail = rest.strip().partition(" ")
    return int(evaluated), int(planned), detail


def test_the_header_counts_what_is_evaluated_running_and_queued_as_it_changes(page, kernelweb_server):
    search_id = seed(kernelweb_server, status="running")
    page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
    page.wait_for_selector("#conn.live")
    compiling = int(kernelweb_server.shell(
        ADD_STAGED.format(search_id=search_id, n=8, status="compiling")).split()[-1])
    kernelweb_server.shell(ADD_STAGED.format(search_id=search_id, n=9, status="queued"))
    page.wait_for_function("document.getElementById('stat-candidates').textContent.includes('1 queued')")
    evaluated, planned, detail = counts(page)
    assert planned == evaluated + 2 and "1 running" in detail and "1 queued" in detail, detail
    kernelweb_server.shell(SETTLE.format(node_id=compiling))
    page.wait_for_function("!document.getElementById('stat-candidates').textContent.includes('running')")
    now_evaluated, now_planned, detail = counts(page)
    assert (now_evaluated, now_planned) == (evaluated + 1, planned) and "1 queued" in detail, detail
