"""A candidate's recipe: which core computes the forward and which framework options wrap it.

Every candidate the built-in proposer writes carries its recipe in a header comment, so an idea
applied to a seed kernel stacks on top of what the seed already does (a TF32 seed can gain
cuDNN autotuning, a fused-pool seed can gain fp16) and the code is regenerated from the recipe.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

HEADER = "# kernelweb-recipe: "
_HEADER_RE = re.compile(r"^# kernelweb-recipe: (\{.*\})$", re.M)

# Keys of a variant that are framework options; every other key is a parameter of the core.
OPTION_KEYS = ("tf32", "cudnn_benchmark", "channels_last", "dtype", "cuda_graph", "compile", "blas",
               "inference", "compile_wrapper")


@dataclass
class Recipe:
    core: str = "reference"
    params: dict[str, Any] = field(default_factory=dict)
    options: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> str:
        return json.dumps({"core": self.core, "params": self.params, "options": self.options}, sort_keys=True)

    @classmethod
    def from_source(cls, source: str) -> Recipe:
        """The recipe in a candidate's header; the plain reference recipe for any other source."""
        match = _HEADER_RE.search(source or "")
        if not match:
            return cls()
        try:
            data = json.loads(match.group(1))
        except json.JSONDecodeError:
            return cls()
        return cls(str(data.get("core", "reference")), dict(data.get("params", {})), dict(data.get("options", {})))

    def precision(self) -> str:
        """What precision the candidate computes in, as labelled on its node."""
        dtype = self.options.get("dtype")
        if dtype:
            return {"float16": "fp16", "bfloat16": "bf16"}.get(dtype, dtype)
        return "tf32" if self.options.get("tf32") else "fp32"


def apply_change(parent: Recipe, change: dict[str, Any], variant: dict[str, Any]) -> Recipe:
    """The recipe after applying one idea (catalogue `change`) with one parameter variant."""
    options = {k: v for k, v in variant.items() if k in OPTION_KEYS}
    params = {k: v for k, v in variant.items() if k not in OPTION_KEYS}
    kind = change.get("kind")
    if kind == "options":
        return normalized(Recipe(parent.core, dict(parent.params), {**parent.options, **options}))
    if kind == "conv":
        base = dict(parent.params) if parent.core == "cuda_conv" else {}
        kept = {k: v for k, v in parent.options.items() if k != "compile"}
        return normalized(Recipe("cuda_conv", {**base, **params}, {**kept, **options}))
    if kind == "params":  # a change to one core's parameters: nothing to do on another core
        if parent.core != change.get("core"):
            return parent
        return normalized(Recipe(parent.core, {**parent.params, **params}, {**parent.options, **options}))
    # A new core replaces the computation; only options that still mean something carry over:
    # a CUDA graph always, and the switches of torch's own operators (TF32, cuDNN autotuning,
    # memory format) where the new core still runs them.
    core = str(change.get("core"))
    carried = ("cuda_graph", *(_TORCH_SWITCHES if _runs_torch_operators(core) else ()))
    kept = {k: v for k, v in parent.options.items() if k in carried}
    return normalized(Recipe(core, params, {**kept, **options}))


_TORCH_SWITCHES = ("tf32", "cudnn_benchmark", "channels_last")


def _runs_torch_operators(core: str) -> bool:
    from search.proposers.builtin.families import family  # the families import this module

    try:
        return family(core).framework_options
    except ValueError:
        return False


def normalized(recipe: Recipe) -> Recipe:
    """The recipe without settings its core ignores, so two recipes that build the same kernel
    compare equal (an idea that would change nothing is then not offered). An option set to
    None by a variant is removed (e.g. a TF32 variant drops the seed's fp16)."""
    params = dict(recipe.params)
    options = {k: v for k, v in recipe.options.items() if v is not None}
    if not options.get("compile"):
        options.pop("compile_wrapper", None)
    if recipe.core == "cuda_conv" and params.get("s2d"):
        # Space-to-depth lays out and converts the input itself; padding and im2col do not apply.
        params.pop("im2col", None)
        params.pop("pad_to", None)
        options.pop("channels_last", None)
    if recipe.core == "cuda_conv" and not params.get("fused_pool"):
        params.pop("vec", None)
    for key in [k for k, v in params.items() if v is False or v == 0 and k in ("pad_to",)]:
        params.pop(key)
    return Recipe(recipe.core, params, options)
