"""Generated from the reference's graph: the elementwise ops, reductions and normalizations
after its matrix product or convolution (or over its inputs) in one C++ kernel; the product
itself stays with the library."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import cpp_build, fast_math, need
from search.proposers.builtin.families.fused_cpp.codegen import kernel
from search.proposers.builtin.fusion.replay import finish, replay
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    program = shape.program
    need(program is not None, "the graph has no fusable tail")
    assert program is not None
    p = {**FAMILY.defaults, **recipe.params}
    lines, names = replay(program)
    cpp = fast_math() + FAMILY.template("math.h") + kernel(program, int(p["lanes"]))
    operands = ", ".join(names[o.ref] for o in program.operands) + ("," if len(program.operands) == 1 else "")
    done, final = finish(program, names, "out")
    return fill(FAMILY.template("core.py.tmpl"), suffix=bool(program.suffix), final=final,
                finish="\n".join("    " + line for line in done), **cpp_build(cpp), fused=program.describe(),
                prefix="\n".join("    " + line for line in lines), operands=operands,
                grain=int(p["grain"]), out_shape=program.out_shape)


def points(shape: ProblemShape) -> list[dict]:
    program = shape.program
    if program is None:
        return []
    if program.reduce is None:
        return [{"grain": g, "lanes": 1} for g in (32768, 4096, 262144)]
    lanes = [16, 64, 8] if program.inner > 1 else [1]
    return [{"grain": g, "lanes": v} for v in lanes for g in (1, 4, 16)]


FAMILY = Family(
    core="fused_cpp", title="Generated fused C++ kernel over the graph's tail (library GEMM or convolution first)",
    devices=("cpu",), backends=("cpp",), render=render, folder=Path(__file__).parent,
    defaults={"grain": 1, "lanes": 1},
    groups=[(("grain",), "rows or elements per task"), (("lanes",), "adjacent rows computed together")],
    matches=lambda shape: shape.program is not None, points=points, owns_parameters=True,
    framework_options=True,
)
