"""Turn a recipe into a complete KernelBench `ModelNew` file from the template files."""

from __future__ import annotations

import functools
import hashlib
import re
from pathlib import Path
from string import Template

from search.proposers.builtin.analysis import REDUCTIONS, ProblemShape
from search.proposers.builtin.recipe import Recipe

TEMPLATES = Path(__file__).with_name("templates")
# Portable optimization flags: no -march=native, the row loops carry target_clones instead.
CPU_CFLAGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-fassociative-math", "-fno-signed-zeros"]

_TITLES = {
    "reference": "The reference computation under framework-level settings",
    "library_softmax": "Softmax through the library's fused kernel",
    "library_rms_norm": "RMSNorm through the library's fused kernel",
    "inplace_softmax": "Manual softmax in place, one temporary",
    "cpu_softmax": "Fused row softmax in C++ (one visit per row, rows across cores)",
    "cpu_rownorm": "Fused row normalization in C++ (one visit per row, rows across cores)",
    "cuda_softmax_rows": "Row softmax held on chip: one read, one write (NVRTC)",
    "cuda_softmax_online": "Online row softmax, one block per row (NVRTC)",
    "cuda_rownorm_split": "Normalization with rows split across blocks, three passes (NVRTC)",
    "cuda_conv": "Convolution (cuDNN, space-to-depth or an im2col tensor-core GEMM) with a fused NVRTC epilogue",
    "cuda_elementwise": "Elementwise chain fused into one kernel: one read per input, one write (NVRTC)",
    "cpu_elementwise": "Elementwise chain fused into one C++ loop (elements across cores)",
    "cuda_reduce": "Reduction in one kernel that reads each element once (NVRTC)",
    "cpu_reduce": "Reduction in one C++ pass (slices across cores)",
}


@functools.cache
def template_text(name: str) -> str:
    return (TEMPLATES / name).read_text()


def render(recipe: Recipe, shape: ProblemShape, reference: str) -> str:
    """A complete candidate file for `recipe` on the reference described by `shape`.

    Raises ValueError when the recipe's core cannot serve this problem.
    """
    options = recipe.options
    dtype = options.get("dtype")
    compile_mode = options.get("compile")
    ref_fn = f"_compiled(self.ref, {compile_mode!r})" if compile_mode else "self.ref"
    framework = template_text("framework.py.tmpl")
    if compile_mode:
        framework += _COMPILE_HELPER
    return Template(template_text("model.py.tmpl")).substitute(
        title=_TITLES.get(recipe.core, recipe.core) + _options_suffix(recipe) + _params_suffix(recipe),
        recipe=recipe.to_json(),
        precision=recipe.precision(),
        reference=_embeddable(reference),
        framework=framework,
        core=_render_core(recipe, shape),
        channels_last=bool(options.get("channels_last")),
        ref_fn=ref_fn,
        cuda_graph=bool(options.get("cuda_graph")),
        dtype=f"torch.{dtype}" if dtype else "None",
        tf32=bool(options.get("tf32")),
        cudnn_benchmark=bool(options.get("cudnn_benchmark")),
        blas=repr(options.get("blas")),
    )


_COMPILE_HELPER = '''

def _compiled(module, mode):
    """torch.compile with compilation in this process: no worker pool is left running."""
    import torch._inductor.config as inductor_config

    inductor_config.compile_threads = 1
    return torch.compile(module, mode=mode)
'''


def summarize(recipe: Recipe) -> str:
    """A short human description of what a recipe does, e.g. 'fused row softmax (TF32)'."""
    return (_TITLES.get(recipe.core, recipe.core)[0].lower() + _TITLES.get(recipe.core, recipe.core)[1:]
            + _options_suffix(recipe) + _params_suffix(recipe))


def _params_suffix(recipe: Recipe) -> str:
    if not recipe.params:
        return ""
    return " [" + ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items())) + "]"


def option_labels(recipe: Recipe) -> list[tuple[str, str]]:
    """(option key, label) for each framework option the recipe turns on, e.g. ("tf32", "TF32")."""
    names = {
        "tf32": "TF32", "cudnn_benchmark": "cuDNN autotuning", "channels_last": "channels-last",
        "cuda_graph": "CUDA graph", "blas": "cuBLASLt",
    }
    labels = [(key, label) for key, label in names.items() if recipe.options.get(key)]
    if recipe.options.get("dtype"):
        labels.append(("dtype", recipe.precision()))
    if recipe.options.get("compile"):
        labels.append(("compile", f"torch.compile {recipe.options['compile']}"))
    return labels


