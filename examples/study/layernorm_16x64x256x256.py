"""LayerNorm over (64, 256, 256) of a (16, 64, 256, 256) fp32 tensor, as in the fast-kernels study."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LayerNorm over the three trailing dimensions."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 64
dim1 = 256
dim2 = 256


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(features, dim1, dim2)]
