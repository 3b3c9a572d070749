"""Cheat: right values, but the input is zeroed in place afterwards."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.softmax(x, dim=-1)
        x.zero_()
        return out
