"""A matrix product, Dropout and softmax (KernelBench level2/66, small): Dropout in training
mode, as the module is constructed, makes every run's output different."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, in_features, out_features, dropout_p):
        super().__init__()
        self.matmul = nn.Linear(in_features, out_features)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, x):
        x = self.matmul(x)
        x = self.dropout(x)
        return torch.softmax(x, dim=1)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return [64, 48, 0.2]
