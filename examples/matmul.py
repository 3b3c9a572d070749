"""Square matrix multiplication C = A @ B with 512 x 512 fp32 matrices."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """One matrix product."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


N = 512


def get_inputs():
    return [torch.rand(N, N), torch.rand(N, N)]


def get_init_inputs():
    return []
