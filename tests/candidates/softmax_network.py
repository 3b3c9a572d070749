"""Hostile: tries to reach a service on this host (PostgreSQL's port) from the sandbox."""
import socket

import torch
import torch.nn as nn


def _reachable():
    try:
        with socket.create_connection(("127.0.0.1", 5432), timeout=1):
            return True
    except OSError:
        return False


class ModelNew(nn.Module):
    def forward(self, x):
        if _reachable():
            raise RuntimeError("the network is reachable from the sandbox")
        return torch.softmax(x, dim=-1)
