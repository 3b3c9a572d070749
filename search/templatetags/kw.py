"""Number formats for pages: times with units, speedups, percents, money."""

from __future__ import annotations

from typing import Any

from django import template

from search.engine.speedups import speedup_of
from search.engine.statuses import LIVE_STAGES, PENDING_STATUSES

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
def speedup(node: Any, which: str = "eager") -> str:
    """A node's speedup as every view shows it: '2.31× (CI 2.25–2.37)', '≈1.9× (noisy, …)'.
    `which`: 'eager' or 'compile'."""
    return "—" if node is None else speedup_of(node).text(which)


@register.filter
def speedup_short(node: Any, which: str = "eager") -> str:
    """The number alone ('2.31×', '≈1.9×'): where the interval goes on a line of its own."""
    return "—" if node is None else speedup_of(node).text(which, short=True)


@register.filter
def speedup_note(node: Any, which: str = "eager") -> str:
    """The interval alone ('CI 2.25–2.37', 'noisy, CI 1.2–2.8'), or ''."""
    if node is None or speedup_of(node).value(which) is None:
        return ""
    return speedup_of(node).note(which).strip().strip("()")


@register.filter
def rate(value: Any, unit: str) -> str:
    """A rate with three significant digits and its unit: 0.0123 GB/s, 2.41 TFLOP/s."""
    v = _num(value)
    return "—" if v is None else f"{v:.3g} {unit}"


@register.filter
def roofline_basis(verdict: dict[str, Any]) -> str:
    """The ceiling a roofline percent was taken against: 'the tf32 bound (400 TFLOP/s)'."""
    bound, peak = verdict.get("roofline_bound"), _num(verdict.get("roofline_peak"))
    if bound == "memory":
        return f"the memory bound ({peak / 1e12:.3g} TB/s)" if peak else "the memory bound"
    what = f"the {bound} compute bound"
    return f"{what} ({peak / 1e12:.3g} TFLOP/s)" if peak else what


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
    """The colour class of a kernel status: its stage while it runs, else its verdict."""
    if status in LIVE_STAGES:
        return status
    if status in PENDING_STATUSES:
        return "pending"
    return status or "pending"


@register.filter
def is_pending(status: str) -> bool:
    """Whether a kernel is still waiting for, or going through, its evaluation."""
    return status in PENDING_STATUSES
