"""A transformer MLP block: Linear, GELU, Linear, dropout (no-op at p=0)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, d, hidden):
        super().__init__()
        self.fc1 = nn.Linear(d, hidden)
        self.fc2 = nn.Linear(hidden, d)
        self.drop = nn.Dropout(0.0)

    def forward(self, x):
        return self.drop(self.fc2(torch.nn.functional.gelu(self.fc1(x))))


def get_inputs():
    return [torch.randn(4, 16, 64)]


def get_init_inputs():
    return [64, 256]
