"""How the trusted side and the sandboxes talk, and how tensors cross without touching disk.

Messages are JSON lines on a Unix socket (one per worker), read with a size bound; file
descriptors ride along with a message (SCM_RIGHTS). Tensors live in shared memory: on the CPU
an anonymous memfd segment mapped by both workers (no name, no file: nothing to clean up, the
kernel frees it with the last mapping); on CUDA device allocations of the reference worker,
exported as file descriptors too (`gpurunner.cuda_memory`) and mapped by each timed worker.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import socket
import time
from dataclasses import dataclass
from typing import Any

MAX_MESSAGE = 1 << 20  # a longer line from a worker is a broken worker, not a bigger buffer
MAX_FDS = 8
ALIGN = 64


class ChannelError(Exception):
    """The other side closed, sent something unreadable, or did not answer in time."""


class Channel:
    """One end of a worker's socket: JSON lines out and in, fds alongside."""

    def __init__(self, sock: socket.socket):
        self.sock = sock
        self._buffer = b""
        self._fds: list[int] = []
        self.closed = False

    def fileno(self) -> int:
        return self.sock.fileno()

    def send(self, msg: dict[str, Any], fds: list[int] | tuple[int, ...] = ()) -> None:
        data = (json.dumps(msg) + "\n").encode()
        try:
            if fds:
                socket.send_fds(self.sock, [data], list(fds))
            else:
                self.sock.sendall(data)
        except OSError as exc:
            raise ChannelError(f"the worker's channel is closed ({exc.strerror})") from exc

    def recv(self, deadline: float | None = None) -> tuple[dict[str, Any], list[int]]:
        """The next message and the fds that came with it; ChannelError on end-of-file, on a
        line over MAX_MESSAGE, or at `deadline` (time.monotonic)."""
        while b"\n" not in self._buffer:
            if len(self._buffer) > MAX_MESSAGE:
                raise ChannelError(f"a message longer than {MAX_MESSAGE} bytes")
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.sock], [], [], wait)
            if not ready:
                raise ChannelError("no answer in time")
            try:
                chunk, fds, _, _ = socket.recv_fds(self.sock, 65536, MAX_FDS)
            except OSError as exc:
                raise ChannelError(f"the worker's channel failed ({exc.strerror})") from exc
            self._fds.extend(fds)
            if not chunk:
                self.closed = True
                raise ChannelError("the worker closed its channel")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        fds, self._fds = self._fds, []
        try:
            msg = json.loads(line)
        except ValueError as exc:
            raise ChannelError("a message that is not JSON") from exc
        if not isinstance(msg, dict):
            raise ChannelError("a message that is not a JSON object")
        return msg, fds

    def close(self) -> None:
        for fd in self._fds:
            os.close(fd)
        self._fds = []
        self.sock.close()


@dataclass(frozen=True)
class TensorSpec:
    """Shape and dtype name of one tensor in a shared segment, and where it starts."""

    shape: tuple[int, ...]
    dtype: str
    offset: int
    nbytes: int

    def to_dict(self) -> dict[str, Any]:
        return {"shape": list(self.shape), "dtype": self.dtype, "offset": self.offset,
                "nbytes": self.nbytes}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TensorSpec:
        return cls(tuple(int(x) for x in d["shape"]), str(d["dtype"]), int(d["offset"]),
                   int(d["nbytes"]))


