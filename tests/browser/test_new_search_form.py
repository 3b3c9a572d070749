"""The new-search page in a real browser: after a long paste the runner's error is in view
without scrolling, next to its highlighted line; a proposer without its key cannot be started."""

from __future__ import annotations

import pytest

from tests.browser.conftest import SCREENSHOTS
from tests.fixtures.web import SOFTMAX_REFERENCE

pytestmark = pytest.mark.browser

IN_VIEW = """(el) => { const r = el.getBoundingClientRect();
  return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight; }"""


def test_an_error_after_a_long_paste_is_in_view_without_scrolling(page, kernelweb_server):
    page.goto(kernelweb_server.url + "/")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.click('[data-example="softmax"]')
    page.screenshot(path=str(SCREENSHOTS / "new-search.png"))
    lines = SOFTMAX_REFERENCE.splitlines() + [f"# note {i}" for i in range(300)] + ["this is ( broken"]
    page.fill("#id_reference", "\n".join(lines) + "\n")
    with page.expect_navigation():
        page.click("#start")
    error = page.locator("#reference-error")
    assert f"Line {len(lines)}" in error.inner_text()
    assert error.evaluate(IN_VIEW), "the error is off screen"
    assert page.locator("#gutter div.err").evaluate(IN_VIEW), "the error's line is off screen"
    assert page.locator("#start").evaluate(IN_VIEW), "Start is off screen"
    assert page.input_value("#id_reference").rstrip("\n").endswith("this is ( broken")


def test_a_proposer_without_its_key_cannot_be_started(page, kernelweb_server):
    page.goto(kernelweb_server.url + "/")
    openai = page.locator('#id_proposer option[value="openai"]')
    assert openai.is_disabled()
    assert "OPENAI_API_KEY is not set" in openai.inner_text()
    # A form tampered with to enable the option is still refused, by the field.
    page.click('[data-example="softmax"]')
    page.evaluate("""() => { const s = document.getElementById('id_proposer');
      s.querySelector('option[value=openai]').disabled = false; s.value = 'openai'; }""")
    before = kernelweb_server.shell("from search.models import Search; print(Search.objects.count())")
    with page.expect_navigation():
        page.click("#start")
    assert "OPENAI_API_KEY is not set" in page.locator("#id_proposer ~ ul.errorlist").inner_text()
    after = kernelweb_server.shell("from search.models import Search; print(Search.objects.count())")
    assert after == before
