"""The whole user journey in a real browser, on the real server, runner and worker:
paste an example, start a built-in search on the CPU, watch the tree grow, open a node,
download the best kernel and run it, share the page and open it logged out."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

from tests.browser.conftest import ROOT, SCREENSHOTS

pytestmark = pytest.mark.browser

EXAMPLE = "softmax_manual"
SEARCH_TIMEOUT_MS = 360_000  # C++ builds take ~30 s each on two cores
# Records every stage a kernel node of the tree shows (drawn), every kernel status the stream
# delivers (a stage shorter than the stream's polling can be drawn over within one frame), and
# for both whether round 1 had ended by then.
STAGE_RECORDER = """
window.stagesSeen = []; window.statusesStreamed = [];
const roundEnded = () => !!(window.kernelweb && window.kernelweb.state.roundsFinished.has(1));
new MutationObserver((changes) => {
  for (const c of changes) {
    const g = c.target;
    if (!g.classList || !g.classList.contains("kind-kernel")) continue;
    window.stagesSeen.push([Number(g.dataset.id), g.dataset.status, roundEnded()]);
  }
}).observe(document, { subtree: true, attributes: true, attributeFilter: ["data-status"] });
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener("message", (msg) => {
    let data; try { data = JSON.parse(msg.data); } catch { return; }
    const events = Array.isArray(data) ? data : Array.isArray(data.events) ? data.events : [data];
    let ended = roundEnded();
    for (const ev of events) {
      if (ev && ev.kind === "round_finished" && ev.payload.round === 1) ended = true;
      const node = ev && ev.payload && ev.payload.node;
      if (node && node.kind === "kernel") window.statusesStreamed.push([node.id, node.status, ended]);
    }
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
"""
FINAL = ("correct", "incorrect", "compile_error", "runtime_error", "timeout", "rejected")


def before_round_end(seen: list[list]) -> dict[int, list[str]]:
    """Each kernel's statuses, in order, recorded before round 1 ended."""
    during: dict[int, list[str]] = {}
    for node_id, status, round_ended in seen:
        if not round_ended:
            during.setdefault(node_id, []).append(status)
    return during


def runner_present() -> bool:
    return importlib.util.find_spec("gpurunner.api") is not None


@pytest.mark.skipif(not runner_present(), reason="the runner (gpurunner.api) is not installed")
def test_paste_start_watch_open_download_share(page, chromium, kernelweb_server, public_server, tmp_path):
    url = kernelweb_server.url
    page.goto(url + "/")
    page.click(f'[data-example="{EXAMPLE}"]')
    reference = (ROOT / "examples" / f"{EXAMPLE}.py").read_text()
    assert page.input_value("#id_reference") == reference
    page.select_option("#id_proposer", "builtin")
    page.select_option("#id_device", "cpu")
    page.fill("#id_rounds", "1")  # one round: a library rewrite and a C++ build (~45 s on 2 cores)
    page.fill("#id_ideas_per_round", "2")
    page.fill("#id_impls_per_idea", "1")
    page.fill("#id_title", "Hand-written softmax, built-in proposer on the CPU")
    page.add_init_script(STAGE_RECORDER)
    with page.expect_navigation(timeout=120_000):
        page.click("#start")
    assert "/searches/" in page.url, page.inner_text("main")[:2000]
    search_path = page.url[len(url):]
    # Nothing to download yet: the button says so instead of failing on a 404.
    assert page.get_attribute("#download-best", "aria-disabled") == "true"

    # Mid-round: kernels in different stages, each coloured by its own.
    page.wait_for_selector("#tree .node.st-compiling, #tree .node.st-checking, #tree .node.st-timing",
                           timeout=SEARCH_TIMEOUT_MS)
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "search-mid-round.png"))

    # The tree grows live: ideas, then kernels that settle into final statuses.
    page.wait_for_selector("#tree .node.kind-idea", timeout=SEARCH_TIMEOUT_MS)
    page.wait_for_selector("#tree .node.kind-kernel", timeout=SEARCH_TIMEOUT_MS)
    page.wait_for_function(
        "['finished', 'failed', 'cancelled'].includes(document.getElementById('stat-status').textContent)",
        timeout=SEARCH_TIMEOUT_MS)
    assert page.inner_text("#stat-status") == "finished", kernelweb_server.log.read_text()[-3000:]
    assert page.locator("#tree .node.kind-kernel:not(.pending)").count() >= 1
    assert page.locator("#tree .node.kind-kernel.best").count() == 1, "no correct kernel was found"
    # A kernel changed colour through its stages, verdict included, before its round ended;
    # the stream delivered every stage of one kernel, in order, before the round ended.
    drawn = before_round_end(page.evaluate("window.stagesSeen"))
    assert any(set(statuses) & {"compiling", "checking", "timing"} and statuses[-1] in FINAL
               for statuses in drawn.values()), drawn
    streamed = before_round_end(page.evaluate("window.statusesStreamed"))
    stages = ["queued", "compiling", "checking", "timing"]
    assert any([s for s in statuses if s != "proposed"][:4] == stages and statuses[-1] in FINAL
               for statuses in streamed.values()), streamed
    assert page.get_attribute("#download-best", "aria-disabled") == "false"

    # Open the best kernel: highlighted source and diff against the reference.
    page.locator("#tree .node.kind-kernel.best .shape").click()  # the circle, not its label
    page.wait_for_selector("#panel-source .hl")
    page.wait_for_selector("#panel-diff .gi")
    assert page.locator("#checks tr.pass").count() >= 1
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "search-tree.png"), full_page=True)

    # Download the best kernel and run it on the example's inputs in a fresh interpreter.
    with page.expect_download() as download:
        page.click("#download-best")
    best = tmp_path / "best.py"
    download.value.save_as(best)
    ref_file = tmp_path / "reference.py"
    ref_file.write_text(reference)
    script = textwrap.dedent(f"""
        import importlib.util, torch
        def load(path, name):
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
        ref = load({str(ref_file)!r}, "ref"); cand = load({str(best)!r}, "cand")
        torch.manual_seed(0); x = ref.get_inputs()
        torch.manual_seed(1); new = cand.ModelNew(*ref.get_init_inputs())
        torch.manual_seed(1); old = ref.Model(*ref.get_init_inputs())
        assert torch.allclose(new(*x), old(*x), atol=1e-2, rtol=1e-2)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          cwd=tmp_path)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stderr[-3000:]

    # Share, then open the public page logged out: a fresh browser context on a server of the
    # same database that requires accounts, where this visitor has none.
    page.click("#share")
    share_url = page.input_value("#share-url")
    assert "/s/" in share_url
    public_share_url = share_url.replace(url, public_server.url)
    context = chromium.new_context(bypass_csp=True)  # the tests' own scripts use eval
    try:
        public = context.new_page()
        public.goto(public_server.url + search_path)
        assert "/accounts/login/" in public.url  # the search itself is the owner's alone
        public.goto(public_share_url)
        public.wait_for_selector("#tree .node.kind-kernel.best")
        assert public.locator("#best-kernel .hl").count() == 1
        assert public.locator("#cancel, #share, #revoke").count() == 0
        assert search_path not in public.content()
    finally:
        context.close()
