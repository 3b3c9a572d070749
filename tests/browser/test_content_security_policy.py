"""The pages work with the Content-Security-Policy in force: the new-search page, a live search
page (tree, panel, websocket) and the share page run with no violation and no script error."""

from __future__ import annotations

import pytest

from tests.browser.test_search_page_live import seed

pytestmark = pytest.mark.browser


def test_the_pages_run_under_the_policy(chromium, kernelweb_server):
    context = chromium.new_context(viewport={"width": 1440, "height": 1000})  # policy enforced
    page = context.new_page()
    problems: list[str] = []
    page.on("pageerror", lambda exc: problems.append(str(exc)))
    page.on("console", lambda msg: problems.append(msg.text) if "Content Security Policy" in msg.text else None)
    search_id = None
    try:
        page.goto(kernelweb_server.login_url)
        page.wait_for_selector("#id_reference")
        search_id = seed(kernelweb_server, "running")  # a running search keeps its socket open
        page.goto(f"{kernelweb_server.url}/searches/{search_id}/")
        page.wait_for_selector("#tree .node.kind-kernel")
        page.locator("#tree .node.best.kind-kernel").click()
        page.wait_for_selector("#panel-diff .gi")
        page.wait_for_selector(".conn.live")  # the websocket connected
        page.goto(f"{kernelweb_server.url}/api/docs")
        page.wait_for_selector(".swagger-ui .opblock")
    finally:
        context.close()
        if search_id is not None:  # a search left "running" would hold the local user's slot
            kernelweb_server.shell(f"from search.models import Search\n"
                                   f"Search.objects.filter(id={search_id}).update(status='finished')")
    assert not problems, problems
