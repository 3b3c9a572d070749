"""Containment a worker applies to itself before any untrusted code runs (Linux, as root).

The kernel interfaces directly (no helper program: the GPU hosts have none to install):
1. new mount, network, IPC and UTS namespaces (and a PID namespace where the device allows);
2. a fresh tmpfs root holding read-only bind mounts of exactly what Python, torch and the
   compilers need, the job's directories read-write, a private /tmp and /dev/shm, a minimal
   /dev (plus /dev/nvidia* on CUDA) and a fresh /proc; the host's root is detached, so nothing
   of the host is writable and no unix socket outside the sandbox can be reached;
3. a user id of its own (see `uids`), no capabilities (bounding set emptied), no_new_privs,
   a seccomp filter (see `seccomp`), and a parent-death signal on every process layer.

The parent describes what to mount in a `spec` (JSON in GPURUNNER_CONFINE); `confine` fails
closed: when a step the spec asks for fails, the worker exits instead of running the job.
"""

from __future__ import annotations

import ctypes
import json
import os
import platform
import resource
import signal
import stat
import sys
from pathlib import Path
from typing import Any

from gpurunner import seccomp

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND, MS_REC, MS_PRIVATE = 32, 4096, 0x4000, 0x40000
MNT_DETACH = 2
PR_SET_PDEATHSIG = 1
PR_CAPBSET_DROP = 24
PR_SET_CHILD_SUBREAPER = 36
SYS_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41}
EXIT_CONFINE_FAILED = 87  # the parent reads this code as "the sandbox could not be set up"
# Per file a sandbox writes (its stdout and stderr included): a build's largest output is far
# below it; a flood past it ends the process with SIGXFSZ, named in the verdict.
FILE_SIZE_LIMIT = 2 << 30

# Files of /etc that programs in the sandbox read (dynamic loader, user names, compilers).
ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "passwd", "group", "nsswitch.conf",
             "hosts", "localtime", "alternatives", "os-release")
DEVICES = ("null", "zero", "full", "random", "urandom")
_libc = ctypes.CDLL(None, use_errno=True)
_LAST_CAP = [40]  # read from the host's /proc before the root changes


class ConfineError(RuntimeError):
    """A containment step failed; the job must not run."""


def _check(ret: int, what: str) -> None:
    if ret != 0:
        err = ctypes.get_errno()
        raise ConfineError(f"{what} failed: {os.strerror(err)} (errno {err})")


def _mount(src: str | None, dst: str, fstype: str | None, flags: int, data: str | None = None,
           ) -> None:
    _check(_libc.mount(src.encode() if src else None, dst.encode(),
                       fstype.encode() if fstype else None, flags,
                       data.encode() if data else None), f"mount {src} on {dst}")


def available() -> tuple[bool, str]:
    """Whether workers can be contained on this machine, and why not when they cannot."""
    if sys.platform != "linux":
        return False, f"containment needs Linux namespaces; this is {sys.platform}"
    if os.geteuid() != 0:
        return False, ("the runner is not root, so it can neither give sandboxes a user id of "
                       "their own nor mount their root filesystem; run the runner (huey "
                       "consumer, GPU worker) as root, e.g. in its own VM or container")
    if platform.machine() not in SYS_PIVOT_ROOT or not seccomp.supported():
        return False, f"no seccomp filter for the {platform.machine()} architecture"
    if not Path("/proc/self/ns/mnt").exists():
        return False, "the kernel has no mount namespaces"
    return True, "namespaces, a private root filesystem, own user id, seccomp"


