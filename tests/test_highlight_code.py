"""Server-side highlighting of kernel sources and of diffs against the parent kernel."""

from __future__ import annotations

from search.highlight import highlight_diff, highlight_source, stylesheet, unified_diff


def test_source_is_highlighted_and_escaped():
    html = highlight_source('def f():\n    return "<script>"\n')
    assert '<span class="k">def</span>' in html
    assert "<script>" not in html and "&lt;script&gt;" in html


def test_diff_marks_removed_and_added_lines():
    html = highlight_diff("a = 1\nb = 2\n", "a = 1\nb = 3\n", "reference", "node 7")
    assert '<span class="gd">--- reference</span>' in html
    assert '<span class="gi">+++ node 7</span>' in html
    assert '<span class="gd">-b = 2</span>' in html
    assert '<span class="gi">+b = 3</span>' in html


def test_identical_sources_have_no_diff():
    assert highlight_diff("x = 1\n", "x = 1\n") == ""


def test_a_last_line_without_newline_stays_on_its_own_line():
    diff = unified_diff("a\nb", "a\nc")
    assert "-b\n+c\n" in diff


def test_the_stylesheet_colours_diff_lines():
    css = stylesheet()
    assert ".hl .gd" in css and ".hl .gi" in css
