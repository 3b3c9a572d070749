"""Device memory crosses to another process, under another user id, as a file descriptor
(what lets the reference worker hand a timed worker its inputs on the GPU)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from gpurunner import transport  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

IMPORTER = """
import os, socket, sys, torch
sys.path.insert(0, {root!r})
from gpurunner import cuda_memory, transport  # imported before the user id changes
if os.geteuid() == 0:
    os.setgid(65534); os.setuid(65534)  # another user than the exporter
sock = socket.socket(fileno=int(sys.argv[1]))
msg, fds, _, _ = socket.recv_fds(sock, 1024, 1)
size = int(msg)
torch.cuda.init()
spec = transport.TensorSpec((1024,), "float32", 0, 4096)
(x,) = transport.map_cuda_segment(fds[0], size, [spec], "cuda")
assert torch.equal(x, torch.arange(1024, device="cuda", dtype=torch.float32)), x[:4]
x.mul_(2)
torch.cuda.synchronize()
sock.send(b"done uid=%d" % os.geteuid())
"""


def test_a_device_segment_is_read_and_written_by_another_user_through_its_fd():
    fd, size, whole = transport.new_cuda_segment(4096, "cuda")
    spec = transport.TensorSpec((1024,), "float32", 0, 4096)
    (x,) = transport.views(whole, [spec])
    x.copy_(torch.arange(1024, device="cuda", dtype=torch.float32))
    torch.cuda.synchronize()
    ours, theirs = socket.socketpair()
    proc = subprocess.Popen([sys.executable, "-c", IMPORTER.format(root=str(ROOT)),
                             str(theirs.fileno())], pass_fds=[theirs.fileno()],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    theirs.close()
    socket.send_fds(ours, [str(size).encode()], [fd])
    os.close(fd)
    ours.settimeout(120)
    try:
        answer = ours.recv(64).decode()
    finally:
        out, err = proc.communicate(timeout=120)
    assert answer.startswith("done"), err[-2000:]
    if os.geteuid() == 0:
        assert answer == "done uid=65534"
    assert torch.equal(x, 2 * torch.arange(1024, device="cuda", dtype=torch.float32))
