"""The trusted reference worker of an evaluation: it makes every input, computes the
reference's outputs for it, hands the input to each timed worker (the candidate's, and the
eager and torch.compile baselines') only when that worker's call starts, and checks what the
candidate wrote.

It runs in its own sandboxed process (the pasted reference is code too), never next to a
candidate, and is never timed: the baselines run in workers of their own that behave exactly
like the candidate's (see `gpurunner.paired`), so all timed processes do the same work between
calls and the operating system treats them alike.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from gpurunner import checks, cuda_memory, transport
from gpurunner import inputs as inp
from gpurunner.load import import_source
from gpurunner.timing import CPU_FLUSH_BYTES, L2_FLUSH_BYTES


class Referee:
    """The reference model, the current inputs and their expected outputs, and the shared
    buffers (inputs, outputs) of each slot: "baseline" (the eager and compiled workers take
    turns on it) and "candidate"."""

    def __init__(self, job: dict[str, Any], workdir: Path):
        self.device: str = job["device"]
        self.cuda = self.device.startswith("cuda")
        self.atol, self.rtol = float(job["atol"]), float(job["rtol"])
        self.module = import_source(workdir / "reference.py", "reference")
        self.model = inp.make_model(self.module.Model, self.module, self.device)
        self.inputs: list[Any] = []  # this call's inputs, private to this process
        self.expected: list[torch.Tensor] = []  # the reference's outputs for them
        self.slots: dict[str, tuple[list[torch.Tensor], list[torch.Tensor]]] = {}
        self._specs: tuple[list[transport.TensorSpec], list[transport.TensorSpec]] = ([], [])
        self._sizes = (0, 0)  # bytes of the inputs' and the outputs' segments
        self.flush = torch.empty(L2_FLUSH_BYTES if self.cuda else CPU_FLUSH_BYTES,
                                 dtype=torch.int8, device=self.device)

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize()

    def ping(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        return {}

    def make(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """New inputs from `get_inputs()` under the parent's fresh seed, and the reference's
        outputs for them (untimed: the timed reference runs in a worker of its own)."""
        values = inp.make_inputs(self.module, int(msg["seed"]), self.device)
        self.inputs = inp.to_device(values, self.device)
        copies = [v.clone() if isinstance(v, torch.Tensor) else v for v in self.inputs]
        with torch.no_grad():
            self.expected = inp.as_outputs(self.model(*copies))
        self.sync()
        return {}

    def layout(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Shapes of the inputs and outputs and the shared buffers' layout."""
        self.make(msg, fds)
        tensors_in = [v for v in self.inputs if isinstance(v, torch.Tensor)]
        outs = self.expected
        in_specs, in_size = transport.layout([list(t.shape) for t in tensors_in],
                                             [_name(t.dtype) for t in tensors_in],
                                             [t.element_size() for t in tensors_in])
        out_specs, out_size = transport.layout([list(t.shape) for t in outs],
                                               [_name(t.dtype) for t in outs],
                                               [t.element_size() for t in outs])
        self._specs, self._sizes = (in_specs, out_specs), (in_size, out_size)
        values = [None if isinstance(v, torch.Tensor) else v for v in self.inputs]
        return {"inputs": [s.to_dict() for s in in_specs], "values": values,
                "outputs": [s.to_dict() for s in out_specs], "in_size": in_size,
                "out_size": out_size, "cuda": self.cuda}

    def attach(self, msg: dict[str, Any], fds: list[int]) -> Any:
        """A slot's shared buffers: the two CPU segments the parent created (inputs, outputs),
        or on CUDA two device segments allocated here, whose fds go back with the reply."""
        in_specs, out_specs = self._specs
        slot = str(msg["slot"])
        if self.cuda:
            try:
                in_fd, in_size, ins = transport.new_cuda_segment(self._sizes[0], self.device)
                out_fd, out_size, outs = transport.new_cuda_segment(self._sizes[1], self.device)
            except cuda_memory.CudaMemoryError as exc:
                if "OUT_OF_MEMORY" not in str(exc):
                    raise
                raise MemoryError(self._out_of_memory(slot)) from exc
            self.slots[slot] = (transport.views(ins, in_specs), transport.views(outs, out_specs))
            return {"sizes": [in_size, out_size]}, (in_fd, out_fd)
        self.slots[slot] = (transport.map_segment(fds[0], in_specs),
                            transport.map_segment(fds[1], out_specs))
        for fd in fds:
            transport.os.close(fd)
        return {}

    def _out_of_memory(self, slot: str) -> str:
        """Why a slot's device buffers could not be made, with the device's own numbers."""
        free, total = torch.cuda.mem_get_info(self.device)
        held = torch.cuda.memory_reserved(self.device)
        gib = 2**30
        return (f"out of GPU memory: the {slot}'s shared buffers need "
                f"{sum(self._sizes) / gib:.2f} GiB ({self._sizes[0] / gib:.2f} GiB of inputs, "
                f"{self._sizes[1] / gib:.2f} GiB of outputs) and the device has {free / gib:.2f} "
                f"GiB free of {total / gib:.2f} GiB; the reference worker holds "
                f"{held / gib:.2f} GiB (the inputs and expected outputs) plus "
                f"{len(self.slots)} other slot(s) of {sum(self._sizes) / gib:.2f} GiB, and each "
                f"timed worker its own outputs and workspace")

    def stage(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """This call's inputs into a slot's shared buffer, its output buffer poisoned (NaN;
        the largest value for integers), and a cold cache."""
        ins, outs = self.slots[str(msg["slot"])]
        tensors = [v for v in self.inputs if isinstance(v, torch.Tensor)]
        for dst, src in zip(ins, tensors, strict=True):
            dst.copy_(src)
        for out in outs:
            out.fill_(_poison(out.dtype))
        self.flush.zero_()
        self.sync()
        return {}

    def check(self, msg: dict[str, Any], fds: list[int]) -> dict[str, Any]:
        """Compare a slot's outputs with the reference's for the same inputs, and its input
        buffer with the inputs it was given."""
        ins, outs = self.slots[str(msg["slot"])]
        comp = checks.compare_outputs(self.expected, list(outs), self.atol, self.rtol,
                                      self.device)
        tensors = [v for v in self.inputs if isinstance(v, torch.Tensor)]
        mutated = [i for i, (a, b) in enumerate(zip(ins, tensors, strict=True))
                   if not _same(a, b)]
        return {"checks": [c.__dict__ for c in comp.checks], "max_abs_err": comp.max_abs_err,
                "rel_err": comp.rel_err, "mutated": mutated}


def _name(dtype: torch.dtype) -> str:
    return str(dtype).replace("torch.", "")


def _poison(dtype: torch.dtype) -> float | int | bool:
    if dtype.is_floating_point or dtype.is_complex:
        return float("nan")
    if dtype == torch.bool:
        return True
    return torch.iinfo(dtype).max


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    if a.is_floating_point():
        return bool(torch.equal(a.nan_to_num(0.0, 1.0, -1.0), b.nan_to_num(0.0, 1.0, -1.0))
                    and torch.equal(a.isnan(), b.isnan()))
    return bool(torch.equal(a, b))


def run_referee_job(job: dict[str, Any], workdir: Path, channel: transport.Channel,
                    ) -> dict[str, Any]:
    """Serve the parent's commands until it says `exit`."""
    referee = Referee(job, workdir)
    handlers = {name: getattr(referee, name) for name in (
        "ping", "make", "layout", "attach", "stage", "check")}
    channel.send({"event": "built"})
    transport.serve(channel, handlers)
    return {"ok": True}
