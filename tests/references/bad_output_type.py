import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return {"y": x * 2}


def get_inputs():
    return [torch.randn(4, 4)]


def get_init_inputs():
    return []
