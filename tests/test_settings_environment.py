"""Settings come from the environment, with the embedded defaults and safe production rules."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PRINT = """
import json
from django.conf import settings
print(json.dumps({
    "engine": settings.DATABASES["default"]["ENGINE"],
    "db_name": settings.DATABASES["default"]["NAME"],
    "huey": settings.HUEY["huey_class"], "immediate": settings.HUEY["immediate"],
    "layers": settings.CHANNEL_LAYERS, "local": settings.LOCAL_MODE, "debug": settings.DEBUG,
    "device": settings.RUNNER_DEVICE, "hosts": settings.ALLOWED_HOSTS,
    "secure_cookies": getattr(settings, "SESSION_COOKIE_SECURE", False),
    "max_bytes": settings.REFERENCE_MAX_BYTES,
}))
"""


def load(tmp_path, **env) -> tuple[int, dict | str]:
    clean = {k: v for k, v in os.environ.items()
             if k not in ("DEBUG", "SECRET_KEY", "KERNELWEB_LOCAL", "DATABASE_URL", "REDIS_URL", "RUNNER_DEVICE",
                          "ALLOWED_HOSTS", "HUEY_IMMEDIATE")}
    clean.update({"KERNELWEB_DATA_DIR": str(tmp_path), "DJANGO_SETTINGS_MODULE": "kernelweb.settings", **env})
    out = subprocess.run([sys.executable, "-c", PRINT], cwd=ROOT, env=clean, capture_output=True, text=True,
                         timeout=60)
    return out.returncode, (json.loads(out.stdout) if out.returncode == 0 else out.stderr)


def test_the_embedded_defaults_need_nothing_installed(tmp_path):
    code, s = load(tmp_path, RUNNER_DEVICE="cpu")
    assert code == 0
    assert s["engine"] == "django.db.backends.sqlite3" and s["db_name"].startswith(str(tmp_path))
    assert s["huey"] == "huey.SqliteHuey" and s["immediate"] is False
    assert s["layers"] == {} and s["local"] is True and s["debug"] is False
    assert (tmp_path / "secret_key").exists()


def test_production_without_a_secret_key_refuses_to_start(tmp_path):
    code, err = load(tmp_path, KERNELWEB_LOCAL="0")
    assert code != 0 and "SECRET_KEY must be set" in err


def test_production_uses_secure_cookies_and_the_given_hosts(tmp_path):
    code, s = load(tmp_path, KERNELWEB_LOCAL="0", SECRET_KEY="x" * 50, ALLOWED_HOSTS="kernels.example.com")
    assert code == 0
    assert s["secure_cookies"] is True and s["hosts"] == ["kernels.example.com"] and s["local"] is False


def test_database_and_redis_urls_switch_to_the_scale_out_backends(tmp_path):
    code, s = load(tmp_path, DATABASE_URL="postgres://postgres@127.0.0.1:5432/kernelweb",
                   REDIS_URL="redis://127.0.0.1:6379/3")
    assert code == 0
    assert s["engine"] == "django.db.backends.postgresql" and s["db_name"] == "kernelweb"
    assert s["huey"] == "huey.RedisHuey" and s["immediate"] is False
    assert s["layers"]["default"]["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    assert s["layers"]["default"]["CONFIG"]["hosts"] == ["redis://127.0.0.1:6379/3"]


def test_the_runner_device_comes_from_the_environment(tmp_path):
    assert load(tmp_path, RUNNER_DEVICE="cuda")[1]["device"] == "cuda"


def test_without_a_gpu_the_device_defaults_to_cpu(tmp_path):
    from kernelweb.settings import gpu_present

    code, s = load(tmp_path)
    assert s["device"] == ("cuda" if gpu_present() else "cpu")


def test_a_public_host_turns_single_user_mode_off(tmp_path):
    code, err = load(tmp_path, ALLOWED_HOSTS="kernels.example.com")
    assert code != 0 and "SECRET_KEY must be set" in err
    code, s = load(tmp_path, ALLOWED_HOSTS="kernels.example.com", SECRET_KEY="x" * 50)
    assert code == 0 and s["local"] is False and s["secure_cookies"] is True


def test_single_user_mode_refuses_a_public_host(tmp_path):
    code, err = load(tmp_path, ALLOWED_HOSTS="127.0.0.1,kernels.example.com", KERNELWEB_LOCAL="1")
    assert code != 0 and "ALLOWED_HOSTS may name only" in err
