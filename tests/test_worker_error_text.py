"""A worker's failure reaches the parent in words that name the cause: device memory as
"out of GPU memory" with torch's own numbers, without its allocator advice."""

from __future__ import annotations

import torch

from gpurunner.transport import error_text

TORCH_OOM = ("CUDA out of memory. Tried to allocate 14.25 GiB. GPU 0 has a total capacity of 79.18 GiB "
             "of which 6.03 GiB is free. Including non-PyTorch memory, this process has 72.12 GiB "
             "memory in use. Of the allocated memory 43.01 GiB is allocated by PyTorch, and 5.34 MiB "
             "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
             "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def test_torch_out_of_memory_is_named_with_requested_total_and_free():
    text = error_text(torch.OutOfMemoryError(TORCH_OOM))
    assert text.startswith("out of GPU memory: CUDA out of memory. Tried to allocate 14.25 GiB.")
    assert "79.18 GiB of which 6.03 GiB is free" in text and "72.12 GiB memory in use" in text
    assert "PYTORCH_CUDA_ALLOC_CONF" not in text  # advice about the allocator is not the user's


def test_the_reference_workers_own_account_is_passed_on_as_written():
    why = "out of GPU memory: the candidate's shared buffers need 28.50 GiB (...)"
    assert error_text(MemoryError(why)) == why


def test_other_failures_keep_their_type():
    assert error_text(ValueError("bad shape")) == "ValueError: bad shape"
