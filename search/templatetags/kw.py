"""Number formats for pages: times with units, speedups, percents, money."""

from __future__ import annotations

from typing import Any

from django import template

register = template.Library()


def _num(value: Any) -> float | None:
    try:
        return None if value is None or value == "" else float(value)
    except (TypeError, ValueError):
        return None


@register.filter
def ms(value: Any) -> str:
    """A time in milliseconds with a readable unit: 812 µs, 3.42 ms, 1.20 s."""
    v = _num(value)
    if v is None:
        return "—"
    if v < 1:
        return f"{v * 1000:.3g} µs"
    if v < 1000:
        return f"{v:.3g} ms"
    return f"{v / 1000:.3g} s"


@register.filter
def times(value: Any) -> str:
    """A speedup: 2.31×."""
    v = _num(value)
    return "—" if v is None else f"{v:.2f}×"


@register.filter
def pct(value: Any) -> str:
    """A percent with sensible precision: 0.82%, 12.5%, 87%."""
    v = _num(value)
    if v is None:
        return "—"
    return f"{v:.2g}%" if abs(v) < 1 else f"{v:.3g}%" if abs(v) < 100 else f"{v:.0f}%"


@register.filter
def sci(value: Any) -> str:
    """An error magnitude: 3.1e-06."""
    v = _num(value)
    return "—" if v is None else f"{v:.2e}"


@register.filter
def usd(value: Any) -> str:
    v = _num(value)
    return "—" if v is None else f"${v:.4f}" if v < 1 else f"${v:.2f}"


@register.filter
def status_class(status: str) -> str:
    """The colour class of a kernel status (in-progress states share one colour)."""
    if status in ("proposed", "compiling", "checking", "timing"):
        return "pending"
    return status or "pending"
