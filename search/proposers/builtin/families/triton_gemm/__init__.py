"""Generated from the reference's graph: its matrix product as a Triton GEMM whose epilogue
computes the elementwise tail (bias, activations, scalings, per-column operands) on the
accumulator before the one store, so the product's output never goes to memory."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.fusion.lowering import index_expr, needed
from search.proposers.builtin.fusion.ops import TRITON, triton_literal
from search.proposers.builtin.fusion.program import Program, short
from search.proposers.builtin.fusion.replay import finish, replay
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill

_VIEWS = {"view", "_unsafe_view", "reshape"}


def gemm_of(program: Program | None) -> dict[str, Any] | None:
    """The product the tail reads, when a GEMM epilogue can take the tail: a 2-D addmm or mm
    whose output (or a view of it) is the tail's full input, and an elementwise tail.

    Returns {"node": the product's node, "operand": the operand it feeds, "bias": its addmm
    bias node argument or None}.
    """
    if program is None or program.reduce is not None:
        return None
    nodes = {n["name"]: n for n in program.prefix}
    for operand in program.operands:
        name = operand.ref
        while name in nodes and short(nodes[name]["target"]) in _VIEWS:
            name = nodes[name]["args"][0]["ref"]
        node = nodes.get(name)
        if node is None or short(node["target"]) not in ("addmm", "mm") or operand.span != (0, len(program.shape)):
            continue
        m, n = node["outputs"][0]["shape"]
        bias = node["args"][0] if short(node["target"]) == "addmm" else None
        if bias is not None and (_shape(program, bias["ref"]) != [n] or node.get("kwargs")):
            return None  # a bias that is not per column, or beta/alpha scalings
        return {"node": node, "operand": operand, "bias": bias, "m": m, "n": n}
    return None


def _shape(program: Program, ref: str) -> list[int]:
    for i in program.inputs:
        if i["name"] == ref:
            return list(i["shape"])
    node = next(n for n in program.prefix if n["name"] == ref)
    return list(node["outputs"][0]["shape"])


def render(recipe: Recipe, shape: ProblemShape) -> str:
    program = shape.program
    gemm = gemm_of(program)
    need(gemm is not None, "the graph has no matrix product with an elementwise tail")
    assert program is not None and gemm is not None
    p = {**FAMILY.defaults, **recipe.params}
    node, main = gemm["node"], gemm["operand"]
    args = node["args"][1:] if gemm["bias"] is not None else node["args"]
    # Replay only what the product's operands and the other operands need.
    wanted = {a["ref"] for a in args} | {o.ref for o in program.operands if o is not main}
    wanted |= {gemm["bias"]["ref"]} if gemm["bias"] is not None else set()
    keep = _ancestors(program, wanted)
    lines, names = replay(Program(**{**program.__dict__, "prefix": [n for n in program.prefix if n["name"] in keep]}))
    others = [o for o in program.operands if o is not main]
    epilogue = []
    for step in needed(program, [program.output]):
        if step.op == "load" and step.args[0] == main.name:
            epilogue.append(f"    {step.name} = acc")
        elif step.op == "load":
            o = next(o for o in others if o.name == step.args[0])
            epilogue.append(f"    {step.name} = tl.load({o.name} + {index_expr(program, o.span, 'i', '//')}, "
                            "mask=mask, other=0.0)")
        else:
            values = [triton_literal(a) if isinstance(a, float) else a for a in step.args]
            epilogue.append(f"    {step.name} = {TRITON[step.op].format(*values)}")
    has_bias = gemm["bias"] is not None
    done, final = finish(program, names, "out")
    return fill(FAMILY.template("core.py.tmpl"), suffix=bool(program.suffix), final=final,
                finish="\n".join("    " + line for line in done), fused=program.describe(), has_bias=has_bias,
                params="".join(f"{o.name}, " for o in others), epilogue="\n".join(epilogue),
                result=program.output, prefix="\n".join("    " + line for line in lines),
                a=names[args[0]["ref"]], b=names[args[1]["ref"]],
                bias=names[gemm["bias"]["ref"]] if has_bias else "",
                operands="".join(f"{names[o.ref]}.float().contiguous(), " for o in others),
                m=gemm["m"], n=gemm["n"], block_m=int(p["block_m"]), block_n=int(p["block_n"]),
                block_k=int(p["block_k"]), group_m=int(p["group_m"]), warps=int(p["warps"]),
                stages=int(p["stages"]), out_shape=program.out_shape)


def _ancestors(program: Program, names: set[str]) -> set[str]:
    nodes = {n["name"]: n for n in program.prefix}
    keep: set[str] = set()
    todo = [n for n in names if n in nodes]
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        todo += [a["ref"] for a in nodes[name]["args"] if isinstance(a, dict) and a.get("ref") in nodes]
    return keep


def points(shape: ProblemShape) -> list[dict]:
    if gemm_of(shape.program) is None:
        return []
    return [{"block_m": m, "block_n": n, "block_k": k, "group_m": 8, "warps": w, "stages": s}
            for (m, n, k, w, s) in ((128, 128, 32, 8, 3), (64, 128, 32, 4, 4), (128, 64, 32, 4, 4),
                                    (64, 64, 32, 4, 3), (128, 256, 32, 8, 3), (64, 256, 32, 8, 4))]


FAMILY = Family(
    core="triton_gemm", title="Generated Triton GEMM with the graph's elementwise tail fused into its epilogue",
    devices=("cuda",), backends=("triton",), render=render, folder=Path(__file__).parent,
    defaults={"block_m": 128, "block_n": 128, "block_k": 32, "group_m": 8, "warps": 8, "stages": 3},
    groups=[(("block_m", "block_n", "block_k"), "tile shape (rows, columns, depth per step)"),
            (("warps", "stages"), "warps per program and pipeline stages")],
    matches=lambda shape: gemm_of(shape.program) is not None, points=points, owns_parameters=True,
)
