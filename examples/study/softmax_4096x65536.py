"""Softmax over the rows of a (4096, 65536) fp32 matrix, as in the fast-kernels study."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Row-wise softmax."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 65536


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
