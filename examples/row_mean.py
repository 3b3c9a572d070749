"""Mean over the last dimension of a (4096, 16384) tensor: one value per row."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """x.mean(dim=-1)."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.mean(dim=-1)


rows = 4096
cols = 16384


def get_inputs():
    return [torch.randn(rows, cols)]


def get_init_inputs():
    return []
