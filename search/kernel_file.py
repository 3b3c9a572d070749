"""The downloadable kernel: a KernelBench `ModelNew` file with a header that says what it is."""

from __future__ import annotations

import unicodedata
from datetime import UTC, datetime

from search.engine.speedups import speedup_of
from search.models import Node, Search

# Characters that may not appear raw in a header line: controls (line and page breaks, NUL),
# format characters (bidirectional overrides), line and paragraph separators, unassigned and
# private code points. Any of them could end the `#` comment for Python, an editor or a page.
_UNSAFE = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")


def _fmt_ms(value: float | None) -> str:
    return f"{value:.4g} ms" if value is not None else "n/a"


def _escape(ch: str) -> str:
    if ch == "\t" or unicodedata.category(ch) not in _UNSAFE:
        return ch
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def comment_line(text: str) -> str:
    """`text` made safe to stand after a `#`: every character that could end the comment line
    (newlines, carriage returns, U+2028/U+2029, form feeds, NUL, ...) written as an escape."""
    return "".join(_escape(ch) for ch in text)


def _comment(text: str) -> list[str]:
    """Every line of `text` as a comment line (an idea may span several lines)."""
    return [f"#   {line}".rstrip() for line in text.strip().splitlines()] or ["#"]


def header_lines(search: Search, node: Node, now: datetime | None = None) -> list[str]:
    """The header comment of a downloaded kernel: problem, speedups, device, date, checks.

    Every line starts with `#` and holds no character that could end it, whatever a field
    holds; the date is the node's, so the same node always gives the same text.
    """
    verdict = node.verdict or {}
    speedup = speedup_of(node)
    device = verdict.get("device") or search.config.get("device", "cpu")
    device_name = verdict.get("device_name") or ""
    when = now or node.created or datetime.now(UTC)
    date = when.astimezone(UTC).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# kernelweb kernel for problem: {search.problem.name}",
        f"# Search {search.pk}, node {node.pk} (round {node.round}, key {node.key})",
        f"# Status: {node.status}" + (f" ({verdict.get('reason')})" if verdict.get("reason") else ""),
        f"# Speedup over eager PyTorch: {speedup.text(times='x')}"
        f" ({_fmt_ms(node.cand_ms)} vs {_fmt_ms(verdict.get('ref_ms'))})",
        f"# Speedup over torch.compile: {speedup.text('compile', 'x')}"
        f" (torch.compile {_fmt_ms(verdict.get('compile_ref_ms'))})",
        f"# Device: {device}" + (f" ({device_name})" if device_name else ""),
        f"# Backend: {node.backend or verdict.get('backend') or 'n/a'}",
    ]
    if verdict.get("precision"):
        lines.append(f"# Precision: {verdict['precision']} (changed from the reference; within tolerance)")
    lines.append(f"# Date: {date}")
    if node.idea:
        lines.append("# Idea:")
        lines.extend(_comment(node.idea))
    checks = verdict.get("checks") or []
    if checks:
        passed = sum(1 for c in checks if c.get("passed"))
        lines.append(f"# Checks: {passed}/{len(checks)} passed")
        for check in checks:
            mark = "pass" if check.get("passed") else "FAIL"
            detail = " ".join(str(check.get("detail", "")).split())
            lines.append(f"#   [{mark}] {check.get('name', '?')}" + (f": {detail}" if detail else ""))
    lines.append("# Run it with the reference's get_inputs() / get_init_inputs() (KernelBench format).")
    return [comment_line(line) for line in lines]


def kernel_file(search: Search, node: Node, now: datetime | None = None) -> str:
    """Return `node`'s kernel as a .py file: the header comment, then the source unchanged.

    The header is comments only, so the file imports and runs exactly as the runner ran it
    (comments may precede `from __future__` imports).
    """
    source = node.source if node.source.endswith("\n") else node.source + "\n"
    return "\n".join(header_lines(search, node, now)) + "\n\n" + source


def kernel_filename(search: Search, node: Node) -> str:
    """A download name that says which problem and node the file holds."""
    stem = "".join(ch if ch.isalnum() else "_" for ch in search.problem.name.lower()).strip("_")
    return f"{stem or 'kernel'}_search{search.pk}_node{node.pk}.py"
