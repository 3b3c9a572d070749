"""`python -m kernelweb.serve`: migrate, then run daphne and one huey consumer until Ctrl-C.

Both run as child processes in their own session, so a Ctrl-C reaches this process only and
is forwarded once; when either child stops, the other is stopped too and the exit code says so.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STOP_WAIT_S = 1.5  # then what is left is killed; a search cut short resumes from its checkpoint
# Ctrl-C stops each child at once: huey's SIGINT would wait for running tasks (a search can run
# for hours), its SIGTERM does not; daphne closes its connections on SIGINT.
STOP_SIGNALS = {"web": signal.SIGINT, "worker": signal.SIGTERM}


def commands(host: str, port: str) -> dict[str, list[str]]:
    """The child processes: the web server and the task worker."""
    python = sys.executable
    return {
        "web": [python, "-m", "daphne", "-b", host, "-p", port, "kernelweb.asgi:application"],
        "worker": [python, "manage.py", "run_huey"],
    }


def stop(children: dict[str, subprocess.Popen], sig: int | None = None) -> None:
    """Ask every running child to stop (with sig, else its STOP_SIGNALS one), then kill
    whatever is left after a grace period."""
    for name, child in children.items():
        if child.poll() is None:
            child.send_signal(sig or STOP_SIGNALS.get(name, signal.SIGTERM))
    deadline = time.monotonic() + STOP_WAIT_S
    for child in children.values():
        try:
            child.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


def main() -> int:
    host = os.environ.get("HOST", "127.0.0.1")
    port = os.environ.get("PORT", "8000")
    os.chdir(ROOT)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "kernelweb.settings")
    from django.conf import settings
    from django.core.exceptions import ImproperlyConfigured

    try:
        local = settings.LOCAL_MODE
    except ImproperlyConfigured as exc:
        print(f"Refusing to start: {exc}", file=sys.stderr)
        return 2
    if local and host not in settings.LOOPBACK_HOSTS:
        print(f"Refusing to serve single-user mode on {host}: anyone reaching it would act as the local "
              "user. Set KERNELWEB_LOCAL=0 (and SECRET_KEY, ALLOWED_HOSTS) to serve with accounts.",
              file=sys.stderr)
        return 2
    migrate = subprocess.run([sys.executable, "manage.py", "migrate", "--noinput", "-v", "0"])
    if migrate.returncode != 0:
        return migrate.returncode
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}/"
    if local:  # the link carries the login key: only this OS user can read it (var/ is 0700)
        import django

        django.setup()
        from search.local_user import login_link

        url = login_link(url)
    # The link is ready before the server answers, so whoever waits for one has the other.
    children = {name: subprocess.Popen(cmd, start_new_session=True) for name, cmd in commands(host, port).items()}
    print(f"kernelweb is running at {url}  (Ctrl-C stops the web server and the worker)", flush=True)
    stopping: list[int] = []

    def forward(signum: int, frame: object) -> None:
        stopping.append(signum)

    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGTERM, forward)
    try:
        while not stopping:
            ended = [name for name, child in children.items() if child.poll() is not None]
            if ended:
                print(f"The {ended[0]} process stopped (exit {children[ended[0]].returncode}); stopping.",
                      file=sys.stderr)
                stop(children)
                return children[ended[0]].returncode or 1
            time.sleep(0.2)
        stop(children)
    finally:
        stop(children, signal.SIGTERM)
    print("Stopped.", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
