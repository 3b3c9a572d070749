"""x + 1 on 16 values: about 2 us of work, far less than one round trip of the runner's channel."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x + 1


def get_inputs():
    return [torch.randn(16)]


def get_init_inputs():
    return []
