"""`manage.py optimize` on a fresh checkout, before `make run` ever migrated the database: it
prepares the database itself instead of failing with "no such table"."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.fixtures.services import ROOT


def test_optimize_migrates_a_fresh_database_before_it_records_the_search(tmp_path):
    ref = tmp_path / "broken.py"
    ref.write_text("import torch\n\nclass Model(torch.nn.Module):\n    def forward(self, x)\n")
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE")}
    env.update({"KERNELWEB_DATA_DIR": str(tmp_path / "data"), "KERNELWEB_LOCAL": "1"})
    done = subprocess.run([sys.executable, "manage.py", "optimize", str(ref), "--device", "cpu"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=300)
    assert "no such table" not in done.stderr, done.stderr[-2000:]
    assert "preparing the database" in done.stderr
    assert done.returncode != 0 and "syntax" in done.stderr.lower(), done.stderr[-2000:]
