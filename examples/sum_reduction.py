"""Sum over the middle dimension of a (64, 1024, 2048) tensor, keeping it (KernelBench level 1 style, larger)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """torch.sum over one dimension, given to the constructor."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 64
dim1 = 1024
dim2 = 2048
reduce_dim = 1


def get_inputs():
    return [torch.randn(batch_size, dim1, dim2)]


def get_init_inputs():
    return [reduce_dim]
