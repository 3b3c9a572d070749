"""A kernel's speedup: the one home every view reads it from (docs/architecture.md).

A speedup is the ratio its own verdict measured (reference and kernel timed in the same
window), never a time divided by another round's reference time. A `noisy` one (its
confidence interval stayed wide) is shown as an estimate, is never a seed and becomes a
search's best only when every correct kernel is noisy (then labelled as an estimate). The page's JS mirrors `text` and `rank_key` in static/js/state.js.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


class HasSpeedup(Protocol):
    """An engine node or a stored node row."""

    kind: str
    status: str
    speedup: float | None
    speedup_vs_compile: float | None
    cand_ms: float | None
    key: str
    verdict: dict[str, Any]


def _interval(value: Any) -> tuple[float, float] | None:
    if isinstance(value, list | tuple) and len(value) == 2 and all(
            isinstance(v, int | float) for v in value):
        return float(value[0]), float(value[1])
    return None


@dataclass(frozen=True)
class Speedup:
    """Speedups over eager PyTorch and over torch.compile, with their intervals when known."""

    eager: float | None = None
    compile: float | None = None
    eager_ci: tuple[float, float] | None = None
    compile_ci: tuple[float, float] | None = None
    noisy: bool = False

    @property
    def rankable(self) -> bool:
        """Measured and trusted: may be a search's best or a seed."""
        return self.eager is not None and not self.noisy

    def value(self, which: str = "eager") -> float | None:
        """The speedup over eager PyTorch ('eager') or over torch.compile ('compile')."""
        return self.eager if which == "eager" else self.compile

    def text(self, which: str = "eager", times: str = "×", short: bool = False) -> str:
        """'2.31×', '2.31× (CI 2.25–2.37)', '≈1.9× (noisy, CI 1.2–2.8)', or '—' when unmeasured.
        `short` leaves the interval out (tree labels); `times` is the sign after the number."""
        value = self.value(which)
        if value is None:
            return "—"
        head = f"≈{value:.1f}{times}" if self.noisy else f"{value:.2f}{times}"
        return head if short else head + self.note(which)

    def note(self, which: str = "eager") -> str:
        """What follows the number: ' (CI 2.25–2.37)', ' (noisy, CI 1.2–2.8)', ' (noisy)', ''."""
        ci = self.eager_ci if which == "eager" else self.compile_ci
        if self.noisy:
            return f" (noisy, CI {ci[0]:.1f}–{ci[1]:.1f})" if ci else " (noisy)"
        return f" (CI {ci[0]:.2f}–{ci[1]:.2f})" if ci else ""

    def to_dict(self) -> dict[str, Any]:
        """The keys every JSON view carries for a node's speedup."""
        return {"speedup": self.eager, "speedup_vs_compile": self.compile,
                "speedup_ci": list(self.eager_ci) if self.eager_ci else None,
                "speedup_vs_compile_ci": list(self.compile_ci) if self.compile_ci else None,
                "noisy": self.noisy}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Speedup:
        """From a node's JSON (`to_dict`'s keys), as the stream and the API carry it."""
        return cls(data.get("speedup"), data.get("speedup_vs_compile"),
                   _interval(data.get("speedup_ci")), _interval(data.get("speedup_vs_compile_ci")),
                   bool(data.get("noisy")))


def speedup_of(node: HasSpeedup) -> Speedup:
    """The node's speedups: those its verdict measured (set on the node when it was correct),
    with the verdict's intervals and noise flag. The reference is 1× by definition."""
    if node.kind == "reference":
        return Speedup(1.0, None)
    verdict = node.verdict or {}
    return Speedup(node.speedup, node.speedup_vs_compile, _interval(verdict.get("speedup_ci")),
                   _interval(verdict.get("speedup_vs_compile_ci")), bool(verdict.get("noisy")))


def rank_key(node: HasSpeedup) -> tuple[int, float, float, float, str]:
    """Sort key, best first: trusted ratios by ratio (then the interval's low end), then
    kernels with a time but no trusted ratio by time, then the rest; ties by key."""
    s = speedup_of(node)
    if s.rankable:
        assert s.eager is not None
        low = s.eager_ci[0] if s.eager_ci else s.eager
        return (0, -s.eager, -low, 0.0, node.key)
    if node.cand_ms is not None and not s.noisy:
        return (1, 0.0, 0.0, node.cand_ms, node.key)
    return (2, 0.0, 0.0, 0.0, node.key)


def best_of(nodes: list[Any]) -> Any | None:
    """The correct kernel with the best trusted ratio. A noisy one only when every correct
    kernel is noisy (a busy machine): then the best estimate, which reads as one (≈, its
    interval) in every view, so the search still hands over the kernel it found."""
    correct = [n for n in nodes if n.kind == "kernel" and n.status == "correct"]
    trusted = [n for n in correct if not speedup_of(n).noisy]
    if trusted:
        return min(trusted, key=rank_key)
    estimated = [n for n in correct if speedup_of(n).eager is not None]
    return min(estimated, key=lambda n: (-speedup_of(n).eager, n.key), default=None)
