"""A convolution block of a diffusion U-Net: Conv2d, GroupNorm, SiLU."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, channels: int, groups: int):
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, padding=1)
        self.norm = nn.GroupNorm(groups, channels)

    def forward(self, x):
        return F.silu(self.norm(self.conv(x)))


def get_inputs():
    return [torch.randn(4, 64, 64, 64)]


def get_init_inputs():
    return [64, 8]
