"""A convolution (cuDNN, space-to-depth, or an im2col tensor-core GEMM) with its ReLU and max
pooling fused into one NVRTC epilogue."""

from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import Family
from search.proposers.builtin.families.common import need
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill


def render(recipe: Recipe, shape: ProblemShape) -> str:
    p = recipe.params
    conv = shape.attrs.get("conv")
    need(bool(conv), "no convolution submodule found")
    dtype = recipe.options.get("dtype")
    fused_pool, s2d = bool(p.get("fused_pool")), bool(p.get("s2d"))
    return fill(FAMILY.template("core.py.tmpl"), conv=conv, pool=shape.attrs.get("pool", ""),
                has_pool="pool" in shape.attrs, kernels=fused_pool or s2d, pad_to=int(p.get("pad_to", 0)), fused_pool=fused_pool,
                im2col=bool(p.get("im2col")), s2d=s2d, s2d_dtype=f"torch.{dtype}" if dtype else "torch.float32",
                s2d_convert=f"torch.{dtype}" if dtype and dtype != "float32" else "None",
                vec=int(p.get("vec", 1)), cuda=FAMILY.template("relu_maxpool.cu"),
                s2d_cuda=FAMILY.template("space_to_depth.cu"))


FAMILY = Family(
    core="cuda_conv",
    title="Convolution (cuDNN, space-to-depth or an im2col tensor-core GEMM) with a fused NVRTC epilogue",
    devices=("cuda",), backends=("nvrtc", "torch"), render=render, folder=Path(__file__).parent,
    grid={"vec": [1, 2, 4, 8]}, defaults={"vec": 1},
    groups=[(("vec",), "pooling kernel's vector width (channels per thread)")],
    matches=lambda shape: shape.pattern in ("conv", "conv_relu_maxpool") and "conv" in shape.attrs,
    takes_raw_inputs=lambda recipe: bool(recipe.params.get("s2d")),
    # Only the fused pooling kernel has a launch setting.
    retunable=lambda params: bool(params.get("fused_pool")),
    framework_options=True,
)
