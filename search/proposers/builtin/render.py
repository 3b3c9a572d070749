"""Turn a recipe into a complete KernelBench `ModelNew` file: the family's core inside the
shared model and framework templates, with only the code the recipe runs."""

from __future__ import annotations

import re
from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape
from search.proposers.builtin.families import family
from search.proposers.builtin.recipe import Recipe
from search.proposers.builtin.templating import fill

TEMPLATES = Path(__file__).with_name("templates")
# Standard modules a candidate imports when its code uses them (torch and nn always).
_MODULES = ("contextlib", "functools", "math")


def template_text(name: str) -> str:
    return (TEMPLATES / name).read_text()


def render(recipe: Recipe, shape: ProblemShape, reference: str) -> str:
    """A complete candidate file for `recipe` on the reference described by `shape`.

    Raises ValueError when the recipe's core cannot serve this problem.
    """
    spec = family(recipe.core)
    options = recipe.options
    dtype = options.get("dtype")
    core = spec.render(recipe, shape).strip("\n")
    switches_on = bool(options.get("tf32") or options.get("cudnn_benchmark") or options.get("blas"))
    contexts = [f"_backend_flags(tf32={bool(options.get('tf32'))}, benchmark={bool(options.get('cudnn_benchmark'))}, "
                f"blas={options.get('blas')!r})"] if switches_on else []
    contexts += [f"_autocast(inputs, torch.{dtype})"] if dtype else []
    contexts += ["torch.inference_mode()"] if options.get("inference") else []
    prepare = bool(dtype or options.get("channels_last")) and not spec.takes_raw_inputs(recipe)
    switches = {
        "flags": bool(contexts), "switches": switches_on, "prepare": prepare, "prepare_helper": prepare or "_prepare(" in core,
        "cast": bool(dtype), "dtype": f"torch.{dtype}" if dtype else "None", "compile": bool(options.get("compile")),
        "cuda_graph": bool(options.get("cuda_graph")), "channels_last": bool(options.get("channels_last")),
        "cpp_wrapper": options.get("compile_wrapper") == "cpp",
    }
    framework = fill(template_text("framework.py.tmpl"), **switches)
    title = spec.title + _options_suffix(recipe) + _params_suffix(recipe)
    body = fill(template_text("model.py.tmpl"), **switches, imports="$imports", title=title,
                recipe=recipe.to_json(), precision=recipe.precision(), reference=_embeddable(reference),
                framework=framework.rstrip("\n"), core=core, owns_parameters=spec.owns_parameters,
                compile_mode=repr(options.get("compile")), contexts=", ".join(contexts))
    code = body.split("# ---- End of the reference.", 1)[1]
    imports = "\n".join(f"import {m}" for m in _MODULES if re.search(rf"\b{m}\.", code))
    return body.replace("$imports\n", imports + "\n" if imports else "", 1)


def summarize(recipe: Recipe) -> str:
    """A short human description of what a recipe does, e.g. 'fused row softmax (TF32)'."""
    try:
        title = family(recipe.core).title
    except ValueError:
        title = recipe.core
    return title[0].lower() + title[1:] + _options_suffix(recipe) + _params_suffix(recipe)


def _params_suffix(recipe: Recipe) -> str:
    if not recipe.params:
        return ""
    return " [" + ", ".join(f"{k}={v}" for k, v in sorted(recipe.params.items())) + "]"


def option_labels(recipe: Recipe) -> list[tuple[str, str]]:
    """(option key, label) for each framework option the recipe turns on, e.g. ("tf32", "TF32")."""
    names = {
        "tf32": "TF32", "cudnn_benchmark": "cuDNN autotuning", "channels_last": "channels-last",
        "cuda_graph": "CUDA graph", "blas": "cuBLASLt", "inference": "inference mode",
    }
    labels = [(key, label) for key, label in names.items() if recipe.options.get(key)]
    if recipe.options.get("dtype"):
        labels.append(("dtype", recipe.precision()))
    if recipe.options.get("compile"):
        wrapper = ", C++ wrapper" if recipe.options.get("compile_wrapper") == "cpp" else ""
        labels.append(("compile", f"torch.compile {recipe.options['compile']}{wrapper}"))
    return labels


def _options_suffix(recipe: Recipe) -> str:
    parts = [label for _, label in option_labels(recipe)]
    return f" ({', '.join(parts)})" if parts else ""


def _embeddable(reference: str) -> str:
    # A `from __future__` import is only legal at the top of a file; the candidate's own header
    # comes first, so the reference's is dropped (it changes no runtime behaviour of Model).
    return re.sub(r"^from __future__ import .*$", "", reference, flags=re.M).strip() + "\n"
