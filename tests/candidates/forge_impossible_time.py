"""Cheat: report a call time of 1e-320 ms and facts of the wrong types in every message."""
import torch
import torch.nn as nn

from gpurunner import transport

_send = transport.Channel.send


def forged(self, msg, fds=()):
    if "event_ms" in msg:
        msg = {**msg, "event_ms": 1e-320}
    if msg.get("reply") == "facts":
        msg = {**msg, "threads": "none", "native_threads": "many", "tampered": {"a": 1},
               "children": [1.5, "x"], "dtypes_produced": 7, "profile": [1, 2]}
    return _send(self, msg, fds)


transport.Channel.send = forged


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
