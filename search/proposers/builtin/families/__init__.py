"""Kernel families: each one a folder holding its templates and one spec (`FAMILY` in the
folder's `__init__.py`): what it computes (title), where it runs (devices, backends), its
parameters (grid, defaults, the groups a retune moves together), when it applies (a matcher
over the problem as the reference's graph shows it) and how it renders its core.

Adding a family is a new folder and one line in NAMES.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from search.proposers.builtin.analysis import ProblemShape
    from search.proposers.builtin.recipe import Recipe

# Every family, by the core name a recipe carries (which is also its folder's name).
NAMES = (
    "reference", "library_softmax", "library_rms_norm", "inplace_softmax",
    "cpu_softmax", "cpu_rownorm", "cpu_elementwise", "cpu_reduce",
    "cuda_softmax_rows", "cuda_softmax_online", "cuda_rownorm_split", "cuda_conv",
    "cuda_elementwise", "cuda_reduce",
    "fused_cpp", "fused_triton", "triton_gemm", "simplified",
)


def _always(shape: ProblemShape) -> bool:
    return True


@dataclass(frozen=True)
class Family:
    """One kernel family's spec."""

    core: str
    title: str
    devices: tuple[str, ...]
    backends: tuple[str, ...]  # how its kernels are built: torch, cpp, nvrtc, triton
    render: Callable[[Recipe, ProblemShape], str]  # the core section of a candidate file
    folder: Path
    grid: dict[str, list[Any]] = field(default_factory=dict)  # tunable parameter -> values, in order
    defaults: dict[str, Any] = field(default_factory=dict)  # what a recipe without the parameter runs
    groups: list[tuple[tuple[str, ...], str]] = field(default_factory=list)  # retuned together, in words
    matches: Callable[[ProblemShape], bool] = _always  # whether it can compute this problem
    # A grid that depends on the problem (e.g. launch shapes that cover a row exactly).
    points: Callable[[ProblemShape], list[dict[str, Any]]] | None = None
    # Whether the candidate builds the reference's modules itself (parameters under their own
    # names) instead of calling the reference; its core then needs no `model.ref`.
    owns_parameters: bool = False
    # Whether the core converts the inputs' layout and precision itself (for this recipe).
    takes_raw_inputs: Callable[[Recipe], bool] = lambda recipe: False
    # Whether a kernel with these parameters has launch settings worth retuning.
    retunable: Callable[[dict[str, Any]], bool] = lambda params: True
    # Whether its forward still runs torch's own operators (a GEMM, a convolution), which the
    # framework options change (TF32, cuDNN autotuning, memory format, precision); a
    # hand-written kernel ignores them.
    framework_options: bool = False

    def template(self, name: str) -> str:
        """The text of a file in the family's folder."""
        return _read(self.folder / name)


@functools.cache
def _read(path: Path) -> str:
    return path.read_text()


@functools.cache
def registry() -> dict[str, Family]:
    """Every family, by core name, in NAMES order."""
    return {name: importlib.import_module(f"{__name__}.{name}").FAMILY for name in NAMES}


def family(core: str) -> Family:
    """The family of a recipe's core; ValueError for a core no family has."""
    try:
        return registry()[core]
    except KeyError:
        raise ValueError(f"unknown core {core!r}") from None
