"""Cheat: wrap the worker's messages and result file to report a 1 us call and no broken
rule, while each call really takes 5 ms."""
import json
import sys
import time
from pathlib import Path

import torch
import torch.nn as nn

from gpurunner import transport

worker = sys.modules["__main__"]  # the worker runs as python -m gpurunner.worker

_send = transport.Channel.send
_worker_send = worker.send


def forged(self, msg, fds=()):
    if "event_ms" in msg:
        msg = {**msg, "event_ms": 0.001}
    if msg.get("reply") == "facts":
        msg = {"reply": "facts", "ok": True}
    return _send(self, msg, fds)


def forged_done(event, **data):
    if event == "done":
        Path("result.json").write_text(json.dumps({"ok": True, "timing": {"median_ms": 0.001}}))
    return _worker_send(event, **data)


transport.Channel.send = forged
worker.send = forged_done


class ModelNew(nn.Module):
    def forward(self, x):
        time.sleep(0.005)
        return torch.softmax(x, dim=-1)
