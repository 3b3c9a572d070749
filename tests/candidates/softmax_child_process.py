"""Cheat: leave a process running behind the evaluation."""
import subprocess

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.proc = subprocess.Popen(["sleep", "60"])

    def forward(self, x):
        return torch.softmax(x, dim=-1)
