"""RMSNorm as one line: x * rsqrt(mean(x^2) + eps) * w over rows of 4096 (1024 rows)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.eps = eps
        self.w = nn.Parameter(torch.ones(dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.w


def get_inputs():
    return [torch.randn(1024, 4096)]


def get_init_inputs():
    return [4096]
