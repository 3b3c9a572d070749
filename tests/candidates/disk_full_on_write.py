"""Writes a scratch file at each call on a disk that is full (/dev/full answers every write
with ENOSPC, as a full disk does): the verdict must say the disk is full, with the numbers."""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        with open("/dev/full", "wb") as scratch:
            scratch.write(b"\0" * 4096)
            scratch.flush()
        return x.softmax(dim=-1)
