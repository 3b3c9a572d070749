"""How long a search's progress takes to reach the page: from `emit()` in a worker process to the
event arriving in Debian's chromium, with no channel layer (the consumer polls the event table)
and with Redis (the consumer is woken).

    python benchmarks/live_latency.py [--events 120] [--modes polling redis]

For each mode a server is started for the run (`python -m kernelweb.serve`, single-user mode,
its own SQLite database; Redis database 11 for the Redis mode), a running search is written to
its database and opened in the page, and a separate process (as a huey worker would) calls
`emit()` every 50-250 ms, stamping each payload with the wall clock. The page records when each
websocket message arrives (same machine, same clock). Prints p50, p95 and max per mode as a
Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.live_server import CHROMIUM, CHROMIUM_ARGS, running_server  # noqa: E402

REDIS_URL = "redis://127.0.0.1:6379/11"

SEED = """
from search.local_user import local_user
from tests.fixtures.web import make_finished_search
print(make_finished_search(local_user(), status="running").id)
"""

# The worker's side: emit() with the wall clock in the payload, at irregular intervals.
EMIT = """
import random, time
from search.events import emit
rng = random.Random(7)
for i in range({events}):
    time.sleep(rng.uniform(0.05, 0.25))
    emit({search_id}, "latency_probe", {{"i": i, "t": time.time()}})
"""

# The page's side: the arrival time of every event in every websocket message.
RECORDER = """
window.arrivals = {};
const Native = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Native(...args);
  ws.addEventListener("message", (msg) => {
    const now = performance.timeOrigin + performance.now();
    let data; try { data = JSON.parse(msg.data); } catch { return; }
    const events = Array.isArray(data) ? data : Array.isArray(data.events) ? data.events : [data];
    for (const ev of events) if (ev && ev.kind === "latency_probe") window.arrivals[ev.payload.i] = now - ev.payload.t * 1000;
  });
  return ws;
};
window.WebSocket.prototype = Native.prototype;
"""


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def measure(mode: str, events: int, browser) -> list[float]:
    """Latencies in ms of `events` probes through a server in `mode` ("polling" or "redis")."""
    data = Path(tempfile.mkdtemp(prefix=f"kw-latency-{mode}-"))
    extra = {"REDIS_URL": REDIS_URL, "HUEY_NAME": f"kw-latency-{data.name}"} if mode == "redis" else {}
    with running_server(data, **extra) as server:
        env = server.env
        shell = [sys.executable, "manage.py", "shell", "-c"]
        seeded = subprocess.run(shell + [SEED], cwd=ROOT, env=env, capture_output=True, text=True,
                                check=True)
        search_id = int(seeded.stdout.split()[-1])
        page = browser.new_context(viewport={"width": 1440, "height": 1000},
                                  bypass_csp=True).new_page()  # eval'd probes
        page.goto(server.login_url)  # as the printed link logs a user in
        page.add_init_script(RECORDER)
        page.goto(f"{server.url}/searches/{search_id}/")
        page.wait_for_selector("#conn.live")
        subprocess.run(shell + [EMIT.format(events=events, search_id=search_id)], cwd=ROOT, env=env,
                       check=True, timeout=events * 2 + 60)
        page.wait_for_function(f"Object.keys(window.arrivals).length >= {events}", timeout=30_000)
        latencies = list(page.evaluate("Object.values(window.arrivals)"))
        page.close()
        return latencies


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--events", type=int, default=120)
    parser.add_argument("--modes", nargs="+", default=["polling", "redis"], choices=["polling", "redis"])
    parser.add_argument("--json", action="store_true", help="print the raw latencies as JSON too")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    results = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        for mode in args.modes:
            results[mode] = measure(mode, args.events, browser)
            print(f"{mode}: {len(results[mode])} events", flush=True)
        browser.close()
    print(f"\n{platform.node()} · {os.cpu_count()} cores · {time.strftime('%Y-%m-%d')}\n")
    print("| channel layer | events | p50 ms | p95 ms | max ms | mean ms |")
    print("|---|---|---|---|---|---|")
    for mode, values in results.items():
        label = "none (the consumer polls every 0.25 s)" if mode == "polling" else "Redis (woken)"
        print(f"| {label} | {len(values)} | {percentile(values, 0.5):.0f} | {percentile(values, 0.95):.0f} "
              f"| {max(values):.0f} | {statistics.mean(values):.0f} |")
    if args.json:
        print(json.dumps(results))


if __name__ == "__main__":
    main()
