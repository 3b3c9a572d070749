"""The downloadable kernel: a KernelBench `ModelNew` file with a header that says what it is."""

from __future__ import annotations

from datetime import UTC, datetime

from search.models import Node, Search


def _fmt_x(value: float | None) -> str:
    return f"{value:.2f}x" if value is not None else "n/a"


def _fmt_ms(value: float | None) -> str:
    return f"{value:.4g} ms" if value is not None else "n/a"


def _comment(text: str) -> list[str]:
    """Every line of `text` as a comment line (an idea may span several lines)."""
    return [f"#   {line}".rstrip() for line in text.strip().splitlines()] or ["#"]


def header_lines(search: Search, node: Node, now: datetime | None = None) -> list[str]:
    """The header comment of a downloaded kernel: problem, speedups, device, date, checks."""
    verdict = node.verdict or {}
    device = verdict.get("device") or search.config.get("device", "cpu")
    device_name = verdict.get("device_name") or ""
    date = (now or datetime.now(UTC)).strftime("%Y-%m-%d %H:%M UTC")
    lines = [
        f"# kernelweb kernel for problem: {search.problem.name}",
        f"# Search {search.pk}, node {node.pk} (round {node.round}, key {node.key})",
        f"# Status: {node.status}" + (f" ({verdict.get('reason')})" if verdict.get("reason") else ""),
        f"# Speedup over eager PyTorch: {_fmt_x(node.speedup)}"
        f" ({_fmt_ms(node.cand_ms)} vs {_fmt_ms(verdict.get('ref_ms'))})",
        f"# Speedup over torch.compile: {_fmt_x(node.speedup_vs_compile)}"
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
    return lines


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
