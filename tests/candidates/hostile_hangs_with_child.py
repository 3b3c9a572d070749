"""Hostile: starts a long-lived child and hangs, for a test that kills the runner itself
with SIGKILL. The test fills in MARKER and finds the child by it."""
import subprocess
import time

import torch
import torch.nn as nn

subprocess.Popen(["sh", "-c", "sleep 3600; true", "__MARKER__"], start_new_session=True)
time.sleep(3600)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
