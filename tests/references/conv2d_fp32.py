"""A 3x3 convolution in fp32 (64 -> 128 channels): cuDNN runs it in TF32 under torch's
default switch, so its roofline is the TF32 ceiling."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels, out_channels):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False)

    def forward(self, x):
        return self.conv(x)


def get_inputs():
    return [torch.randn(32, 64, 56, 56)]


def get_init_inputs():
    return [64, 128]
