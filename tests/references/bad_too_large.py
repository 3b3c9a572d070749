import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2


def get_inputs():
    # 2**40 bytes of zeros would never fit: expand keeps the storage tiny, the size huge
    return [torch.empty(1 << 20, dtype=torch.uint8).expand(1 << 20, 1 << 20)]


def get_init_inputs():
    return []
