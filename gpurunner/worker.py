"""The sandboxed process: `python -m gpurunner.worker MSG_FD`, one job, then exit.

Order matters: confine this process (see `containment`) before importing
torch, import torch and report `ready`, read the job path from stdin, bind the harness's
clocks and take a snapshot before importing any untrusted code, report `built` once the
candidate is imported (the parent then switches to the run limit), write result.json and
outputs, report `done`, and exit without waiting for anything the candidate left running.
"""

from __future__ import annotations

import faulthandler
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from gpurunner.containment import confine_from_env

MSG_FD: int | None = None


def send(event: str, **data: Any) -> None:
    """One JSON line to the parent on the private message socket."""
    if MSG_FD is None:
        return
    try:
        os.write(MSG_FD, (json.dumps({"event": event, **data}) + "\n").encode())
    except OSError:
        pass


def main() -> None:
    global MSG_FD
    MSG_FD = int(sys.argv[1])
    os.set_inheritable(MSG_FD, False)
    applied = confine_from_env(MSG_FD)
    faulthandler.enable()  # a crash leaves the Python stack (with candidate lines) on stderr
    t0 = time.monotonic()
    import torch  # noqa: F401 - imported before the job arrives (warm worker)

    from gpurunner import timing  # noqa: F401 - binds the clocks before any untrusted code
    from gpurunner.integrity import warm_up

    warm_up()
    send("ready", import_s=time.monotonic() - t0, sandbox=applied)
    job_path = sys.stdin.readline().strip()
    if not job_path:
        os._exit(0)
    job = json.loads(Path(job_path).read_text())
    workdir = Path(job_path).parent
    try:
        if job["mode"] == "reference":
            from gpurunner.reference import run_reference_job

            result = run_reference_job(job, workdir, send)
        elif job["mode"] == "build":
            result = run_build_job(job, workdir)
        elif job["mode"] == "referee":
            from gpurunner.referee import run_referee_job
            from gpurunner.transport import worker_channel

            result = run_referee_job(job, workdir, worker_channel(MSG_FD))
        else:
            from gpurunner.candidate import run_candidate_job
            from gpurunner.transport import worker_channel

            result = run_candidate_job(job, workdir, worker_channel(MSG_FD), applied)
    except BaseException as exc:  # noqa: BLE001 - the harness's own failure, reported as such
        import traceback

        result = {"harness_error": "".join(traceback.format_exception(exc))[-4000:]}
    result["sandbox"] = applied
    (workdir / "result.json").write_text(json.dumps(result, default=str))
    send("done")
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


def run_build_job(job: dict[str, Any], workdir: Path) -> dict[str, Any]:
    """Import the candidate only to build its extensions; other import errors are left to
    the run, which reports them with the candidate's own line numbers."""
    from gpurunner.build import format_compile_error, is_build_error
    from gpurunner.candidate import patch_cpp_extension
    from gpurunner.load import import_source

    os.environ.update(job.get("env", {}))
    patch_cpp_extension()
    t0 = time.monotonic()
    try:
        import_source(workdir / "candidate.py", "candidate")
    except BaseException as exc:  # noqa: BLE001
        if is_build_error(exc):
            summary, log = format_compile_error(str(exc))
            return {"built": False, "compile_s": time.monotonic() - t0, "error": summary,
                    "compile_log": log}
    return {"built": True, "compile_s": time.monotonic() - t0}


if __name__ == "__main__":
    main()