def readonly_paths(runner_package: Path) -> list[str]:
    """Host paths the sandbox sees read-only at the same place: system folders, the Python
    installation (a virtual environment and the interpreter it points to, even under /root),
    and this package alone (not the project around it)."""
    paths = ["/usr", "/opt"] + [f"/etc/{name}" for name in ETC_FILES]
    for p in ("/lib", "/lib64", "/lib32", "/bin", "/sbin"):
        if not os.path.islink(p):  # merged /usr: these are symlinks, recreated in the root
            paths.append(p)
    for prefix in {sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix}:
        paths.append(os.path.realpath(prefix))
    exe = os.path.realpath(sys.executable)
    paths.append(exe)
    paths.append(str(runner_package))
    paths.append("/sys")  # CPU topology and the GPU's PCI facts; read-only
    return [p for p in dict.fromkeys(paths) if os.path.exists(p)]


def make_spec(*, uid: int | None, device: str, workdir: Path, runner_package: Path,
              writable: dict[str, str] | None = None, readonly: list[str] | None = None,
              pid_namespace: bool) -> dict[str, Any]:
    """The description of a sandbox the parent hands to its worker."""
    return {"contain": True, "uid": uid, "device": device, "workdir": str(workdir), "pid_namespace": pid_namespace,
            "readonly": readonly_paths(runner_package) + list(readonly or []),
            "writable": {str(workdir): str(workdir), **(writable or {})},
            "parent": os.getpid()}


def _bind(root: str, host: str, inside: str, readonly: bool) -> None:
    target = root + inside
    if os.path.isdir(host):
        os.makedirs(target, mode=0o755, exist_ok=True)
    else:
        os.makedirs(os.path.dirname(target), mode=0o755, exist_ok=True)
        if not os.path.exists(target):
            open(target, "w").close()  # noqa: SIM115 - an empty mount point
    # Recursive: a GPU host mounts its driver libraries below /usr (/usr/local/nvidia).
    _mount(host, target, None, MS_BIND | MS_REC)
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | (MS_RDONLY if readonly else 0)
    _mount(None, target, None, flags)
    if readonly:
        _readonly_submounts(target)


