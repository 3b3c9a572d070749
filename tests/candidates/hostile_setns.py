"""Hostile: enters the network namespace of every process it can see (the host's, it hopes),
then connects to a TCP port the test listens on. The test fills in the port."""
import ctypes
import os
import socket

import torch
import torch.nn as nn

PORT = int("__PORT__")
_libc = ctypes.CDLL(None, use_errno=True)
_entered = []
for pid in ["1", str(os.getppid())] + [p for p in os.listdir("/proc") if p.isdigit()]:
    try:
        fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
    except OSError:
        continue
    if _libc.setns(fd, 0x40000000) == 0:  # CLONE_NEWNET
        _entered.append(pid)
    os.close(fd)


def _reached():
    try:
        with socket.create_connection(("127.0.0.1", PORT), timeout=1) as s:
            s.sendall(b"escaped")
            return True
    except OSError:
        return False


class ModelNew(nn.Module):
    def forward(self, x):
        if _reached():
            raise RuntimeError(f"reached the host's port {PORT} (setns into {_entered})")
        return torch.softmax(x, dim=-1)
