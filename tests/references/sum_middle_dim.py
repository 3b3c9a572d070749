"""A small reduction over a middle dimension given to the constructor (KernelBench style)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return torch.sum(x, dim=self.dim, keepdim=True)


def get_inputs():
    return [torch.randn(16, 64, 128)]


def get_init_inputs():
    return [1]
