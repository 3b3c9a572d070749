"""An elementwise chain over same-shape inputs fused into one kernel: one read per input, one write."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    chain = shape.chain
    need(chain is not None, "the forward is not an elementwise chain")
    assert chain is not None
    n = len(chain.inputs)
    p = {**FAMILY.defaults, **recipe.params}
    return fill(
        FAMILY.template("core.py.tmpl"),
        threads=int(p["threads"]), vec=int(p["vec"]), arity=n,
        fn_params=", ".join(f"float v{i}" for i in range(n)),
        statements="\n".join("    " + st for st in chain.statements), result=chain.result,
        scalar=", ".join(f"in{i}[i]" for i in range(n)),
        kernel_params=" ".join(f"const float* __restrict__ in{i}," for i in range(n)),
        load4=" ".join(f"const float4 a{i} = *reinterpret_cast<const float4*>(in{i} + i);" for i in range(n)),
        lane=", ".join(f"a{i}.c" for i in range(n)), cuda=FAMILY.template("kernel.cu"))


FAMILY = Family(
    core="cuda_elementwise", title="Elementwise chain fused into one kernel: one read per input, one write (NVRTC)",
    devices=("cuda",), backends=("nvrtc",), render=render, folder=Path(__file__).parent,
    grid={"threads": [128, 256, 512, 1024], "vec": [1, 4]}, defaults={"threads": 256, "vec": 4},
    groups=[(("threads",), "block size"), (("vec",), "vector width (float4 loads and stores)")],
    matches=lambda shape: shape.pattern == "elementwise" and shape.chain is not None,
)
