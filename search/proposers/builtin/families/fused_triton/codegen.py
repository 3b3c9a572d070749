"""A fused program as a Triton kernel. A program (an instance of the kernel) handles one tile
of rows: BLOCK_R elements along the reduced dims by BLOCK_J adjacent rows. When BLOCK_R covers
a row, the row is read once and every pass runs on registers; otherwise each reduction is one
loop over the row."""

from __future__ import annotations

from search.proposers.builtin.fusion.lowering import index_expr, needed, reductions, stage
from search.proposers.builtin.fusion.ops import REDUCE, TRITON, triton_literal
from search.proposers.builtin.fusion.program import Program, Step


def kernel(program: Program, block_r: int, block_j: int) -> str:
    """The `@triton.jit` function `fused_kernel(in0, ..., out, BLOCK...)`."""
    params = "".join(f"{o.name}, " for o in program.operands)
    if program.reduce is None:
        head = f"def fused_kernel({params}out, BLOCK: tl.constexpr):"
        body = _elementwise(program)
    else:
        head = f"def fused_kernel({params}out, BLOCK_R: tl.constexpr, BLOCK_J: tl.constexpr):"
        body = _rows(program, single=block_r >= program.length)
    return "@triton.jit\n" + head + "\n" + body + "\n"


def _expr(step: Step, program: Program, mask: str) -> str:
    if step.op == "load":
        operand = next(o for o in program.operands if o.name == step.args[0])
        along = "r[:, None]" if program.reduce else ""
        return (f"tl.load({operand.name} + {index_expr(program, operand.span, 'i', '//', along)}, "
                f"mask={mask}, other=0.0)")
    args = [triton_literal(a) if isinstance(a, float) else a for a in step.args]
    return TRITON[step.op].format(*args)


def _elementwise(program: Program) -> str:
    lines = ["    pid = tl.program_id(0).to(tl.int64)",
             "    i = pid * BLOCK + tl.arange(0, BLOCK)",
             f"    mask = i < {program.numel}"]
    lines += [f"    {s.name} = {_expr(s, program, 'mask')}" for s in needed(program, [program.output])]
    lines.append(f"    tl.store(out + i, {program.output}, mask=mask)")
    return "\n".join(lines)


def _rows(program: Program, single: bool) -> str:
    length, inner = program.length, program.inner
    lines = ["    pid = tl.program_id(0).to(tl.int64)"]
    if inner == 1:  # one row per program: BLOCK_J is 1
        lines += ["    o = pid", "    j = tl.arange(0, BLOCK_J)", "    row_mask = j < 1"]
        flat = f"o * {length} + r[:, None] + j[None, :]"
    else:
        blocks = f"tl.cdiv({inner}, BLOCK_J)"
        lines += [f"    o = pid // {blocks}", f"    j = (pid % {blocks}) * BLOCK_J + tl.arange(0, BLOCK_J)",
                  f"    row_mask = j < {inner}"]
        flat = f"(o * {length} + r[:, None]) * {inner} + j[None, :]"
    stages = stage(program)
    out_full = program.step(program.output).level == "full"
    store_row = f"    tl.store(out + o * {inner} + j, {program.output}, mask=row_mask)"
    if single:
        lines += ["    r = tl.arange(0, BLOCK_R)",
                  f"    i = {flat}",
                  f"    mask = (r[:, None] < {length}) & row_mask[None, :]"]
        for s in program.steps:
            lines.append(f"    {s.name} = {_reduce_once(s) if s.op.startswith('reduce_') else _expr(s, program, 'mask')}")
        lines.append(f"    tl.store(out + i, {program.output}, mask=mask)" if out_full else store_row)
        return "\n".join(lines)
    row_steps = [s for s in program.steps if s.level == "row" and not s.op.startswith("reduce_")]

    def row_block(k: int) -> list[str]:
        return [f"    {s.name} = {_expr(s, program, 'row_mask')}" for s in row_steps if stages[s.name] == k]

    def loop(roots: list[str], tail: list[str]) -> list[str]:
        body = ["r = start + tl.arange(0, BLOCK_R)",
                f"i = {flat}",
                f"mask = (r[:, None] < {length}) & row_mask[None, :]"]
        body += [f"{s.name} = {_expr(s, program, 'mask')}" for s in needed(program, roots)] + tail
        return [f"    for start in range(0, {length}, BLOCK_R):"] + ["        " + b for b in body]

    lines += row_block(0)
    for k, red in enumerate(reductions(program)):
        kind = red.op.removeprefix("reduce_")
        _, _, init, fn = REDUCE[kind]
        src = red.args[0]
        lines.append(f"    {red.name} = tl.full([BLOCK_J], {init}, tl.float32)")
        combine = {"sum": f"{red.name} + ", "max": f"tl.maximum({red.name}, ", "min": f"tl.minimum({red.name}, "}[kind]
        close = "" if kind == "sum" else ")"
        lines += loop([src], [f"{red.name} = {combine}{fn}(tl.where(mask, {src}, {init}), axis=0){close}"])
        lines += row_block(k + 1)
    if out_full:
        lines += loop([program.output], [f"tl.store(out + i, {program.output}, mask=mask)"])
    else:
        lines.append(store_row)
    return "\n".join(lines)


def _reduce_once(step: Step) -> str:
    kind = step.op.removeprefix("reduce_")
    _, _, init, fn = REDUCE[kind]
    return f"{fn}(tl.where(mask, {step.args[0]}, {init}), axis=0)"
