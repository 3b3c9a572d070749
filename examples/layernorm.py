"""LayerNorm over the last two dimensions (64, 64) of a (16, 32, 64, 64) tensor, with weight and bias."""

import torch
import torch.nn as nn


class Model(nn.Module):
    """nn.LayerNorm over the trailing dimensions."""

    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.ln(x)


batch_size = 16
features = 32
dim1 = 64
dim2 = 64


def get_inputs():
    return [torch.randn(batch_size, features, dim1, dim2)]


def get_init_inputs():
    return [(dim1, dim2)]
