"""What crosses from a worker to the parent, as typed data, validated on arrival.

A sandboxed process can send anything: every number is checked (finite, in bounds) and every
field typed here, so a malformed report becomes a named failure instead of a crash, and one
broken worker never costs the rest of a batch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

MAX_MS = 3.6e6  # an hour per call: anything beyond is not a measurement


def number(value: Any, low: float = 0.0, high: float = MAX_MS) -> float | None:
    """`value` as a float when it is a real, finite number within [low, high]; else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    x = float(value)
    if not math.isfinite(x) or x < low or x > high:
        return None
    return x


def _strings(value: Any, limit: int = 50) -> list[str]:
    if not isinstance(value, list):
        return []
    return [str(v)[:200] for v in value[:limit]]


def _ints(value: Any, limit: int = 50) -> list[int]:
    if not isinstance(value, list):
        return []
    return [v for v in value[:limit] if isinstance(v, int) and not isinstance(v, bool)]


def _flags(value: Any) -> dict[str, bool | str]:
    if not isinstance(value, dict):
        return {}
    return {str(k)[:64]: v for k, v in list(value.items())[:16] if isinstance(v, bool | str)}


def _profile(value: Any) -> dict[str, Any] | None:
    if not isinstance(value, dict):
        return None
    out: dict[str, Any] = {"total_us": number(value.get("total_us"), 0.0, 1e15) or 0.0}
    for key in ("ops", "kernels"):
        got = value.get(key)
        out[key] = {str(k)[:200]: float(v) for k, v in list(got.items())[:2000]
                    if number(v, 0.0, 1e15) is not None} if isinstance(got, dict) else {}
    return out


KERNEL_FIELDS = {  # field -> its plausible range
    "registers": (0, 255), "local_bytes": (0, 1 << 30), "shared_bytes": (0, 1 << 30),
    "launches": (0, 1e6), "duration_us": (0, 3.6e9), "dram_pct": (0, 1000), "sm_pct": (0, 1000),
    "occupancy_pct": (0, 1000), "theoretical_occupancy_pct": (0, 1000)}


def kernel_rows(value: Any, limit: int = 64) -> list[dict[str, Any]]:
    """Per-kernel figures (gpurunner.kernel_resources, gpurunner.ncu): a name and numbers in
    range; anything else in a row is dropped."""
    if not isinstance(value, list):
        return []
    rows = []
    for item in value[:limit]:
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            continue
        row: dict[str, Any] = {"name": item["name"][:300]}
        for key, (low, high) in KERNEL_FIELDS.items():
            x = number(item.get(key), low, high)
            if x is not None:
                row[key] = int(x) if key in ("registers", "local_bytes", "shared_bytes",
                                             "launches") else x
        if item.get("from") in ("cuobjdump", "driver"):
            row["from"] = item["from"]
        rows.append(row)
    return rows


@dataclass
class CandidateFacts:
    """What the candidate's worker says about its own process after the run.

    Advisory only: the candidate's process can rewrite any of these. They catch a careless
    cheat (a patched clock, a thread left running); nothing that decides correctness or time
    comes from here (see docs/runner.md, "Who establishes each fact").
    """

    tampered: list[str] = field(default_factory=list)
    threads: list[str] = field(default_factory=list)
    native_threads: int = 0
    children: list[int] = field(default_factory=list)
    precision_flags: dict[str, bool | str] = field(default_factory=dict)
    precision_flags_before: dict[str, bool | str] = field(default_factory=dict)
    dtypes_produced: list[str] = field(default_factory=list)
    profile: dict[str, Any] | None = None
    kernels: list[dict[str, Any]] = field(default_factory=list)  # registers, local memory
    counters: list[dict[str, Any]] = field(default_factory=list)  # Nsight Compute, per kernel
    counters_error: str = ""  # why there are no counters, where they were asked for
    sandbox: dict[str, Any] = field(default_factory=dict)
    malformed: list[str] = field(default_factory=list)  # fields that arrived unusable

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_message(cls, msg: dict[str, Any]) -> CandidateFacts:
        """Typed facts from a worker's message; a field of the wrong type is dropped and
        named in `malformed`."""
        facts = cls(
            tampered=_strings(msg.get("tampered")),
            threads=_strings(msg.get("threads")),
            native_threads=int(number(msg.get("native_threads"), 0, 1e6) or 0),
            children=_ints(msg.get("children")),
            precision_flags=_flags(msg.get("precision_flags")),
            precision_flags_before=_flags(msg.get("precision_flags_before")),
            dtypes_produced=_strings(msg.get("dtypes_produced")),
            profile=_profile(msg.get("profile")),
            kernels=kernel_rows(msg.get("kernels")),
            sandbox={k: v for k, v in (msg.get("sandbox") or {}).items()
                     if isinstance(v, bool | int | str | list)}
            if isinstance(msg.get("sandbox"), dict) else {},
        )
        expected = {"tampered": list, "threads": list, "children": list, "dtypes_produced": list,
                    "kernels": list,
                    "precision_flags": dict, "precision_flags_before": dict}
        facts.malformed = [k for k, t in expected.items()
                           if k in msg and not isinstance(msg[k], t)]
        return facts
