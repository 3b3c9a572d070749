"""Device memory that two sandboxed processes share through a file descriptor.

The reference worker allocates each buffer with the CUDA driver's virtual memory API
(`cuMemCreate`) and exports it as a POSIX file descriptor; the parent passes that fd over the
timed worker's unix socket (SCM_RIGHTS, as for the CPU's memfd segments) and the worker imports
and maps it. The fd is the whole permission: unlike legacy CUDA IPC handles
(`cudaIpcGetMemHandle`, which torch's `reduce_tensor` uses) it needs neither a shared user id,
nor a shared PID or IPC namespace, nor ptrace rights over the exporting process, none of which
two sandboxes have.

The driver is reached with ctypes (libcuda.so.1 ships with every NVIDIA driver), so the runner
needs no extra package on the GPU host.
"""

from __future__ import annotations

import ctypes
import functools
from typing import Any

# Enum values from cuda.h (stable since CUDA 10.2).
_ALLOCATION_PINNED = 1
_HANDLE_POSIX_FD = 1
_LOCATION_DEVICE = 1
_ACCESS_READ_WRITE = 3
_GRANULARITY_RECOMMENDED = 1


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int),
                ("location", _Location), ("win32HandleMetaData", ctypes.c_void_p),
                ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


class CudaMemoryError(RuntimeError):
    """A driver call failed; the message names the call and the driver's error."""


@functools.cache
def _driver() -> ctypes.CDLL:
    lib = ctypes.CDLL("libcuda.so.1")
    u64, size_t = ctypes.c_uint64, ctypes.c_size_t
    signatures = {
        "cuMemGetAllocationGranularity": [ctypes.POINTER(size_t),
                                          ctypes.POINTER(_AllocationProp), ctypes.c_int],
        "cuMemCreate": [ctypes.POINTER(u64), size_t, ctypes.POINTER(_AllocationProp), u64],
        "cuMemExportToShareableHandle": [ctypes.c_void_p, u64, ctypes.c_int, u64],
        "cuMemImportFromShareableHandle": [ctypes.POINTER(u64), ctypes.c_void_p, ctypes.c_int],
        "cuMemAddressReserve": [ctypes.POINTER(u64), size_t, size_t, u64, u64],
        "cuMemMap": [u64, size_t, size_t, u64, u64],
        "cuMemSetAccess": [u64, size_t, ctypes.POINTER(_AccessDesc), size_t],
        "cuMemRelease": [u64],
        "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
    }
    for name, args in signatures.items():
        fn = getattr(lib, name)
        fn.argtypes, fn.restype = args, ctypes.c_int
    return lib


def _check(result: int, call: str) -> None:
    if result != 0:
        name = ctypes.c_char_p()
        _driver().cuGetErrorName(result, ctypes.byref(name))
        raise CudaMemoryError(f"{call} failed: {(name.value or b'?').decode()} ({result})")


def _prop(device_index: int) -> _AllocationProp:
    prop = _AllocationProp()
    prop.type = _ALLOCATION_PINNED
    prop.requestedHandleTypes = _HANDLE_POSIX_FD
    prop.location = _Location(_LOCATION_DEVICE, device_index)
    return prop


def padded_size(nbytes: int, device_index: int) -> int:
    """`nbytes` rounded up to the device's allocation granularity (what gets mapped)."""
    gran = ctypes.c_size_t()
    prop = _prop(device_index)
    _check(_driver().cuMemGetAllocationGranularity(ctypes.byref(gran), ctypes.byref(prop),
                                                   _GRANULARITY_RECOMMENDED),
           "cuMemGetAllocationGranularity")
    step = max(int(gran.value), 1)
    return max(-(-nbytes // step) * step, step)


class _Mapping:
    """One mapped allocation, seen by torch through `__cuda_array_interface__` (the tensor
    made from it holds this object, so the mapping outlives every view of it)."""

    def __init__(self, ptr: int, size: int):
        self.ptr, self.size = ptr, size
        self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1",
                                         "data": (ptr, False), "version": 2, "strides": None}


def _map(handle: int, size: int, device_index: int) -> Any:
    import torch

    lib = _driver()
    ptr = ctypes.c_uint64()
    _check(lib.cuMemAddressReserve(ctypes.byref(ptr), size, 0, 0, 0), "cuMemAddressReserve")
    _check(lib.cuMemMap(ptr.value, size, 0, handle, 0), "cuMemMap")
    access = _AccessDesc(_Location(_LOCATION_DEVICE, device_index), _ACCESS_READ_WRITE)
    _check(lib.cuMemSetAccess(ptr.value, size, ctypes.byref(access), 1), "cuMemSetAccess")
    # The mapping keeps the memory alive: the handle itself can go.
    _check(lib.cuMemRelease(handle), "cuMemRelease")
    return torch.as_tensor(_Mapping(ptr.value, size), device=f"cuda:{device_index}")


def export_segment(nbytes: int, device_index: int) -> tuple[int, Any]:
    """A new device allocation of at least `nbytes`: its POSIX fd (for another process) and
    this process's view of it (a flat uint8 tensor of the padded size)."""
    lib = _driver()
    size = padded_size(nbytes, device_index)
    prop = _prop(device_index)
    handle = ctypes.c_uint64()
    _check(lib.cuMemCreate(ctypes.byref(handle), size, ctypes.byref(prop), 0), "cuMemCreate")
    fd = ctypes.c_int(-1)
    try:
        _check(lib.cuMemExportToShareableHandle(ctypes.byref(fd), handle.value,
                                                _HANDLE_POSIX_FD, 0),
               "cuMemExportToShareableHandle")
        whole = _map(handle.value, size, device_index)
    except CudaMemoryError:
        lib.cuMemRelease(handle.value)
        raise
    return fd.value, whole


def import_segment(fd: int, size: int, device_index: int) -> Any:
    """Another process's allocation, from its fd, mapped here (a flat uint8 tensor of `size`,
    the padded size the exporter reported)."""
    lib = _driver()
    handle = ctypes.c_uint64()
    _check(lib.cuMemImportFromShareableHandle(ctypes.byref(handle), ctypes.c_void_p(fd),
                                              _HANDLE_POSIX_FD),
           "cuMemImportFromShareableHandle")
    try:
        return _map(handle.value, size, device_index)
    except CudaMemoryError:
        lib.cuMemRelease(handle.value)
        raise
