"""A convolution, a per-channel bias and a long activation chain (every lowering the generated
kernels know, so one C++ build checks them all), then a mean over the channels."""
import torch
import torch.nn as nn
import torch.nn.functional as F


class Model(nn.Module):
    def __init__(self, in_channels: int, out_channels: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, 3)
        self.bias = nn.Parameter(torch.randn(out_channels, 1, 1))

    def forward(self, x):
        y = self.conv(x) + self.bias
        a = F.hardtanh(F.leaky_relu(torch.relu(y), 0.1) * 2.0, -1.0, 3.0) + F.gelu(y, approximate="tanh")
        b = F.silu(y) * torch.sigmoid(y) - torch.tanh(y) / 4 + F.mish(y) + F.hardswish(y) + F.hardsigmoid(y)
        c = F.softplus(y).pow(2) + torch.clamp(y, min=-0.5) + F.elu(y) + torch.exp(-y.abs()) + torch.rsqrt(y * y + 1)
        d = torch.log(y.abs() + 1.0) + torch.maximum(y, a) + torch.clamp_max(y, 0.25) + F.gelu(y) + y.abs().pow(1.5)
        return (a + b + c + d).mean(dim=1, keepdim=True)


def get_inputs():
    return [torch.randn(2, 3, 12, 12)]


def get_init_inputs():
    return [3, 16]
