"""A GEMM with an epilogue chain and a row normalization: Linear, GELU, scale, shift, LayerNorm."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.fc = nn.Linear(in_features, out_features)
        self.scale = nn.Parameter(torch.randn(out_features))
        self.norm = nn.LayerNorm(out_features)

    def forward(self, x):
        y = F.gelu(self.fc(x)) * self.scale + 0.5
        return self.norm(y)


def get_inputs():
    return [torch.randn(4, 8, 64)]


def get_init_inputs():
    return [64, 96]
