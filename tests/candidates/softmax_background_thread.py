"""Cheat: leave a background thread running (it could finish work after the timer stops)."""
import threading
import time

import torch
import torch.nn as nn


def _spin():
    while True:
        time.sleep(0.01)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        threading.Thread(target=_spin, name="helper", daemon=True).start()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
