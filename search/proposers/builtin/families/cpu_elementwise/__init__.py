"""An elementwise chain over same-shape inputs fused into one C++ loop (elements across cores)."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import cpp_build, fast_math, need
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    chain = shape.chain
    need(chain is not None, "the forward is not an elementwise chain")
    assert chain is not None
    n = len(chain.inputs)
    fn_params = ", ".join(f"float v{i}" for i in range(n))
    statements = "\n".join("    " + st for st in chain.statements)
    scalar = ", ".join(f"in{i}[i]" for i in range(n))
    # The C++ loop takes the vectorizable exponentials of cpu_fast_math.h.
    fused = (f"static inline float fused_op({fn_params}) {{\n{statements}\n    return {chain.result};\n}}\n"
             .replace("expf(", "fast_exp(").replace("tanhf(", "fast_tanh(")
             .replace("fmaxf(", "fast_max(").replace("fminf(", "fast_min("))
    loop = "\n    ".join([f"const float* in{i} = in[{i}];" for i in range(n)]
                         + [f"for (int64_t i = begin; i < end; ++i) out[i] = fused_op({scalar});"])
    body = (FAMILY.template("kernel.cpp").replace("#include <vector>\n", "#include <vector>\n\n" + fused, 1)
            .replace("FUSED_LOOP", loop))
    p = {**FAMILY.defaults, **recipe.params}
    return fill(FAMILY.template("core.py.tmpl"), **cpp_build(fast_math() + body), grain=int(p["grain"]), arity=n)


FAMILY = Family(
    core="cpu_elementwise", title="Elementwise chain fused into one C++ loop (elements across cores)",
    devices=("cpu",), backends=("cpp",), render=render, folder=Path(__file__).parent,
    grid={"grain": [4096, 32768, 262144]}, defaults={"grain": 32768},
    groups=[(("grain",), "elements per task")],
    matches=lambda shape: shape.pattern == "elementwise" and shape.chain is not None,
)
