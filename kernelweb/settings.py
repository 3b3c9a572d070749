"""Settings, all from the environment. Defaults: one machine, SQLite, no Redis, no API key."""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from kernelweb import data_dir

BASE_DIR = Path(__file__).resolve().parent.parent
# 0700, and hidden from every sandbox: it holds the database and the keys.
DATA_DIR = data_dir.prepare(Path(os.environ.get("KERNELWEB_DATA_DIR", BASE_DIR / "var")).resolve())


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    return default if value is None else value.strip().lower() in ("1", "true", "yes", "on")


DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",") if h]
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "::1", "[::1]"}
# Single-user mode: a newcomer on 127.0.0.1 starts without an account. It is on by default only
# while the site answers to loopback names alone, so naming a public host turns it off.
_LOCAL_HOSTS_ONLY = all(h in LOOPBACK_HOSTS for h in ALLOWED_HOSTS)
LOCAL_MODE = env_bool("KERNELWEB_LOCAL", _LOCAL_HOSTS_ONLY)
if LOCAL_MODE and not _LOCAL_HOSTS_ONLY:
    raise ImproperlyConfigured(
        "KERNELWEB_LOCAL=1 lets every visitor act as one local user without logging in, so "
        f"ALLOWED_HOSTS may name only {', '.join(sorted(LOOPBACK_HOSTS))} (it names "
        f"{', '.join(ALLOWED_HOSTS)}); set KERNELWEB_LOCAL=0 for a public site")

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG and not LOCAL_MODE:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off and single-user mode "
                                   "is off (KERNELWEB_LOCAL=0 or a public ALLOWED_HOSTS)")
    # Local default: a key kept in the data directory so sessions survive restarts.
    key_file = DATA_DIR / "secret_key"
    if not key_file.exists():
        import secrets

        data_dir.private_file(key_file).write_text(secrets.token_urlsafe(50))
    SECRET_KEY = key_file.read_text().strip()

CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "huey.contrib.djhuey",
    "ninja",  # /api/docs from its bundled static files, no inline script
    "search",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "search.security.ContentSecurityPolicyMiddleware",
]
X_FRAME_OPTIONS = "DENY"

ROOT_URLCONF = "kernelweb.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "search.sandbox_status.sandbox_notice",
                "search.context_processors.site",
            ],
        },
    },
]
WSGI_APPLICATION = None
ASGI_APPLICATION = "kernelweb.asgi.application"

DATABASES = {
    "default": dj_database_url.config(
        default=f"sqlite:///{DATA_DIR / 'kernelweb.sqlite3'}", conn_max_age=0
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    if Path(DATABASES["default"]["NAME"]).parent == DATA_DIR:
        data_dir.private_file(DATA_DIR / Path(DATABASES["default"]["NAME"]).name)
    # WAL lets the web process read while the worker writes; wait rather than fail on a lock.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }

REDIS_URL = os.environ.get("REDIS_URL", "")
# Login throttling and validation slots are counted in the cache: shared through Redis when
# there is one, else in this process (the embedded default runs one web process).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL,
                      "KEY_PREFIX": os.environ.get("CHANNELS_PREFIX", "kernelweb")}
          if REDIS_URL else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            # A prefix of its own lets several deployments (or test runs) share one Redis.
            "CONFIG": {"hosts": [REDIS_URL], "prefix": os.environ.get("CHANNELS_PREFIX", "kernelweb")},
        }
    }
    HUEY = {
        "huey_class": "huey.RedisHuey",
        "name": os.environ.get("HUEY_NAME", "kernelweb"),
        "url": REDIS_URL,
        "immediate": env_bool("HUEY_IMMEDIATE", False),
        "consumer": {"workers": int(os.environ.get("HUEY_WORKERS", "2")), "worker_type": "thread"},
    }
else:
    # No channel layer: the websocket consumer polls the event table (see docs/architecture.md).
    CHANNEL_LAYERS = {}
    HUEY = {
        "huey_class": "huey.SqliteHuey",
        "name": "kernelweb",
        "filename": str(data_dir.private_file(DATA_DIR / "huey.sqlite3")),
        "immediate": env_bool("HUEY_IMMEDIATE", False),  # djhuey would default it to DEBUG
        "consumer": {"workers": int(os.environ.get("HUEY_WORKERS", "2")), "worker_type": "thread"},
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "home"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = DATA_DIR / "staticfiles"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
DATA_UPLOAD_MAX_MEMORY_SIZE = 4 * 1024 * 1024
# A reference larger than this is refused (413) before anything runs it.
REFERENCE_MAX_BYTES = int(os.environ.get("REFERENCE_MAX_BYTES", str(200 * 1024)))

SECURE_CONTENT_TYPE_NOSNIFF = True
# Behind a TLS proxy (nginx, Caddy, a load balancer) that sets X-Forwarded-Proto and appends the
# client to X-Forwarded-For: request.is_secure() and the share URLs then say https, and login
# throttling counts the real client. Only set it when such a proxy is the sole way in.
BEHIND_PROXY = env_bool("BEHIND_TLS_PROXY", False)
if BEHIND_PROXY:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
if not DEBUG and not LOCAL_MODE:
    # A public site is served over https (SECURE_COOKIES=0 turns that off, for a test server).
    HTTPS = env_bool("SECURE_COOKIES", True)
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = SECURE_SSL_REDIRECT = HTTPS
    SECURE_HSTS_SECONDS = int(os.environ.get("SECURE_HSTS_SECONDS", "31536000")) if HTTPS else 0
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", True)
    SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)

