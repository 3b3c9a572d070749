"""What both generated-kernel languages need from a program: step order, what each pass over
a row computes, and where each operand's element sits for a flat index."""

from __future__ import annotations

import math

from search.proposers.builtin.fusion.program import Program, Step


def reductions(program: Program) -> list[Step]:
    return [s for s in program.steps if s.op.startswith("reduce_")]


def needed(program: Program, roots: list[str], stop: frozenset[str] = frozenset()) -> list[Step]:
    """The full steps `roots` depend on (themselves included), in program order; a row step
    or a reduction is a value already computed, and so is a step in `stop` (kept from an
    earlier pass): the walk stops there."""
    names = {s.name: s for s in program.steps}
    keep: set[str] = set()
    todo = [r for r in roots if r in names]
    while todo:
        step = names[todo.pop()]
        if step.name in keep or step.level != "full":
            continue
        keep.add(step.name)
        if step.name not in stop:
            todo += [a for a in step.args if isinstance(a, str) and a in names]
    return [s for s in program.steps if s.name in keep]


def stage(program: Program) -> dict[str, int]:
    """For each row step, after which pass it can be computed: 1 + the index of the last
    reduction it depends on (0: before the first pass)."""
    names = {s.name: s for s in program.steps}
    order = {s.name: k for k, s in enumerate(reductions(program))}
    out: dict[str, int] = {}
    for s in program.steps:
        if s.level != "row":
            continue
        if s.name in order:
            out[s.name] = order[s.name] + 1
            continue
        deps = [a for a in s.args if isinstance(a, str) and a in names]
        out[s.name] = max([out.get(d, 0) for d in deps if names[d].level == "row"] +
                          [max((out.get(x, 0) for x in _row_deps(names, d)), default=0) for d in deps
                           if names[d].level == "full"], default=0)
    return out


def _row_deps(names: dict[str, Step], name: str) -> list[str]:
    found, todo, seen = [], [name], set()
    while todo:
        n = todo.pop()
        if n in seen or n not in names:
            continue
        seen.add(n)
        if names[n].level == "row":
            found.append(n)
        else:
            todo += [a for a in names[n].args if isinstance(a, str)]
    return found


def index_expr(program: Program, span: tuple[int, int], flat: str, div: str = "/", along: str = "") -> str:
    """Where an operand varying over dims [a, b) keeps the element at flat index `flat`.

    With `along` (the position along the reduced dims) an operand that varies only inside the
    reduced block (a LayerNorm weight) is indexed from it, without the flat index's divisions.
    """
    a, b = span
    below = math.prod(program.shape[b:])
    size = math.prod(program.shape[a:b])
    if size == 1:
        return "0"
    if size == program.numel:
        return flat
    if along and program.reduce and program.reduce[0] <= a and b <= program.reduce[1]:
        below = math.prod(program.shape[b:program.reduce[1]])
        if size * below == program.length:
            return along if below == 1 else f"({along} {div} {below})"
        return f"({along} % {size})" if below == 1 else f"(({along} {div} {below}) % {size})"
    scaled = flat if below == 1 else f"({flat} {div} {below})"
    return scaled if a == 0 else f"({scaled} % {size})"


def kept_row(program: Program) -> str | None:
    """The full step worth keeping from the first pass for the later ones: the first
    reduction's input, when it is computed (not a plain load) and a later pass needs it."""
    reds = reductions(program)
    if not reds or not isinstance(reds[0].args[0], str):
        return None
    first = program.step(reds[0].args[0])
    if first.op == "load":
        return None
    later = [r.args[0] for r in reds[1:]] + ([program.output] if program.step(program.output).level == "full" else [])
    return first.name if any(first.name in {s.name for s in needed(program, [r])} for r in later) else None
