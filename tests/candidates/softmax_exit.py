"""Broken: the forward ends the process with exit status 0 and no result."""
import os

import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        os._exit(0)