# Accounts: sign-up and /admin/ are off unless asked for; failed logins are throttled.
SIGNUP_OPEN = env_bool("KERNELWEB_SIGNUP", False)
ADMIN_ENABLED = env_bool("KERNELWEB_ADMIN", False)
LOGIN_MAX_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_MAX_FAILURES_PER_ACCOUNT", "5"))
LOGIN_MAX_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_MAX_FAILURES_PER_ADDRESS", "20"))
LOGIN_WINDOW_S = int(os.environ.get("LOGIN_WINDOW_S", "900"))



def gpu_present() -> bool:
    """Whether this host has an NVIDIA GPU, without importing torch in the web process."""
    if Path("/proc/driver/nvidia/gpus").is_dir() and any(Path("/proc/driver/nvidia/gpus").iterdir()):
        return True
    import shutil
    import subprocess

    if not shutil.which("nvidia-smi"):
        return False
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return False
    return out.returncode == 0 and "GPU" in out.stdout


# The runner: which device candidates run on, and how many evaluate at once on this machine.
RUNNER_DEVICE = os.environ.get("RUNNER_DEVICE", "") or ("cuda" if gpu_present() else "cpu")
RUNNER_WORKERS = int(os.environ.get("RUNNER_WORKERS", "0")) or None  # None = CPU cores
# Outside the data directory: sandboxes (under their own user ids) read their builds there,
# and must never reach var/.
RUNNER_CACHE_DIR = os.environ.get("RUNNER_CACHE_DIR", str(BASE_DIR / "runner-cache"))
# Evaluation jobs go to GPU worker queues when set (scale-out); else a local process pool.
RUNNER_REMOTE = env_bool("RUNNER_REMOTE", False)

# Model providers. Keys never reach the runner's sandbox (it scrubs its environment).
OPENAI_API_KEY = os.environ.get("OPENAI_API_KEY", "")
OPENAI_BASE_URL = os.environ.get("OPENAI_BASE_URL", "") or None
ANTHROPIC_API_KEY = os.environ.get("ANTHROPIC_API_KEY", "")
ANTHROPIC_BASE_URL = os.environ.get("ANTHROPIC_BASE_URL", "") or None
# Per-provider answer timeouts (a timed-out call is not retried: it may be billed) and limits.
OPENAI_TIMEOUT_S = float(os.environ.get("OPENAI_TIMEOUT_S", "900"))
ANTHROPIC_TIMEOUT_S = float(os.environ.get("ANTHROPIC_TIMEOUT_S", "900"))
LLM_MAX_OUTPUT_TOKENS = int(os.environ.get("LLM_MAX_OUTPUT_TOKENS", "0")) or None  # None: provider default
OPENAI_REASONING_EFFORT = os.environ.get("OPENAI_REASONING_EFFORT", "")  # minimal|low|medium|high
ANTHROPIC_THINKING_BUDGET = int(os.environ.get("ANTHROPIC_THINKING_BUDGET", "0"))  # tokens; 0 is off
OPENAI_API = os.environ.get("OPENAI_API", "auto")  # chat | responses | auto
# OpenAI-compatible servers an ensemble member can name: "local=http://127.0.0.1:8000/v1,...".
LLM_ENDPOINTS = os.environ.get("LLM_ENDPOINTS", "")
DEFAULT_PROPOSER = os.environ.get("KERNELWEB_PROPOSER", "builtin")
DEFAULT_MODEL = os.environ.get("KERNELWEB_MODEL", "")

# A running search writes a heartbeat; one silent this long is re-claimed and resumed.
SEARCH_STALE_AFTER_S = int(os.environ.get("SEARCH_STALE_AFTER_S", "120"))
# A search whose worker died after this many resumes fails (with its tree and best kept)
# instead of killing worker after worker.
SEARCH_MAX_RESUMES = int(os.environ.get("SEARCH_MAX_RESUMES", "3"))
# How often a running search's worker proves it is alive, independent of evaluation batches.
SEARCH_HEARTBEAT_S = int(os.environ.get("SEARCH_HEARTBEAT_S", "20"))
# How often a running search looks at its cancel flag: a cancel kills the batch in flight.
SEARCH_CANCEL_POLL_S = float(os.environ.get("SEARCH_CANCEL_POLL_S", "1"))
# Per-user limits (search.quotas): searches running at once (the queue is claimed round-robin
# by owner), searches waiting, and references validated in the sandbox at once (per user and
# in all); beyond the last two a request gets 429.
# (One user alone on a local install may use every worker.)
SEARCH_MAX_RUNNING_PER_USER = int(os.environ.get("SEARCH_MAX_RUNNING_PER_USER", "0")) or (
    HUEY["consumer"]["workers"] if LOCAL_MODE else 1)
SEARCH_MAX_QUEUED_PER_USER = int(os.environ.get("SEARCH_MAX_QUEUED_PER_USER", "20"))
VALIDATION_MAX_PER_USER = int(os.environ.get("VALIDATION_MAX_PER_USER", "2"))
VALIDATION_MAX_TOTAL = int(os.environ.get("VALIDATION_MAX_TOTAL", "4"))
# Upper bounds on what one search may ask for (the API refuses more).
SEARCH_MAX_ROUNDS = int(os.environ.get("SEARCH_MAX_ROUNDS", "50"))
SEARCH_MAX_IDEAS = int(os.environ.get("SEARCH_MAX_IDEAS", "32"))
SEARCH_MAX_IMPLS = int(os.environ.get("SEARCH_MAX_IMPLS", "16"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "filters": {"quiet_periodic": {"()": "kernelweb.logs.QuietPeriodicTasks"}},
    # The huey consumer installs its own handler; propagating would print every line twice.
    # The stale-search check runs every minute: its runs are not logged, its failures are.
    "loggers": {"huey": {"propagate": False, "filters": ["quiet_periodic"]},
                "huey.consumer.Scheduler": {"level": "WARNING"}},
}
