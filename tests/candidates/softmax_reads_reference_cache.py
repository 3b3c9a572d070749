"""Hostile: looks in the runner's private cache for the reference outputs and the seed salt.
The test fills in RUNNER_CACHE with the cache directory of the run."""
import os

import torch
import torch.nn as nn

RUNNER_CACHE = "__RUNNER_CACHE__"
_seen = []
for root, _dirs, files in os.walk(os.path.join(RUNNER_CACHE, "ref")):
    _seen += [os.path.join(root, f) for f in files]


class ModelNew(nn.Module):
    def forward(self, x):
        if _seen:
            raise RuntimeError(f"read the runner's private cache: {_seen[:3]}")
        return torch.softmax(x, dim=-1)
