"""Softmax over the rows of a (256, 4096) matrix: torch.softmax along the last dimension."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Row-wise softmax."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 256
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return []
