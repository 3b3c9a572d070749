"""How the search page's tree view copes with a large tree, in Debian's chromium.

    python benchmarks/tree_view.py [--nodes 100 300 600]

For each size: a search with that many nodes (ideas and kernels over several rounds) is written
straight to the database of a server started for the run; the page is opened and measured:
- load: navigation until every node is drawn;
- redraw: one full `tree.update()` (what each live event triggers), mean and worst of 30;
- zoom frames: 60 zoom steps, one per animation frame: mean and worst frame interval.
Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.live_server import CHROMIUM, CHROMIUM_ARGS, running_server  # noqa: E402

SEED = """
from django.utils import timezone
from search.engine.types import SearchConfig
from search.events import emit
from search.local_user import local_user
from search.models import Node, Problem, Search
from search.serialize import node_json
from tests.fixtures.web import KERNEL_SOURCE, SOFTMAX_REFERENCE, correct_verdict

target = {nodes}
problem = Problem.objects.create(owner=local_user(), name="tree view benchmark", source=SOFTMAX_REFERENCE,
                                 info={{}}, signature="")
search = Search.objects.create(owner=local_user(), problem=problem, config=SearchConfig().to_dict(),
                               status="finished", round=0, started=timezone.now(), finished=timezone.now())

def add(**fields):
    node = Node.objects.create(search=search, **fields)
    emit(search.id, "node_added", {{"node": node_json(node)}})
    return node

root = add(key="ref", kind="reference", round=0, source=SOFTMAX_REFERENCE, status="correct",
           verdict=correct_verdict(1.0), speedup=1.0, cand_ms=1.0)
seeds, count, rnd = [root], 1, 0
categories = ["memory", "async", "precision", "compute", "parallelism", "control_flow"]
while count < target:
    rnd += 1
    kernels = []
    for s, seed in enumerate(seeds):
        for i in range(4):
            idea = add(key=f"r{{rnd}}/{{s}}/i{{i}}", kind="idea", round=rnd, parent=seed,
                       category=categories[(rnd + i) % 6], idea=f"Idea {{i}} of round {{rnd}}.")
            count += 1
            for k in range(2):
                speed = 1.0 + 0.1 * rnd + 0.01 * (i * 2 + k)
                kernels.append(add(key=f"{{idea.key}}/k{{k}}", kind="kernel", round=rnd, parent=idea,
                                   source=KERNEL_SOURCE, backend="torch", status="correct",
                                   verdict=correct_verdict(speed), speedup=speed, cand_ms=1.0 / speed))
                count += 1
            if count >= target:
                break
        if count >= target:
            break
    seeds = sorted(kernels, key=lambda n: -n.speedup)[:2]
emit(search.id, "search_status", {{"status": "finished", "round": rnd, "reason": ""}})
print(search.id, count)
"""

REDRAW = """async () => {
  const k = window.kernelweb, times = [];
  for (let i = 0; i < 30; i++) {
    const t0 = performance.now();
    k.tree.update(k.state);
    await new Promise((r) => requestAnimationFrame(() => r()));
    times.push(performance.now() - t0);
  }
  return times;
}"""

ZOOM = """async () => {
  const k = window.kernelweb, gaps = [];
  let last = performance.now();
  for (let i = 0; i < 60; i++) {
    k.tree.zoomBy(i % 2 ? 0.9 : 1.1);
    await new Promise((r) => requestAnimationFrame(() => r()));
    const now = performance.now();
    gaps.push(now - last);
    last = now;
  }
  return gaps;
}"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--nodes", type=int, nargs="+", default=[100, 300, 600])
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with running_server(Path(tempfile.mkdtemp(prefix="kw-tree-bench-"))) as server, \
            sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for nodes in args.nodes:
            out = subprocess.run([sys.executable, "manage.py", "shell", "-c", SEED.format(nodes=nodes)],
                                 cwd=ROOT, env=server.env, capture_output=True, text=True, check=True)
            search_id, count = map(int, out.stdout.split()[-2:])
            page = browser.new_context(viewport={"width": 1440, "height": 1000},
                                      bypass_csp=True).new_page()  # eval'd probes
            page.goto(server.login_url)  # as the printed link logs a user in
            t0 = time.monotonic()
            page.goto(f"{server.url}/searches/{search_id}/")
            page.wait_for_function(f"document.querySelectorAll('#tree .node').length >= {count}",
                                   timeout=120_000)
            load_s = time.monotonic() - t0
            redraw = page.evaluate(REDRAW)
            zoom = page.evaluate(ZOOM)
            rows.append((count, load_s, statistics.mean(redraw), max(redraw), statistics.mean(zoom), max(zoom)))
            print(rows[-1], flush=True)
            page.close()
        browser.close()
    print("| nodes | load until drawn | redraw mean / worst | zoom frame mean / worst |")
    print("|---|---|---|---|")
    for count, load_s, r_mean, r_max, z_mean, z_max in rows:
        print(f"| {count} | {load_s:.2f} s | {r_mean:.1f} / {r_max:.1f} ms | {z_mean:.1f} / {z_max:.1f} ms |")


if __name__ == "__main__":
    main()
