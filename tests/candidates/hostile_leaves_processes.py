"""Hostile: a double-forked daemon (its own session, parent gone) and 32 MB in /dev/shm and
the working folder, all meant to outlive the evaluation. The test fills in MARKER; with
CRASH in it, the candidate then crashes."""
import ctypes
import os
import subprocess
import time

import torch
import torch.nn as nn

MARKER = "__MARKER__"
with open(f"/dev/shm/{MARKER}", "wb") as f:
    f.write(b"\1" * (32 << 20))
with open(f"{MARKER}.leftover", "wb") as f:
    f.write(b"seeds and outputs")
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        subprocess.Popen(["sh", "-c", "sleep 3600; true", MARKER], start_new_session=True)
        os._exit(0)
    os._exit(0)
os.wait()


def _daemon_running():
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if MARKER.encode() in f.read():
                    return True
        except OSError:
            pass
    return False


for _ in range(100):
    if _daemon_running():
        break
    time.sleep(0.05)
else:
    raise RuntimeError("the daemon did not start")
if "CRASH" in MARKER:
    ctypes.string_at(0)  # a segmentation fault (the first process of a PID namespace ignores kill)


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
