"""Legitimate: the reference's softmax under torch.compile (a framework-level idea)."""
import torch
import torch.nn as nn


def _softmax(x):
    return torch.softmax(x, dim=-1)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.fn = torch.compile(_softmax, dynamic=False)

    def forward(self, x):
        return self.fn(x)
