"""Conv2d 3 -> 32 (kernel 5, stride 2, padding 2), ReLU, then MaxPool(3, stride 2) on a (8, 3, 96, 96) batch."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """The first stage of a small convolutional network."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, stride: int, padding: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, stride=stride, padding=padding)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.pool(self.relu(self.conv(x)))


batch_size = 8


def get_inputs():
    return [torch.randn(batch_size, 3, 96, 96)]


def get_init_inputs():
    return [3, 32, 5, 2, 2]
