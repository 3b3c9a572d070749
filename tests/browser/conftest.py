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
    login_url: str = ""  # single-user mode: the link the server printed at start

    def shell(self, code: str, timeout: float = 120) -> str:
        """Run Python with Django set up against the server's database; returns its stdout."""
        done = subprocess.run([sys.executable, "manage.py", "shell", "-c", code], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, timeout=timeout)
        assert done.returncode == 0, done.stderr
        return done.stdout


def printed_url(log: Path) -> str:
    """The URL `kernelweb.serve` printed for the user to open (with the login key)."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for line in log.read_text().splitlines():
            if "running at " in line:
                return line.split("running at ", 1)[1].split()[0]
        time.sleep(0.1)
    raise RuntimeError(f"the server printed no URL:\n{log.read_text()[-3000:]}")


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


def local_login_url(url: str, data_dir: Path) -> str:
    """The single-user login link of a server started on `data_dir` (what `make run` prints)."""
    key = (data_dir / "local_login_key").read_text().strip()
    return f"{url}/accounts/local/?key={key}"


@pytest.fixture(scope="session")
def kernelweb_server(tmp_path_factory, runner_cache) -> Iterator[LiveServer]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM}")
    data = tmp_path_factory.mktemp("kernelweb-data")
    port = free_port()
    # No model keys: the browser tests use the built-in proposer and see the others disabled.
    dropped = ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "OPENAI_API_KEY", "OPENAI_BASE_URL",
               "ANTHROPIC_API_KEY")
    env = {k: v for k, v in os.environ.items() if k not in dropped}
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
        yield LiveServer(f"http://127.0.0.1:{port}", env, log, printed_url(log))
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


@pytest.fixture(scope="module")
def chromium():
    """One browser per test file: Playwright's event loop ends with the file, so the database
    tests a worker runs after it are not taken for async code."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


@pytest.fixture
def page(chromium, kernelweb_server):
    # Playwright evaluates the tests' wait_for_function strings with eval, which the site's CSP
    # forbids; test_content_security_policy.py runs the pages with the policy in force.
    context = chromium.new_context(viewport={"width": 1440, "height": 1000}, accept_downloads=True,
                                   bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.js_errors = errors
    page.goto(kernelweb_server.login_url)  # as a user would: the link printed at start
    yield page
    context.close()
    assert not errors, f"JavaScript errors: {errors}"
