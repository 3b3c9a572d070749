"""Legitimate precision change: computes in bfloat16, within tolerance, and must be labelled."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x.to(torch.bfloat16).float(), dim=-1)
