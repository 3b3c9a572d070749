"""An LSTM cell run over a sequence in a Python loop, then a linear head on the last state."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self, n_in, hidden, n_out):
        super().__init__()
        self.cell = nn.LSTMCell(n_in, hidden)
        self.head = nn.Linear(hidden, n_out)
        self.hidden = hidden

    def forward(self, x):
        h = x.new_zeros(x.shape[0], self.hidden)
        c = x.new_zeros(x.shape[0], self.hidden)
        for t in range(x.shape[1]):
            h, c = self.cell(x[:, t], (h, c))
        return self.head(h)


def get_inputs():
    return [torch.randn(4, 5, 16)]


def get_init_inputs():
    return [16, 32, 10]
