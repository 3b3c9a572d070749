"""A linear layer, GELU, and a sum over the features: (512, 1024) -> (512, 1024) -> (512, 1)."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.fc = nn.Linear(n_in, n_out)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.gelu(self.fc(x)).sum(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(512, 1024)]


def get_init_inputs():
    return [1024, 1024]
