"""A convolution, group normalization with its per-channel affine, then an activation chain."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.norm = nn.GroupNorm(groups, out_channels)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.norm(self.conv(x) + self.bias)
        return F.selu(y) + F.elu(y, alpha=0.5) * 2.0


def get_inputs():
    return [torch.randn(2, 3, 10, 10)]


def get_init_inputs():
    return [3, 12, 4]