def _options_suffix(recipe: Recipe) -> str:
    parts = [label for _, label in option_labels(recipe)]
    return f" ({', '.join(parts)})" if parts else ""


def _embeddable(reference: str) -> str:
    # A `from __future__` import is only legal at the top of a file; the candidate's own header
    # comes first, so the reference's is dropped (it changes no runtime behaviour of Model).
    return re.sub(r"^from __future__ import .*$", "", reference, flags=re.M).strip() + "\n"


def _digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _render_core(recipe: Recipe, shape: ProblemShape) -> str:
    core, p = recipe.core, recipe.params
    tmpl = Template(template_text(f"cores/{core}.py.tmpl"))
    fn = "log_softmax" if shape.pattern == "log_softmax" else "softmax"
    if core == "reference":
        return tmpl.substitute()
    if core == "library_softmax":
        _need(shape.dim is not None, "the softmax dimension is not a constant")
        return tmpl.substitute(fn=fn, dim=shape.dim)
    if core == "inplace_softmax":
        _need(shape.dim is not None, "the softmax dimension is not a constant")
        return tmpl.substitute(dim=shape.dim)
    if core == "library_rms_norm":
        return tmpl.substitute(weight=_weight_expr(shape), eps=_eps_expr(shape))
    if core == "cpu_softmax":
        cpp = template_text("cpu_fast_math.h") + template_text("cpu_softmax.cpp")
        return tmpl.substitute(**_cpp_build(cpp),
                               fn=fn, grain=int(p.get("grain", 16)), log=shape.pattern == "log_softmax",
                               threads=int(p.get("threads", 0)), lanes=int(p.get("lanes", 16)),
                               online=bool(p.get("online", False)))
    if core == "cpu_rownorm":
        cpp = template_text("cpu_rownorm.cpp")
        return tmpl.substitute(**_cpp_build(cpp),
                               grain=int(p.get("grain", 8)), threads=int(p.get("threads", 0)),
                               **_norm_exprs(shape))
    if core == "cuda_softmax_rows":
        cols = shape.row_length or 0
        cluster, threads, items = int(p["cluster"]), int(p["threads"]), int(p["items"])
        _need(cluster * threads * items * 4 == cols, "the launch shape does not cover a row")
        return tmpl.substitute(cols=cols, threads=threads, items=items, cluster=cluster,
                               log=int(shape.pattern == "log_softmax"), fn=fn,
                               cuda=template_text("cuda_softmax_rows.cu"))
    if core == "cuda_softmax_online":
        return tmpl.substitute(threads=int(p.get("threads", 1024)), log=int(shape.pattern == "log_softmax"),
                               fn=fn, cuda=template_text("cuda_softmax_online.cu"))
    if core == "cuda_rownorm_split":
        exprs = _norm_exprs(shape)
        return tmpl.substitute(threads=int(p.get("threads", 256)), items=int(p.get("items", 8)),
                               reverse=int(bool(p.get("reverse"))),
                               rms=int(exprs.pop("rms") == "True"), cuda=template_text("cuda_rownorm_split.cu"),
                               **exprs)
    if core == "cuda_conv":
        conv = shape.attrs.get("conv")
        _need(bool(conv), "no convolution submodule found")
        dtype = recipe.options.get("dtype")
        return tmpl.substitute(conv=conv, pool=shape.attrs.get("pool", ""), has_pool="pool" in shape.attrs,
                               pad_to=int(p.get("pad_to", 0)), fused_pool=bool(p.get("fused_pool")),
                               im2col=bool(p.get("im2col")), s2d=bool(p.get("s2d")),
                               s2d_dtype=f"torch.{dtype}" if dtype else "torch.float32",
                               vec=int(p.get("vec", 1)), cuda=template_text("cuda_relu_maxpool.cu"),
                               s2d_cuda=template_text("cuda_space_to_depth.cu"))
    if core in ("cuda_elementwise", "cpu_elementwise"):
        return _render_elementwise(tmpl, core, p, shape)
    if core in ("cuda_reduce", "cpu_reduce"):
        _need(shape.pattern == "reduction" and shape.dim is not None and shape.dim >= 0,
              "the forward is not one reduction over a known dimension")
        common = {"dim": shape.dim, "op": REDUCTIONS[shape.attrs["reduce_op"]],
                  "keepdim": shape.attrs.get("keepdim") == "True"}
        if core == "cuda_reduce":
            return tmpl.substitute(threads=int(p.get("threads", 256)), split=int(p.get("split", 4)),
                                   cuda=template_text("cuda_reduce.cu"), **common)
        cpp = template_text("cpu_reduce.cpp")
        return tmpl.substitute(**_cpp_build(cpp),
                               grain=int(p.get("grain", 1)), **common)
    raise ValueError(f"unknown core {core!r}")


