"""The production environment documented in docs/deployment.md passes `check --deploy` with no
warning, and behind the TLS proxy a share URL is built with https."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def documented_environment() -> str:
    text = (ROOT / "docs" / "deployment.md").read_text()
    block = re.search(r"<!-- deploy-environment -->\n```bash\n(.*?)```", text, re.S)
    assert block, "docs/deployment.md lost its deploy-environment block"
    return block.group(1)


def test_the_documented_production_environment_passes_the_deploy_check(tmp_path):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("KERNELWEB_", "SECURE_", "DJANGO_")) and k not in (
               "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "DATABASE_URL", "REDIS_URL", "BEHIND_TLS_PROXY")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # `python`
    env["KERNELWEB_DATA_DIR"] = str(tmp_path)
    script = documented_environment() + "\nexec python manage.py check --deploy --fail-level WARNING\n"
    done = subprocess.run(["bash", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout + done.stderr


@pytest.mark.django_db
def test_behind_the_tls_proxy_the_share_url_is_https(owner_client, finished_search, settings):
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["kernels.example.com"]
    response = owner_client.post(f"/api/searches/{finished_search.id}/share", HTTP_HOST="kernels.example.com",
                                 HTTP_X_FORWARDED_PROTO="https", secure=False)
    assert response.status_code == 200
    assert response.json()["url"].startswith("https://kernels.example.com/s/")
