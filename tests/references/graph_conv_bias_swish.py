"""A convolution, a per-channel bias and a chain of activations (no reduction)."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x) + self.bias
        y = F.silu(y) * torch.sigmoid(y) - torch.tanh(y) / 4
        return F.hardswish(F.mish(y)) + F.softplus(y).pow(2) + torch.clamp(y, min=-0.5)


def get_inputs():
    return [torch.randn(2, 4, 10, 10)]


def get_init_inputs():
    return [4, 8]
