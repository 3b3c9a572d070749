"""`python -m kernelweb.serve`: migrates, starts daphne and a huey consumer, prints the URL,
answers HTTP, and stops both children cleanly on Ctrl-C (SIGINT)."""

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.fixtures.net import free_port

ROOT = Path(__file__).resolve().parent.parent


def children_of(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(pid)], capture_output=True, text=True)
    return [int(p) for p in out.stdout.split()]


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = subprocess.run(["ps", "-o", "stat=", "-p", str(pid)], capture_output=True, text=True).stdout.strip()
    return bool(state) and not state.startswith("Z")


def test_it_serves_and_stops_both_children_on_ctrl_c(tmp_path):
    port = free_port()
    env = {**os.environ, "KERNELWEB_DATA_DIR": str(tmp_path), "PORT": str(port), "HOST": "127.0.0.1",
           "KERNELWEB_LOCAL": "1", "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("REDIS_URL", None)
    proc = subprocess.Popen([sys.executable, "-m", "kernelweb.serve"], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        line = proc.stdout.readline()
        while line and "running at" not in line:
            line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/" in line
        kids = children_of(proc.pid)
        assert len(kids) == 2
        body = None
        for _ in range(150):  # daphne needs a moment to bind
            try:
                body = urllib.request.urlopen(f"http://127.0.0.1:{port}/api/openapi.json", timeout=2).read()
                break
            except OSError:
                time.sleep(0.2)
        assert body is not None and b"/api/searches" in body
        # The printed URL just works in a browser (it logs in as the local user); the bare
        # address does not: another OS user on this host reaches it too.
        printed = line.split("running at ", 1)[1].split()[0]
        assert "/accounts/local/?key=" in printed
        bare = urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=10)
        assert "/accounts/login/" in bare.url
        browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor())
        page = browser.open(printed, timeout=30)
        assert page.url == f"http://127.0.0.1:{port}/" and b"Start search" in page.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) == 0
        assert not [k for k in kids if alive(k)]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_it_refuses_single_user_mode_on_a_public_interface(tmp_path):
    env = {**os.environ, "KERNELWEB_DATA_DIR": str(tmp_path), "HOST": "0.0.0.0", "KERNELWEB_LOCAL": "1"}
    out = subprocess.run([sys.executable, "-m", "kernelweb.serve"], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 2 and "KERNELWEB_LOCAL=0" in out.stderr


pytestmark = pytest.mark.filterwarnings("ignore::ResourceWarning")
