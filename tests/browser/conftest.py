"""The real server for browser tests: `python -m kernelweb.serve` (daphne and a huey
consumer) on a free port, with its own SQLite database and data directory; and Debian's
chromium driven by Playwright."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fixtures.live_server import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    LiveServer,
    running_server,
    wait_for,
)
from tests.fixtures.net import free_port

SCREENSHOTS = ROOT / "docs" / "screenshots"
__all__ = ["ROOT", "SCREENSHOTS"]


@pytest.fixture(scope="session")
def kernelweb_server(tmp_path_factory, runner_cache) -> Iterator[LiveServer]:
    if not Path(CHROMIUM).exists():
        pytest.skip(f"no chromium at {CHROMIUM}")
    # No model keys: the browser tests use the built-in proposer and see the others disabled.
    with running_server(tmp_path_factory.mktemp("kernelweb-data"), KERNELWEB_PROPOSER="builtin",
                        HUEY_WORKERS="1",
                        RUNNER_CACHE_DIR=str(runner_cache)) as server:  # builds shared with other tests
        yield server


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