def _render_elementwise(tmpl: Template, core: str, p: dict, shape: ProblemShape) -> str:
    chain = shape.chain
    _need(chain is not None, "the forward is not an elementwise chain")
    assert chain is not None
    n = len(chain.inputs)
    fn_params = ", ".join(f"float v{i}" for i in range(n))
    statements = "\n".join("    " + st for st in chain.statements)
    scalar = ", ".join(f"in{i}[i]" for i in range(n))
    if core == "cuda_elementwise":
        return tmpl.substitute(
            threads=int(p.get("threads", 256)), vec=int(p.get("vec", 4)), arity=n,
            fn_params=fn_params, statements=statements, result=chain.result, scalar=scalar,
            kernel_params=" ".join(f"const float* __restrict__ in{i}," for i in range(n)),
            load4=" ".join(f"const float4 a{i} = *reinterpret_cast<const float4*>(in{i} + i);" for i in range(n)),
            lane=", ".join(f"a{i}.c" for i in range(n)), cuda=template_text("cuda_elementwise.cu"))
    # The C++ loop takes the vectorizable exponentials of cpu_fast_math.h.
    fused = (f"static inline float fused_op({fn_params}) {{\n{statements}\n    return {chain.result};\n}}\n"
             .replace("expf(", "fast_exp(").replace("tanhf(", "fast_tanh(")
             .replace("fmaxf(", "fast_max(").replace("fminf(", "fast_min("))
    loop = "\n    ".join([f"const float* in{i} = in[{i}];" for i in range(n)]
                         + [f"for (int64_t i = begin; i < end; ++i) out[i] = fused_op({scalar});"])
    body = (template_text("cpu_elementwise.cpp").replace("#include <vector>\n", "#include <vector>\n\n" + fused, 1)
            .replace("FUSED_LOOP", loop))
    cpp = template_text("cpu_fast_math.h") + body
    return tmpl.substitute(**_cpp_build(cpp),
                           grain=int(p.get("grain", 32768)), arity=n)


def _cpp_build(cpp: str) -> dict[str, str]:
    """The C++ core templates' build fields: the source, its extension name's hash, the flags."""
    return {"cpp": cpp, "digest": _digest(cpp, str(CPU_CFLAGS)), "cflags": repr(CPU_CFLAGS)}


def _need(condition: bool, why: str) -> None:
    if not condition:
        raise ValueError(why)


def _weight_expr(shape: ProblemShape) -> str:
    return f"model.ref.{shape.attrs['weight']}" if "weight" in shape.attrs else "None"


def _eps_expr(shape: ProblemShape) -> str:
    if "eps" in shape.attrs:
        return f"model.ref.{shape.attrs['eps']}"
    return repr(shape.eps if shape.eps is not None else 1e-5)


def _norm_exprs(shape: ProblemShape) -> dict[str, str]:
    """Python expressions (inside _run_core) for a row normalization's parameters."""
    if shape.pattern == "layernorm":
        norm = f"model.ref.{shape.attrs['norm']}"
        return {"weight": f"{norm}.weight", "bias": f"{norm}.bias", "eps": f"{norm}.eps",
                "cols": f"math.prod({norm}.normalized_shape)", "rms": "False"}
    return {"weight": _weight_expr(shape), "bias": "None", "eps": _eps_expr(shape),
            "cols": "x.shape[-1]", "rms": "True"}
