"""Inputs, models and outputs the same way in the reference and the candidate process.

Both processes call the reference's `get_inputs()` under the same seed and build their model
under the same seed, so inputs are identical and weights match (KernelBench's convention).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import torch

INIT_SEED = 42  # weights need not be secret; input seeds are


def make_inputs(module: ModuleType, seed: int, device: str = "cpu") -> list[Any]:
    """`get_inputs()` under `seed`, as a list. Tensors it creates without naming a device
    are made directly on `device` (random numbers on a GPU are far faster than on the CPU);
    both the reference and the candidate process do the same, so the inputs are identical."""
    torch.manual_seed(seed)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(seed)
    with torch.device(device):
        got = module.get_inputs()
    return list(got) if isinstance(got, list | tuple) else got


def to_device(values: list[Any], device: str) -> list[Any]:
    return [v.to(device) if isinstance(v, torch.Tensor) else v for v in values]


def input_bytes(values: list[Any]) -> int:
    """Bytes of the distinct tensor storages among `values`."""
    seen: dict[tuple[str, int], int] = {}
    for v in values:
        if isinstance(v, torch.Tensor):
            st = v.untyped_storage()
            seen[(str(v.device), st.data_ptr())] = st.nbytes()
    return sum(seen.values())


def make_model(cls: type, module: ModuleType, device: str) -> torch.nn.Module:
    """`cls(*get_init_inputs())` built under the fixed init seed and moved to `device`."""
    torch.manual_seed(INIT_SEED)
    init = module.get_init_inputs()
    init = list(init) if isinstance(init, list | tuple) else [init]
    torch.manual_seed(INIT_SEED)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(INIT_SEED)
    model = cls(*init)
    if isinstance(model, torch.nn.Module):
        model = model.to(device)
    return model


def as_outputs(result: Any) -> list[Any]:
    """A forward's result as a list: a tensor becomes [tensor], a tuple or list stays."""
    if isinstance(result, list | tuple):
        return list(result)
    return [result]


def describe(values: list[Any]) -> tuple[list[list[int]], list[str]]:
    """Shapes and dtype names of the tensors among `values` (other values: their type)."""
    shapes, dtypes = [], []
    for v in values:
        if isinstance(v, torch.Tensor):
            shapes.append(list(v.shape))
            dtypes.append(str(v.dtype).replace("torch.", ""))
        else:
            shapes.append([])
            dtypes.append(type(v).__name__)
    return shapes, dtypes
