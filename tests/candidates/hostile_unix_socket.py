"""Hostile: connects to a world-writable unix socket on the host and to an abstract one.
The test fills in their names."""
import socket

import torch
import torch.nn as nn

PATH = "__SOCKET_PATH__"
ABSTRACT = "__ABSTRACT_NAME__"


def _reached():
    reached = []
    for address in (PATH, "\0" + ABSTRACT):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            s.connect(address)
            s.sendall(b"escaped")
            reached.append(address)
        except OSError:
            pass
        finally:
            s.close()
    return reached


class ModelNew(nn.Module):
    def forward(self, x):
        if _reached():
            raise RuntimeError(f"reached a unix socket outside the sandbox: {_reached()}")
        return torch.softmax(x, dim=-1)
