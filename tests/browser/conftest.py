"""The real server for browser tests: `python -m kernelweb.serve` (daphne and a huey
consumer) on a free port, with its own SQLite database and data directory; and Debian's
chromium driven by Playwright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fixtures.net import free_port

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = ROOT / "docs" / "screenshots"


@dataclass
class LiveServer:
    url: str
    env: dict[str, str]
    log: Path

    def shell(self, code: str, timeout: float = 120) -> str:
        """Run Python with Django set up against the server's database; returns its stdout."""
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout


def wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server stopped:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"the server did not answer in {timeout} s:\n{log.read_text()[-3000:]}")


@pytest.fixture(scope="session")
def kernelweb_server(tmp_path_factory, runner_cache) -> Iterator[LiveServer]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM}")
    data = tmp_path_factory.mktemp("kernelweb-data")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update({
        "KERNELWEB_DATA_DIR": str(data), "KERNELWEB_LOCAL": "1", "DEBUG": "0", "HOST": "127.0.0.1",
        "PORT": str(port), "RUNNER_DEVICE": "cpu", "KERNELWEB_PROPOSER": "builtin", "HUEY_WORKERS": "1",
        "RUNNER_CACHE_DIR": str(runner_cache),  # builds shared with the other tests
        "PYTHONUNBUFFERED": "1",
    })
    log = data / "server.log"
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "kernelweb.serve"], cwd=ROOT, env=env,
                                   stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/", process, log)
        yield LiveServer(f"http://127.0.0.1:{port}", env, log)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


@pytest.fixture(scope="session")
def public_server(kernelweb_server) -> Iterator[LiveServer]:
    """A second web server on the same database with accounts required (single-user mode off):
    what a visitor without an account sees."""
    port = free_port()
    env = {**kernelweb_server.env, "KERNELWEB_LOCAL": "0", "SECRET_KEY": "public-server-" + "x" * 40,
           "SECURE_COOKIES": "0", "PORT": str(port)}
    log = kernelweb_server.log.with_name("public-server.log")
    with log.open("w") as out:
        process = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                    "kernelweb.asgi:application"], cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_for(f"http://127.0.0.1:{port}/accounts/login/", process, log)
        yield LiveServer(f"http://127.0.0.1:{port}", env, log)
    finally:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="session")
def chromium():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, kernelweb_server):
    context = chromium.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    yield page
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
