"""AlexNet's first stage: Conv2d 3 -> 96 (kernel 11, stride 4, padding 2), ReLU, MaxPool(3, stride 2) on (100, 3, 224, 224), fp32."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """Convolution, ReLU and max pooling as in AlexNet's first layer."""

    def __init__(self, num_classes: int = 1000):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels=3, out_channels=96, kernel_size=11, stride=4, padding=2)
        self.relu1 = nn.ReLU(inplace=True)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.maxpool1(self.relu1(self.conv1(x)))


batch_size = 100


def get_inputs():
    return [torch.randn(batch_size, 3, 224, 224)]


def get_init_inputs():
    return [1000]
