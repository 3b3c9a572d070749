"""A convolution, an epilogue chain, then an average pooling that ends the forward (it runs
after the generated kernel, as it was)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.pool = nn.AvgPool2d(2)

    def forward(self, x):
        y = torch.tanh(self.conv(x) - 0.5) - 0.2
        return self.pool(y)


def get_inputs():
    return [torch.randn(2, 3, 14, 14)]


def get_init_inputs():
    return [3, 8]
