"""A transformer MLP block: Linear, GELU, Linear, dropout (p=0), on 256 tokens of width 384."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, hidden)
        self.fc2 = nn.Linear(hidden, dim)
        self.drop = nn.Dropout(0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.drop(self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(2, 128, 384)]


def get_init_inputs():
    return [384, 1536]
