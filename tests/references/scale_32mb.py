"""Doubles a (2048, 4096) fp32 matrix: 32 MB in, 32 MB out."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0


def get_inputs():
    return [torch.randn(2048, 4096)]


def get_init_inputs():
    return []
