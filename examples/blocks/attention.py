"""A multi-head self-attention block written out by hand: QKV projection, softmax(QK^T/sqrt(d))V,
output projection, residual; 2 sequences of 128 tokens, width 256, 8 heads."""

import math

import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, dim: int, heads: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, d = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(d // self.heads)
        y = torch.softmax(scores, dim=-1) @ v
        return x + self.out(y.transpose(1, 2).reshape(b, t, d))


def get_inputs():
    return [torch.randn(2, 128, 256)]


def get_init_inputs():
    return [256, 8]