def _readonly_submounts(target: str) -> None:
    """Remount every mount below `target` read-only too (a bind remount covers one mount)."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return
    for line in lines:
        point = line.split()[4].encode().decode("unicode_escape")
        if point.startswith(target + "/"):
            _libc.mount(None, point.encode(), None,
                        MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV | MS_RDONLY, None)


def _make_dev(root: str, device: str, uid: int | None) -> list[str]:
    """A minimal /dev: character devices recreated (same numbers), /dev/shm private."""
    dev = root + "/dev"
    os.makedirs(dev, mode=0o755)
    _mount("tmpfs", dev, "tmpfs", MS_NOSUID, "mode=755,size=64k")
    names = list(DEVICES)
    if device.startswith("cuda"):
        names += sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
    made = []
    for name in names:
        host = f"/dev/{name}"
        try:
            st = os.stat(host)
        except OSError:
            continue
        if stat.S_ISDIR(st.st_mode):  # /dev/nvidia-caps
            os.makedirs(f"{dev}/{name}", mode=0o755)
            for sub in os.listdir(host):
                sst = os.stat(f"{host}/{sub}")
                if stat.S_ISCHR(sst.st_mode):  # MIG capabilities: the host's own modes
                    os.mknod(f"{dev}/{name}/{sub}", stat.S_IFCHR | stat.S_IMODE(sst.st_mode),
                             sst.st_rdev)
            made.append(name)
        elif stat.S_ISCHR(st.st_mode):
            os.mknod(f"{dev}/{name}", stat.S_IFCHR | 0o666, st.st_rdev)
            os.chmod(f"{dev}/{name}", 0o666)  # the umask would narrow it
            made.append(name)
    for link, target in (("fd", "/proc/self/fd"), ("stdin", "/proc/self/fd/0"),
                         ("stdout", "/proc/self/fd/1"), ("stderr", "/proc/self/fd/2")):
        os.symlink(target, f"{dev}/{link}")
    os.makedirs(f"{dev}/shm")
    # POSIX shared memory lives here and dies with the namespace: nothing is left on the host.
    _mount("tmpfs", f"{dev}/shm", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=50%")
    return made


def _build_root(spec: dict[str, Any]) -> str:
    """Mount the new root in a fresh tmpfs and switch to it; returns the root's layout note."""
    _mount(None, "/", None, MS_REC | MS_PRIVATE)  # nothing we mount reaches the host
    root = spec["workdir"] + "/.root"
    os.makedirs(root, mode=0o755, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755")
    os.makedirs(root + "/tmp", mode=0o1777)
    _mount("tmpfs", root + "/tmp", "tmpfs", MS_NOSUID | MS_NODEV, "mode=1777,size=25%")
    for path in sorted(spec["readonly"], key=lambda p: p.count("/")):  # parents first
        _bind(root, path, path, readonly=True)
    for name in ("lib", "lib64", "lib32", "bin", "sbin"):
        if os.path.islink(f"/{name}") and not os.path.lexists(f"{root}/{name}"):
            os.symlink(os.readlink(f"/{name}"), f"{root}/{name}")
    for inside, host in spec["writable"].items():
        _bind(root, host, inside, readonly=False)
    _make_dev(root, spec["device"], spec.get("uid"))
    os.makedirs(root + "/proc", mode=0o555)
    os.chdir(root)
    nr = SYS_PIVOT_ROOT[platform.machine()]
    _check(_libc.syscall(nr, b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", MNT_DETACH), "detaching the host's root")
    os.chdir("/")
    return root


def _mount_proc(pid_namespace: bool) -> None:
    """A fresh /proc: of the sandbox's own PID namespace, or (without one) showing only the
    processes of the sandbox's user id (hidepid), so no other process's environment shows."""
    opts = None if pid_namespace else "hidepid=invisible"
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, opts)


def _drop_privileges(uid: int | None) -> None:
    """Empty the capability bounding set, take the sandbox's user id (clearing every other
    capability), set no_new_privs and load the seccomp filter."""
    for cap in range(_LAST_CAP[0] + 1):
        _check(_libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0), f"dropping capability {cap}")
    if uid is not None:
        resource.setrlimit(resource.RLIMIT_NPROC, (512, 512))  # fork bombs; per user id
        os.setgroups([])
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
    seccomp.install()


def _set_parent_death(parent: int) -> None:
    """Die with the process that started this one (set after any user id change: the kernel
    clears it then). Exits at once if that process is already gone."""
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:
        os._exit(EXIT_CONFINE_FAILED)


def _capabilities() -> str:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("CapEff:"):
            return line.split()[1]
    return "unknown"


def set_limits(device: str) -> None:
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    if device == "cpu":
        try:
            limit = int(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") * 0.6)
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        except (ValueError, OSError):
            pass


def confine(spec: dict[str, Any], msg_fd: int | None) -> dict[str, Any]:
    """Contain this process as `spec` says; returns what is in force (for the verdict).

    Forks once: this process stays outside as a guardian that waits for the job's process
    (the first process of the new PID namespace where there is one) and exits with its
    status; the job's process returns from this function."""
    runner = spec["parent"]
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)  # until the uid change re-arms it
    if os.getppid() != runner:
        os._exit(EXIT_CONFINE_FAILED)
    set_limits(spec.get("device", "cpu"))
    _LAST_CAP[0] = int(Path("/proc/sys/kernel/cap_last_cap").read_text())
    flags = CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS
    pid_ns = bool(spec.get("pid_namespace"))
    _check(_libc.unshare(flags | (CLONE_NEWPID if pid_ns else 0)), "unshare")
    _build_root(spec)
    _check(_libc.sethostname(b"sandbox", 7), "sethostname")
    _libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)  # orphans of the job come to the guardian
    guardian = os.getpid()
    pid = os.fork()
    if pid:
        _guard(pid, spec, msg_fd)
    parent_seen = 0 if pid_ns else guardian  # the first process of a namespace sees no parent
    _set_parent_death(parent_seen)
    _mount_proc(pid_ns)
    _mount(None, "/", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    uid = spec.get("uid")
    _drop_privileges(uid)
    _set_parent_death(parent_seen)
    os.chdir(spec["workdir"])
    return {"contained": True, "uid": os.geteuid(), "no_network": True, "pid_namespace": pid_ns,
            "namespaces": ["mount", "network", "ipc", "uts"] + (["pid"] if pid_ns else []),
            "root": "private tmpfs, system and Python read-only, only the job folder writable",
            "seccomp": True, "capabilities": _capabilities(), "no_new_privs": True}


def _guard(child: int, spec: dict[str, Any], msg_fd: int | None) -> None:
    """The guardian: drops to the sandbox's user id too and, when the runner or the job's
    process ends, kills every process of the sandbox (kill(-1) as that user id reaches exactly
    its processes: a daemon that left the job's process tree included). Never returns."""
    if msg_fd is not None:
        os.close(msg_fd)  # the runner sees end-of-file as soon as the job's process is gone
    os.close(0)
    uid = spec.get("uid")

    def kill_all(*_: object) -> None:
        if uid is not None:
            try:
                os.kill(-1, signal.SIGKILL)
            except OSError:
                pass
        os._exit(1)

    signal.signal(signal.SIGTERM, kill_all)
    try:
        _drop_privileges(uid)
    except ConfineError:
        kill_all()
    _libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != spec["parent"]:
        kill_all()
    while True:
        pid, status = os.waitpid(-1, 0)  # orphans of the job are reaped here too
        if pid == child:
            break
    if uid is not None:  # the job is over: nothing it started may stay
        try:
            os.kill(-1, signal.SIGKILL)
        except OSError:
            pass
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)  # the runner reads the same signal
    os._exit(os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1)


