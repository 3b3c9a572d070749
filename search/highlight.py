"""Server-side syntax highlighting: kernel sources and their diff against the parent kernel."""

from __future__ import annotations

import difflib

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import DiffLexer, PythonLexer

# One CSS class prefix for every highlighted block, so one stylesheet styles them all.
CSS_CLASS = "hl"
STYLE = "monokai"


def _formatter(linenos: bool) -> HtmlFormatter:
    return HtmlFormatter(cssclass=CSS_CLASS, linenos="inline" if linenos else False, wrapcode=True)


def highlight_source(source: str, linenos: bool = True) -> str:
    """Return `source` as highlighted HTML (Python lexer; CUDA strings stay readable).

    The result is safe to insert into a page: pygments escapes every character of the input.
    """
    return highlight(source, PythonLexer(), _formatter(linenos))


def unified_diff(parent_source: str, source: str, parent_name: str = "parent",
                 name: str = "kernel", context: int = 3) -> str:
    """Return the unified diff from `parent_source` to `source` ('' when they are identical)."""
    lines = difflib.unified_diff(
        parent_source.splitlines(keepends=True),
        source.splitlines(keepends=True),
        fromfile=parent_name,
        tofile=name,
        n=context,
    )
    # A last line without a newline would glue onto the next diff line.
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def highlight_diff(parent_source: str, source: str, parent_name: str = "parent",
                   name: str = "kernel") -> str:
    """Return the highlighted unified diff of two sources, or '' when nothing changed."""
    diff = unified_diff(parent_source, source, parent_name, name)
    if not diff:
        return ""
    return highlight(diff, DiffLexer(), _formatter(linenos=False))


def stylesheet() -> str:
    """Return the CSS for highlighted blocks (written once into static/css/pygments.css)."""
    return HtmlFormatter(style=STYLE, cssclass=CSS_CLASS).get_style_defs(f".{CSS_CLASS}")
