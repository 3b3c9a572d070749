"""A convolution block of a CNN: 3x3 convolution, batch normalization (inference), ReLU, on a
batch of 8 feature maps of 32 channels, 56x56."""

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, cin: int, cout: int):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(cout)
        self.bn.eval()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


def get_inputs():
    return [torch.randn(8, 32, 56, 56)]


def get_init_inputs():
    return [32, 64]