def confine_from_env(msg_fd: int | None) -> dict[str, Any]:
    """Apply GPURUNNER_CONFINE (removed from the environment); exits when it cannot."""
    spec = json.loads(os.environ.pop("GPURUNNER_CONFINE", "{}") or "{}")
    if not spec.get("contain"):
        set_limits(spec.get("device", "cpu"))
        return {"contained": False, "uid": os.geteuid(), "no_network": False,
                "pid_namespace": False, "reason": spec.get("reason", "")}
    try:
        return confine(spec, msg_fd)
    except (ConfineError, OSError) as exc:
        os.write(2, f"gpurunner: the sandbox could not be set up: {exc}\n".encode())
        os._exit(EXIT_CONFINE_FAILED)


def describe(applied: dict[str, Any]) -> tuple[bool, str]:
    """(passed, detail) for the verdict's `sandbox` check: what containment was in force.
    Without any, it fails, unless GPURUNNER_UNCONFINED=1 says a single user accepts that
    candidates run with their own rights."""
    if not applied.get("contained"):
        why = applied.get("reason") or "no containment was applied"
        if os.environ.get("GPURUNNER_UNCONFINED") == "1":
            return True, (f"NOT contained: the candidate ran with the runner's own rights (user "
                          f"id {applied.get('uid')}), accepted by GPURUNNER_UNCONFINED=1; {why}")
        return False, (f"no containment: the candidate ran with the runner's own rights (user id "
                       f"{applied.get('uid')}); {why}")
    caps = applied.get("capabilities")
    parts = [f"user id {applied.get('uid')}",
             "namespaces: " + ", ".join(applied.get("namespaces", [])),
             "no network",
             "root filesystem: " + str(applied.get("root")),
             "seccomp filter" if applied.get("seccomp") else "no seccomp",
             "no capabilities" if caps == "0000000000000000" else f"capabilities {caps}",
             "no_new_privs"]
    passed = bool(applied.get("seccomp")) and caps == "0000000000000000" and applied.get(
        "uid") != 0
    return passed, ", ".join(parts) + ", scrubbed environment"
