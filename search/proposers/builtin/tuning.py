"""Retuning a template kernel: which untried settings of its family's grid to try next.

The next settings are the untried grid points nearest to the fastest setting measured so far,
moving away from directions that measured slower, so a search walks the grid a few points per
round instead of enumerating it. Each family declares its grid, defaults and parameter groups.
"""

from __future__ import annotations

import re
from typing import Any

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import registry

# What changing a parameter is about, in the study's categories.
PARAM_CATEGORY = {"threads": "parallelism", "cluster": "parallelism", "grain": "parallelism",
                  "items": "memory", "vec": "memory", "lanes": "compute", "online": "control_flow",
                  "reverse": "memory", "split": "parallelism", "block": "memory", "block_r": "memory",
                  "block_j": "memory", "warps": "parallelism", "stages": "memory",
                  "block_m": "compute", "block_n": "compute", "block_k": "compute"}


def groups(core: str) -> list[tuple[tuple[str, ...], str]]:
    """The core's parameters retuned together, each group with what it sets in words; a kernel's
    groups are retuned one at a time, the others held at the fastest setting measured."""
    spec = registry().get(core)
    return list(spec.groups) if spec else []


def tunable(core: str, params: dict[str, Any], shape: ProblemShape) -> bool:
    """Whether a kernel with this core and params has a grid worth retuning."""
    spec = registry().get(core)
    return spec is not None and spec.retunable(params) and len(grid_points(core, shape)) > 1


def grid_points(core: str, shape: ProblemShape) -> list[dict[str, Any]]:
    """Every setting of the core's tunable parameters that can serve this problem."""
    spec = registry().get(core)
    if spec is None:
        return []
    if spec.points is not None:
        return spec.points(shape)
    if not spec.grid:
        return []
    points: list[dict[str, Any]] = [{}]
    for key, values in spec.grid.items():
        points = [{**p, key: v} for p in points for v in values]
    return points


def settings_of(core: str, params: dict[str, Any], shape: ProblemShape) -> dict[str, Any]:
    """The tunable part of a kernel's params, defaults filled in."""
    points = grid_points(core, shape)
    keys = list(points[0]) if points else []
    defaults = registry()[core].defaults if core in registry() else {}
    return {k: params.get(k, defaults.get(k)) for k in keys}


def next_settings(core: str, current: dict[str, Any], measured: list[tuple[dict[str, Any], float]],
                  tried: list[dict[str, Any]], shape: ProblemShape, count: int = 3,
                  group: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """Up to `count` untried settings to measure next, best bet first.

    `measured` holds (settings, milliseconds) of correct kernels with this core and the same
    framework options; `current` is the seed's own setting. Only the parameters in `group`
    move (all when None); the others stay at the fastest setting. Nearest to the fastest first;
    a step in a direction that measured slower than the fastest costs extra.
    """
    points = grid_points(core, shape)
    if not points:
        return []
    keys = list(points[0])
    best = min(measured, key=lambda pair: pair[1])[0] if measured else current
    if group is not None:
        points = [p for p in points if all(p[k] == best.get(k) for k in keys if k not in group)]
    best_ms = min((ms for _, ms in measured), default=None)
    slower = [s for s, ms in measured if best_ms is not None and ms > best_ms * 1.02]
    seen = [dict(t) for t in tried] + [dict(current)]
    seen_keys = {_key(s, keys) for s in seen}

    def position(setting: dict[str, Any], key: str) -> int:
        values = _values(core, key, points)
        return values.index(setting[key]) if setting.get(key) in values else 0

    def cost(point: dict[str, Any]) -> float:
        steps = {k: position(point, k) - position(best, k) for k in keys}
        total = float(sum(abs(d) for d in steps.values()))
        for s in slower:  # moving the same way as a slower neighbour did is less promising
            for k in keys:
                d = position(s, k) - position(best, k)
                if d and steps[k] and (d > 0) == (steps[k] > 0):
                    total += 0.75
        return total

    untried = [p for p in points if _key(p, keys) not in seen_keys]
    untried.sort(key=lambda p: (cost(p), points.index(p)))
    return untried[:count]


def category_of_change(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The study category of moving from one setting to another (the first parameter changed)."""
    for key in ("online", "reverse", "threads", "cluster", "split", "grain", "items", "vec", "lanes",
                "block", "block_r", "block_j", "warps", "stages"):
        if key in after and before.get(key) != after.get(key):
            return PARAM_CATEGORY[key]
    return "parallelism"


def describe(setting: dict[str, Any]) -> str:
    """`[threads=512 items=4]`: a setting the way a retune idea writes it (and reads it back)."""
    return "[" + " ".join(f"{k}={_word(v)}" for k, v in setting.items()) + "]"


def parse_settings(text: str) -> list[dict[str, Any]]:
    """The settings written by `describe` in an idea's text, in order."""
    found = []
    for group in re.findall(r"\[((?:[a-z_]+=[A-Za-z0-9.]+ ?)+)\]", text):
        setting: dict[str, Any] = {}
        for pair in group.split():
            key, _, raw = pair.partition("=")
            setting[key] = _value(raw)
        found.append(setting)
    return found


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _value(raw: str) -> Any:
    if raw in ("yes", "no"):
        return raw == "yes"
    try:
        return int(raw)
    except ValueError:
        return raw


def _values(core: str, key: str, points: list[dict[str, Any]]) -> list[Any]:
    grid = registry()[core].grid if core in registry() else {}
    if key in grid:
        return grid[key]
    return sorted({p[key] for p in points})


def _key(setting: dict[str, Any], keys: list[str]) -> tuple:
    return tuple(setting.get(k) for k in keys)
