"""Is the reference deterministic? Its forward, run again on the same inputs, must give the
same outputs, or no candidate can be checked against it (Dropout in training mode, sampling).

Runs in the trusted reference worker, during validation.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import torch

from gpurunner import inputs as inp

# The rerun draws its random numbers from another stream: random ops then differ visibly,
# while a forward that only reads its inputs gives the same values.
RERUN_SEED_OFFSET = 7919
# Bit-level noise from atomics in some CUDA reductions is not a different result.
RTOL, ATOL = 1e-5, 1e-6
CHUNK = 1 << 24  # elements compared at a time, so a large output needs little extra memory


def rerun(model: Callable[..., Any], module: ModuleType, seed: int, device: str) -> list[Any]:
    """The forward's outputs again, on the inputs of `seed` made afresh (the first run may have
    changed its inputs in place), with torch's random generators on another stream."""
    values = inp.to_device(inp.make_inputs(module, seed, device), device)
    torch.manual_seed(seed + RERUN_SEED_OFFSET)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed + RERUN_SEED_OFFSET)
    with torch.no_grad():
        return inp.as_outputs(model(*values))


def rerun_difference(model: Callable[..., Any], module: ModuleType, seed: int, device: str,
                     first: list[Any]) -> str | None:
    """Run the forward again (see `rerun`) and compare with its first outputs: the difference
    in one sentence, or None when they match."""
    return difference(first, rerun(model, module, seed, device))


def _differs(a: torch.Tensor, b: torch.Tensor) -> tuple[int, float]:
    """(how many values differ beyond RTOL/ATOL, the largest absolute difference)."""
    a, b = a.detach().reshape(-1), b.detach().reshape(-1)
    count, largest = 0, 0.0
    for start in range(0, a.numel(), CHUNK):
        x, y = a[start:start + CHUNK], b[start:start + CHUNK]
        if not (x.is_floating_point() or x.is_complex()):
            x, y = x.double(), y.double()
        close = torch.isclose(x, y, rtol=RTOL, atol=ATOL, equal_nan=True)
        count += int((~close).sum())
        if count:
            gap = (x - y).abs().nan_to_num(nan=float("inf"))
            largest = max(largest, float(gap.max()))
    return count, largest


def difference(first: list[Any], second: list[Any]) -> str | None:
    """The first output that differs between two runs, in one sentence; None when all match."""
    if len(first) != len(second):
        return f"the forward returned {len(first)} outputs, then {len(second)}"
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            continue
        if a.shape != b.shape:
            return f"output {i} has shape {list(a.shape)}, then {list(b.shape)}"
        count, largest = _differs(a, b)
        if count:
            return (f"output {i} differs in {count:,} of {a.numel():,} values "
                    f"({100 * count / max(1, a.numel()):.1f}%), by up to {largest:.4g}")
    return None


def message(diff: str) -> str:
    """What the user reads when the reference is refused."""
    return (f"the reference is not deterministic: run twice on the same inputs, {diff}. "
            "A random operation (Dropout in training mode, sampling) makes every candidate's "
            "check meaningless; put such layers in eval mode (`self.eval()` at the end of "
            "__init__) or remove them")