def layout(shapes: list[list[int]], dtypes: list[str], itemsizes: list[int],
           ) -> tuple[list[TensorSpec], int]:
    """Specs for tensors packed one after another (64-byte aligned) and the segment's size."""
    specs, offset = [], 0
    for shape, dtype, item in zip(shapes, dtypes, itemsizes, strict=True):
        n = item
        for d in shape:
            n *= int(d)
        specs.append(TensorSpec(tuple(int(d) for d in shape), dtype, offset, n))
        offset += -(-n // ALIGN) * ALIGN
    return specs, max(offset, ALIGN)


def new_segment(nbytes: int, name: str = "gpurunner") -> int:
    """An anonymous shared-memory file of `nbytes` (memfd): an fd, never a path."""
    fd = os.memfd_create(name, os.MFD_CLOEXEC)
    try:
        os.ftruncate(fd, nbytes)
    except OSError:
        os.close(fd)
        raise
    return fd


def map_segment(fd: int, specs: list[TensorSpec]) -> list[Any]:
    """The tensors of a CPU segment, mapped (writes are seen by every process that maps it)."""
    import torch

    size = os.fstat(fd).st_size
    _require(size, specs)
    mm = mmap.mmap(fd, size)
    whole = torch.frombuffer(mm, dtype=torch.uint8) if size else torch.empty(0, dtype=torch.uint8)
    return views(whole, specs)


def map_cuda_segment(fd: int, size: int, specs: list[TensorSpec], device: str) -> list[Any]:
    """The tensors of a device segment another process exported (`size`: its padded size)."""
    from gpurunner import cuda_memory

    _require(size, specs)
    return views(cuda_memory.import_segment(fd, size, device_index(device)), specs)


def new_cuda_segment(nbytes: int, device: str) -> tuple[int, int, Any]:
    """A device segment of at least `nbytes`: its fd, its padded size and this process's
    flat view of it."""
    from gpurunner import cuda_memory

    fd, whole = cuda_memory.export_segment(nbytes, device_index(device))
    return fd, int(whole.numel()), whole


def device_index(device: str) -> int:
    import torch

    index = torch.device(device).index
    return torch.cuda.current_device() if index is None else int(index)


def views(whole: Any, specs: list[TensorSpec]) -> list[Any]:
    """Each spec's tensor inside a flat uint8 buffer."""
    import torch

    out = []
    for s in specs:
        raw = whole[s.offset:s.offset + s.nbytes]
        out.append(raw.view(getattr(torch, s.dtype)).view(s.shape))
    return out


def _require(size: int, specs: list[TensorSpec]) -> None:
    need = max((s.offset + s.nbytes for s in specs), default=0)
    if size < need:
        raise ValueError(f"shared segment of {size} bytes, {need} needed")


def error_text(exc: BaseException) -> str:
    """A handler's failure for the parent: device memory named as such, with torch's numbers
    (requested, total, free, held) and without its allocator advice."""
    text = str(exc)
    if type(exc).__name__ == "OutOfMemoryError":  # torch.OutOfMemoryError, without importing torch
        return "out of GPU memory: " + text.split(" Of the allocated memory")[0]
    if isinstance(exc, MemoryError) and text.startswith("out of GPU memory"):
        return text  # the reference worker's own account of its shared buffers
    return f"{type(exc).__name__}: {text}"


def serve(channel: Channel, handlers: dict[str, Any]) -> None:
    """A worker's command loop: each `{"cmd": name, ...}` gets `handlers[name](msg, fds)`'s
    dict back as `{"reply": name, "ok": True, ...}` (a handler returning `(dict, fds)` sends
    those fds with it and closes its copies); an exception becomes `ok: False` with its text;
    `exit` ends the loop."""
    import traceback

    while True:
        msg, fds = channel.recv()
        cmd = str(msg.get("cmd"))
        if cmd == "exit":
            channel.send({"reply": "exit", "ok": True})
            return
        handler = handlers.get(cmd)
        send_fds: tuple[int, ...] = ()
        try:
            out = handler(msg, fds) if handler else {"ok": False, "error": f"no command {cmd}"}
            if isinstance(out, tuple):  # (reply, fds to send with it)
                out, send_fds = out
        except Exception as exc:  # noqa: BLE001 - reported to the parent, which decides
            out = {"ok": False, "error": error_text(exc)[:2000],
                   "traceback": traceback.format_exc()[-4000:]}
        channel.send({"reply": cmd, "ok": True, **out}, send_fds)
        for fd in send_fds:
            os.close(fd)  # the receiver has its own copy


def worker_channel(fd: int) -> Channel:
    """The worker's end of its socket, as a Channel (the fd itself stays open for `send`)."""
    return Channel(socket.socket(fileno=os.dup(fd)))
