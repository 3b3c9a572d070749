"""Each scalar operation a fused program uses, in C++ and in Triton.

An entry is a format string over the operation's arguments ({0}, {1}, ...), already written
in the target language (a step's name, or a float literal). The C++ forms use the
vectorizable helpers of cpu_fast_math.h (fast_exp, fast_tanh, fast_max, fast_min) and the
fused C++ family's math.h (fast_erf).
"""

from __future__ import annotations

import math

CPP: dict[str, str] = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "neg": "(-{0})", "abs": "std::fabs({0})", "reciprocal": "(1.0f / {0})",
    "max": "fast_max({0}, {1})", "min": "fast_min({0}, {1})",
    "relu": "({0} > 0.0f ? {0} : 0.0f)",
    "leaky_relu": "({0} > 0.0f ? {0} : {0} * {1})",
    "exp": "fast_exp({0})", "log": "std::log({0})", "sqrt": "std::sqrt({0})",
    "rsqrt": "(1.0f / std::sqrt({0}))", "tanh": "fast_tanh({0})", "erf": "fast_erf({0})",
    "sigmoid": "(1.0f / (1.0f + fast_exp(-{0})))",
    "silu": "({0} / (1.0f + fast_exp(-{0})))",
    "gelu": "(0.5f * {0} * (1.0f + fast_erf({0} * 0.70710678118654752f)))",
    "gelu_tanh": "(0.5f * {0} * (1.0f + fast_tanh(0.7978845608028654f * ({0} + 0.044715f * {0} * {0} * {0}))))",
    # softplus(x, beta, threshold): linear above the threshold, as torch computes it.
    "softplus": "({0} * {1} > {2} ? {0} : std::log1p(fast_exp({0} * {1})) / {1})",
    "mish": "({0} * fast_tanh({0} > 20.0f ? {0} : std::log1p(fast_exp({0}))))",
    "hardswish": "({0} * fast_min(fast_max({0} + 3.0f, 0.0f), 6.0f) / 6.0f)",
    "hardsigmoid": "(fast_min(fast_max({0} + 3.0f, 0.0f), 6.0f) / 6.0f)",
    "pow": "std::pow({0}, {1})",
    "select_positive": "({0} > 0.0f ? {1} : {2})",
}
TRITON: dict[str, str] = {
    "add": "({0} + {1})", "sub": "({0} - {1})", "mul": "({0} * {1})", "div": "({0} / {1})",
    "neg": "(-{0})", "abs": "tl.abs({0})", "reciprocal": "(1.0 / {0})",
    "max": "tl.maximum({0}, {1})", "min": "tl.minimum({0}, {1})",
    "relu": "tl.maximum({0}, 0.0)",
    "leaky_relu": "tl.where({0} > 0.0, {0}, {0} * {1})",
    "exp": "tl.exp({0})", "log": "tl.log({0})", "sqrt": "tl.sqrt({0})",
    "rsqrt": "tl.rsqrt({0})", "tanh": "(2.0 * tl.sigmoid(2.0 * {0}) - 1.0)", "erf": "tl.erf({0})",
    "sigmoid": "tl.sigmoid({0})",
    "silu": "({0} * tl.sigmoid({0}))",
    "gelu": "(0.5 * {0} * (1.0 + tl.erf({0} * 0.70710678118654752)))",
    "gelu_tanh": "(0.5 * {0} * (2.0 * tl.sigmoid(2.0 * 0.7978845608028654 * ({0} + 0.044715 * {0} * {0} * {0}))))",
    "softplus": "tl.where({0} * {1} > {2}, {0}, tl.log(1.0 + tl.exp({0} * {1})) / {1})",
    "mish": "({0} * (2.0 * tl.sigmoid(2.0 * tl.where({0} > 20.0, {0}, tl.log(1.0 + tl.exp({0})))) - 1.0))",
    "hardswish": "({0} * tl.minimum(tl.maximum({0} + 3.0, 0.0), 6.0) / 6.0)",
    "hardsigmoid": "(tl.minimum(tl.maximum({0} + 3.0, 0.0), 6.0) / 6.0)",
    "pow": "tl.exp2(tl.log2({0}) * {1})",
    "select_positive": "tl.where({0} > 0.0, {1}, {2})",
}
# Reductions: (C++ initial value, C++ combine of acc and v, Triton initial value, Triton reduce fn).
REDUCE = {
    "sum": ("0.0f", "{acc} + {v}", "0.0", "tl.sum"),
    "max": ("-INFINITY", "fast_max({acc}, {v})", "float('-inf')", "tl.max"),
    "min": ("INFINITY", "fast_min({acc}, {v})", "float('inf')", "tl.min"),
}


def cpp_literal(value: float) -> str:
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    text = repr(float(value))
    return f"{text}f" if ("e" in text or "." in text) else f"{text}.0f"


def triton_literal(value: float) -> str:
    if math.isinf(value):
        return "float('inf')" if value > 0 else "float('-inf')"
    return repr(float(value))
