"""A fake evaluator and scripted searches for engine tests: no runner, no model.

A candidate source names its own outcome in comments (`# ms=0.5`, `# verdict=incorrect`), so a
test states what each kernel measures and the fake evaluator reports it like the runner would.
"""

from __future__ import annotations

import re
from typing import Any

REF_MS = 1.0
COMPILE_MS = 0.8


def kernel(name: str, ms: float = 0.9, verdict: str = "correct", ref_ms: float = REF_MS,
           noisy: bool = False) -> str:
    """A candidate source the fake evaluator will report as `verdict` taking `ms`, against a
    reference timed at `ref_ms` in the same window; `noisy`: its interval stayed wide."""
    marks = f"# ms={ms}\n# verdict={verdict}\n# ref_ms={ref_ms}\n" + ("# noisy\n" if noisy else "")
    return (f"# {name}\n{marks}import torch.nn as nn\n\n\n"
            f"class ModelNew(nn.Module):\n    def forward(self, x):\n        return x.softmax(-1)\n")


class FakeEvaluator:
    """Reports Verdict dicts computed from the markers in each source; records every batch."""

    def __init__(self, on_call: Any = None) -> None:
        self.batches: list[list[str]] = []
        self.on_call = on_call

    @property
    def evaluated(self) -> list[str]:
        return [s for batch in self.batches for s in batch]

    def __call__(self, reference: str, sources: list[str], config: Any) -> list[dict[str, Any]]:
        self.batches.append(list(sources))
        if self.on_call:
            self.on_call(len(self.batches))
        return [self.verdict(s) for s in sources]

    @staticmethod
    def verdict(source: str) -> dict[str, Any]:
        ms = float(re.search(r"# ms=([\d.]+)", source).group(1))
        verdict = re.search(r"# verdict=(\w+)", source).group(1)
        ref = re.search(r"# ref_ms=([\d.]+)", source)
        ref_ms = float(ref.group(1)) if ref else REF_MS
        result: dict[str, Any] = {"verdict": verdict, "reason": "", "checks": [], "backend": "torch",
                                  "ref_ms": ref_ms, "compile_ref_ms": COMPILE_MS, "eval_s": 2.0}
        if verdict == "correct":
            speedup = ref_ms / ms
            result.update(cand_ms=ms, speedup=speedup, speedup_vs_compile=COMPILE_MS / ms,
                          max_abs_err=1e-6, rel_err=1e-7, roofline_pct=40.0)
            if "# noisy" in source:  # a wide interval, as the runner reports one
                result.update(noisy=True, speedup_ci=[speedup * 0.5, speedup * 1.6])
        elif verdict == "incorrect":
            result.update(reason="outputs differ from the reference", max_abs_err=0.5, checks=[
                {"name": "allclose", "passed": False, "detail": "max abs err 0.5 > 0.01"}])
        elif verdict == "compile_error":
            result.update(reason="the extension did not build",
                          compile_log="kernel.cu(12): error: identifier \"blockDimx\" is undefined")
        return result


def script(rounds: list[list[tuple[str, str, list[str]]]]) -> dict[str, Any]:
    """A scripted proposer's recording from [[(idea, category, [sources...]), ...] per round]."""
    return {"rounds": [{"ideas": [{"idea": idea, "category": cat, "implementations": impls}
                                  for idea, cat, impls in ideas]} for ideas in rounds]}


def two_round_script() -> dict[str, Any]:
    """Round 1: four ideas of two implementations with known times; round 2: two more ideas."""
    return script([
        [
            ("Fuse the max, exp and sum into one pass over each row.", "memory",
             [kernel("a0", 0.50), kernel("a1", 0.70)]),
            ("Use one warp per row with shuffle reductions.", "parallelism",
             [kernel("b0", 0.40), kernel("b1", 0.10, "incorrect")]),
            ("Vectorize loads with float4.", "memory",
             [kernel("c0", 0.90), kernel("c1", 1.0, "compile_error")]),
            ("Compute exp in bf16.", "precision", [kernel("d0", 0.60), kernel("d1", 0.65)]),
        ],
        [
            ("Keep the row in registers between the passes.", "memory",
             [kernel("e0", 0.30), kernel("e1", 0.35)]),
            ("Unroll the reduction loop by four.", "control_flow",
             [kernel("f0", 0.38), kernel("f1", 0.45)]),
        ],
    ])
