"""A seccomp filter for what a kernel candidate never needs, built as a BPF program here.

Denied calls fail with EPERM (the process goes on and sees an ordinary error): tracing other
processes, mounting, entering or making namespaces, the kernel keyring, BPF, perf events,
kernel modules, kexec, reading other processes' memory, io_uring (its operations bypass this
filter). `clone` is allowed unless it asks for a new namespace; `clone3` answers ENOSYS so
libc falls back to `clone`, whose flags the filter can read. A call made under another
architecture's numbering (x32, or a 32-bit entry) kills the process.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

# BPF opcodes (linux/bpf_common.h) and seccomp return values (linux/seccomp.h).
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06
RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
CLONE_NEW_FLAGS = 0x7E020000  # NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET

_DENIED_NAMES = (
    "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd",
    "mount", "umount2", "pivot_root", "chroot", "mount_setattr", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "setns", "unshare",
    "keyctl", "add_key", "request_key", "bpf", "perf_event_open", "userfaultfd",
    "kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
    "open_by_handle_at", "name_to_handle_at", "io_uring_setup", "io_uring_enter",
    "io_uring_register", "swapon", "swapoff", "reboot", "acct", "syslog", "quotactl",
    "settimeofday", "clock_settime", "adjtimex",
)

# (audit architecture, system call numbers, first number of another ABI on the same arch)
_ARCHES: dict[str, tuple[int, dict[str, int], int | None]] = {
    "x86_64": (0xC000003E, {
        "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "pidfd_getfd": 438,
        "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "mount_setattr": 442,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429,
        "open_tree": 428, "setns": 308, "unshare": 272, "keyctl": 250, "add_key": 248,
        "request_key": 249, "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
        "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "open_by_handle_at": 304, "name_to_handle_at": 303,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "swapon": 167,
        "swapoff": 168, "reboot": 169, "acct": 163, "syslog": 103, "quotactl": 179,
        "settimeofday": 164, "clock_settime": 227, "adjtimex": 159,
        "clone": 56, "clone3": 435,
    }, 0x40000000),  # x32 numbers
    "aarch64": (0xC00000B7, {
        "ptrace": 117, "process_vm_readv": 270, "process_vm_writev": 271, "pidfd_getfd": 438,
        "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51, "mount_setattr": 442,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "move_mount": 429,
        "open_tree": 428, "setns": 268, "unshare": 97, "keyctl": 219, "add_key": 217,
        "request_key": 218, "bpf": 280, "perf_event_open": 241, "userfaultfd": 282,
        "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "open_by_handle_at": 265, "name_to_handle_at": 264,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "swapon": 224,
        "swapoff": 225, "reboot": 142, "acct": 89, "syslog": 116, "quotactl": 60,
        "settimeofday": 170, "clock_settime": 112, "adjtimex": 171,
        "clone": 220, "clone3": 435,
    }, None),
}


def supported() -> bool:
    """Whether this machine's architecture has a filter."""
    return platform.machine() in _ARCHES


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes:
    """The filter as packed `struct sock_filter` instructions."""
    arch, numbers, other_abi = _ARCHES[machine or platform.machine()]
    deny = RET_ERRNO | errno.EPERM
    denied = sorted({numbers[n] for n in _DENIED_NAMES})
    # Instructions after the syscall number is loaded, the tail first (jumps go forward):
    # [checks...] clone: jeq -> flags test; clone3 -> ENOSYS; allow; deny.
    tail = [
        _ins(_JEQ_K, numbers["clone3"], 0, 1), _ins(_RET_K, RET_ERRNO | errno.ENOSYS),
        _ins(_JEQ_K, numbers["clone"], 0, 2),
        _ins(_LD_W_ABS, 16),  # low half of args[0]: clone's flags
        _ins(_JSET_K, CLONE_NEW_FLAGS, 1, 0),
        _ins(_RET_K, RET_ALLOW), _ins(_RET_K, deny),
    ]
    # Allow sits 2 before the end, deny at the end; jumps count instructions skipped.
    body: list[bytes] = []
    n = len(denied)
    for i, nr in enumerate(denied):
        to_deny = (n - i - 1) + len(tail) - 1
        body.append(_ins(_JEQ_K, nr, to_deny, 0))
    head = [_ins(_LD_W_ABS, 4), _ins(_JEQ_K, arch, 1, 0), _ins(_RET_K, RET_KILL_PROCESS),
            _ins(_LD_W_ABS, 0)]
    if other_abi is not None:
        to_deny = n + len(tail) - 1
        head.append(_ins(_JGE_K, other_abi, to_deny, 0))
    insns = head + body + tail
    if any(b[2] > 255 for b in insns):  # jt is one byte; the list is far shorter
        raise AssertionError("seccomp jump out of range")
    return b"".join(insns)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def install() -> None:
    """Set no_new_privs and load the filter into this process (inherited by its children).
    Raises OSError when the kernel refuses."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "PR_SET_NO_NEW_PRIVS failed")
    code = program()
    buf = ctypes.create_string_buffer(code, len(code))
    prog = _SockFprog(len(code) // 8, ctypes.cast(buf, ctypes.c_void_p))
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "loading the seccomp filter failed")
