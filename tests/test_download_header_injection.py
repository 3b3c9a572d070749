"""A downloaded kernel's header is comments only, whatever a field holds: a name with line
breaks cannot smuggle code into best.py, and the share page shows the very file that runs."""

from __future__ import annotations

import ast
import html
import re
import subprocess
import sys

import pytest

from search.kernel_file import comment_line, header_lines
from tests.fixtures.web import make_finished_search

pytestmark = pytest.mark.django_db

BREAKS = ["\n", "\r", "\r\n", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\x85", "\u2028", "\u2029", "\x00"]


def hostile_name(marker: str, brk: str = "\n") -> str:
    return f"Softmax{brk}import os; os.system('touch {marker}'){brk}#"


def header_of(text: str) -> str:
    return text.split("\n\n", 1)[0]


@pytest.mark.parametrize("brk", BREAKS, ids=[f"U+{ord(b[0]):04X}" for b in BREAKS])
def test_no_line_break_ends_the_comment(brk):
    line = comment_line(f"# name: a{brk}import os")
    assert len(line.splitlines()) == 1 and "\x00" not in line
    assert ast.parse(line).body == []


def test_bobs_shared_name_with_newlines_downloads_as_a_harmless_header(bob, tmp_path, anonymous_client):
    marker = tmp_path / "pwned"
    search = make_finished_search(bob, shared=True)
    search.problem.name = hostile_name(marker)
    search.problem.save()
    best = search.best_node
    best.idea = "Fuse rows.\u2028import os; os.system('touch x')"
    best.verdict = {**best.verdict, "device_name": "cpu\rimport os", "reason": "ok\x0cimport os"}
    best.save()
    text = anonymous_client.get(f"/s/{search.share_slug}/best.py").content.decode()
    header = header_of(text)
    assert all(line.startswith("#") for line in header.splitlines())
    assert len(header.splitlines()) == len(header_lines(search, best))
    assert ast.parse(header).body == []  # comments only: nothing to execute
    assert "import os; os.system" in header  # shown, escaped, not hidden
    done = subprocess.run([sys.executable, "-c", header], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert not marker.exists()


def test_the_share_page_shows_the_downloaded_file_exactly(bob, anonymous_client, tmp_path):
    search = make_finished_search(bob, shared=True)
    search.problem.name = hostile_name(tmp_path / "pwned", "\u2028")
    search.problem.save()
    downloaded = anonymous_client.get(f"/s/{search.share_slug}/best.py").content.decode()
    page = anonymous_client.get(f"/s/{search.share_slug}").content.decode()
    block = page.split('id="best-kernel"', 1)[1].split("</pre>", 1)[0]
    block = re.sub(r'<span class="linenos">[^<]*</span>', "", block.split("<code>", 1)[1])
    shown = html.unescape(re.sub(r"<[^>]+>", "", block))
    assert shown == downloaded
