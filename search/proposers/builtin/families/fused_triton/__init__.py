"""Generated from the reference's graph: the elementwise ops, reductions and normalizations
after its matrix product or convolution (or over its inputs) in one Triton kernel that reads
the product's output once; the product itself stays with cuBLAS or cuDNN, so precision ideas
stack on it."""

from __future__ import annotations

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.families.fused_triton.codegen import kernel
from search.proposers.builtin.fusion.replay import finish, replay
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill

# Rows longer than this are reduced in loops over BLOCK_R elements instead of in registers.
_MAX_SINGLE = 16384


def render(recipe: Recipe, shape: ProblemShape) -> str:
    program = shape.program
    need(program is not None, "the graph has no fusable tail")
    assert program is not None
    p = {**FAMILY.defaults, **recipe.params}
    lines, names = replay(program)
    if program.reduce is None:
        block = int(p["block"])
        blocks, grid = f"BLOCK={block}", -(-program.numel // block)
        text = kernel(program, 0, 0)
    else:
        block_r, block_j = int(p["block_r"]), int(p["block_j"] if program.inner > 1 else 1)
        blocks = f"BLOCK_R={block_r}, BLOCK_J={block_j}"
        grid = program.outer * -(-program.inner // block_j)
        text = kernel(program, block_r, block_j)
    out_numel = program.numel if program.step(program.output).level == "full" else program.outer * program.inner
    operands = ", ".join(names[o.ref] for o in program.operands) + ("," if len(program.operands) == 1 else "")
    done, final = finish(program, names, "out")
    return fill(FAMILY.template("core.py.tmpl"), suffix=bool(program.suffix), final=final,
                finish="\n".join("    " + line for line in done), fused=program.describe(), kernel=text,
                prefix="\n".join("    " + line for line in lines), operands=operands,
                sizes=[_numel(o.shape) for o in program.operands], out_numel=out_numel, grid=grid,
                blocks=blocks, warps=int(p["warps"]), stages=int(p["stages"]), out_shape=program.out_shape)


def _numel(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


def _pow2(n: int) -> int:
    return 1 << max(n - 1, 0).bit_length()


def points(shape: ProblemShape) -> list[dict]:
    """Launch settings, best guess first: a whole row in registers where it fits."""
    program = shape.program
    if program is None:
        return []
    if program.reduce is None:
        return [{"block": b, "warps": w, "stages": 1} for b in (1024, 2048, 512, 4096) for w in (4, 8)]
    length = program.length
    if program.inner > 1:
        rs = [_pow2(length)] if length <= 64 else [32, 64, 16]
        return [{"block_r": r, "block_j": j, "warps": w, "stages": s}
                for r in rs for j in (32, 64, 16) for w in (4, 2) for s in (1, 2)]
    found = []
    if length <= _MAX_SINGLE:
        single = _pow2(length)
        found += [{"block_r": single, "block_j": 1, "warps": w, "stages": 1}
                  for w in ((4, 8, 16) if single >= 2048 else (1, 2, 4))]
    found += [{"block_r": r, "block_j": 1, "warps": w, "stages": s}
              for r in (2048, 4096, 1024) if r < length for w in (8, 4) for s in (2, 3)]
    return found


FAMILY = Family(
    core="fused_triton", title="Generated fused Triton kernel over the graph's tail (library GEMM or convolution first)",
    devices=("cuda",), backends=("triton",), render=render, folder=Path(__file__).parent,
    defaults={"block": 1024, "block_r": 1024, "block_j": 1, "warps": 4, "stages": 1},
    groups=[(("block", "block_r", "block_j"), "tile size (elements per row tile, rows per tile)"),
            (("warps", "stages"), "warps per program and pipeline stages")],
    matches=lambda shape: shape.program is not None, points=points, owns_parameters=True,
    framework_options=True,
)
