"""The data directory (database, keys) is private to the user running kernelweb, and a
reference running in the runner's sandbox can neither open the database nor learn its path."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import uuid
from pathlib import Path

from django.conf import settings

ROOT = Path(__file__).resolve().parent.parent

WRITE_AND_LIST = """
import json, os
from django.conf import settings
from django.db import connection
with connection.cursor() as cursor:
    cursor.execute("CREATE TABLE sessions_like (key text)")
    cursor.execute("INSERT INTO sessions_like VALUES ('a session key')")
data = settings.DATA_DIR
print(json.dumps({name: oct(os.stat(data / name).st_mode & 0o777) for name in [".", *os.listdir(data)]}))
"""

# A hostile reference: at import it reports every variable naming the data directory and
# whether it could read the database; the error message carries the findings out.
PROBE = '''
import os
import torch
import torch.nn as nn

DATA = {data!r}
named = sorted(k for k, v in os.environ.items() if DATA in v or "KERNELWEB" in k)
try:
    with open(os.path.join(DATA, {name!r}), "rb") as f:
        opened = "READ " + f.read(40).decode(errors="replace")
except OSError as exc:
    opened = type(exc).__name__
raise RuntimeError(f"probe: named={{named}} opened={{opened}}")


class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return [torch.randn(4)]


def get_init_inputs():
    return []
'''


def modes_with_data_dir(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "SECRET_KEY")}
    env.update({"KERNELWEB_DATA_DIR": str(tmp_path / "var"), "DJANGO_SETTINGS_MODULE": "kernelweb.settings"})
    out = subprocess.run([sys.executable, "-c", WRITE_AND_LIST], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_the_data_directory_is_0700_and_its_files_0600(tmp_path):
    modes = modes_with_data_dir(tmp_path)
    assert modes["."] == "0o700"
    for name in ("kernelweb.sqlite3", "kernelweb.sqlite3-wal", "huey.sqlite3", "secret_key"):
        assert modes[name] == "0o600", (name, modes)


def test_an_existing_world_readable_data_directory_is_tightened(tmp_path):
    data = tmp_path / "var"
    data.mkdir(mode=0o755)
    (data / "kernelweb.sqlite3").touch(mode=0o644)
    os.chmod(data / "kernelweb.sqlite3", 0o644)
    modes = modes_with_data_dir(tmp_path)
    assert modes["."] == "0o700" and modes["kernelweb.sqlite3"] == "0o600"


def test_the_settings_name_the_data_directory_to_the_runner_as_private():
    from gpurunner.sandbox import private_paths, scrubbed_env

    assert str(settings.DATA_DIR) in private_paths()
    env = scrubbed_env()
    assert not [k for k, v in env.items() if str(settings.DATA_DIR) in v or k.startswith("KERNELWEB_")]
    assert "PYTHONPATH" not in env


def test_a_reference_in_the_sandbox_cannot_open_the_database():
    import gpurunner

    canary = settings.DATA_DIR / f"canary-{uuid.uuid4().hex}.sqlite3"
    canary.write_bytes(b"SQLite format 3\x00 session keys")
    canary.chmod(stat.S_IRUSR | stat.S_IWUSR)
    try:
        report = gpurunner.check_reference(PROBE.format(data=str(settings.DATA_DIR), name=canary.name),
                                           device="cpu", timeout_s=120)
    finally:
        canary.unlink()
    assert not report.ok
    assert "probe: named=[]" in report.error, report.error
    assert "opened=READ" not in report.error
    assert "opened=" in report.error and ("PermissionError" in report.error or "FileNotFoundError" in report.error)
