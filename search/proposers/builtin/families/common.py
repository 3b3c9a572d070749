"""What several families' renderers share: the C++ build fields and the reference's names."""

from __future__ import annotations

import hashlib
from pathlib import Path

from search.proposers.builtin.analysis import ProblemShape

# Portable optimization flags: no -march=native, the row loops carry target_clones instead.
CPU_CFLAGS = ["-O3", "-fno-math-errno", "-fno-trapping-math", "-fassociative-math", "-fno-signed-zeros"]
_FAST_MATH = Path(__file__).resolve().parent.parent / "templates" / "cpu_fast_math.h"


def fast_math() -> str:
    """cpu_fast_math.h: vectorizable exp, tanh, max and min for the C++ kernels."""
    return _FAST_MATH.read_text()


def digest(*parts: str) -> str:
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def cpp_build(cpp: str) -> dict[str, str]:
    """The C++ core templates' build fields: the source, its extension name's hash, the flags."""
    return {"cpp": cpp, "digest": digest(cpp, str(CPU_CFLAGS)), "cflags": repr(CPU_CFLAGS)}


def need(condition: bool, why: str) -> None:
    """Refuse to render (ValueError with `why`) a recipe that cannot serve this problem."""
    if not condition:
        raise ValueError(why)


def softmax_fn(shape: ProblemShape) -> str:
    return "log_softmax" if shape.pattern == "log_softmax" else "softmax"


def weight_expr(shape: ProblemShape) -> str:
    return f"model.ref.{shape.attrs['weight']}" if "weight" in shape.attrs else "None"


def eps_expr(shape: ProblemShape) -> str:
    if "eps" in shape.attrs:
        return f"model.ref.{shape.attrs['eps']}"
    return repr(shape.eps if shape.eps is not None else 1e-5)


def norm_exprs(shape: ProblemShape) -> dict[str, str]:
    """Python expressions (inside _run_core) for a row normalization's parameters."""
    if shape.pattern == "layernorm":
        norm = f"model.ref.{shape.attrs['norm']}"
        return {"weight": f"{norm}.weight", "bias": f"{norm}.bias", "eps": f"{norm}.eps",
                "cols": f"math.prod({norm}.normalized_shape)", "rms": "False"}
    return {"weight": weight_expr(shape), "bias": "None", "eps": eps_expr(shape),
            "cols": "x.shape[-1]", "rms": "True"}
