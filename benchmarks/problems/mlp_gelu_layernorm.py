"""A transformer MLP's first half with its epilogue: Linear, GELU, a learned scale, LayerNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, dim: int, hidden: int):
        super().__init__()
        self.fc = nn.Linear(dim, hidden)
        self.scale = nn.Parameter(torch.ones(hidden))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, x):
        return self.norm(F.gelu(self.fc(x)) * self.scale)


def get_inputs():
    return [torch.randn(8, 256, 512)]


def get_init_inputs():
    return [512, 1024]
