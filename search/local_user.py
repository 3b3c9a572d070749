"""Single-user mode: a local install acts as one local account, bound to the OS user who runs it.

Not to the address: every process on this machine, and anything behind a proxy that sends
`Host: 127.0.0.1`, reaches a loopback server. The binding is a login key kept in the data
directory (0700, the key file 0600), so only the user who started kernelweb can read it. The
browser gets it once, through the link `make run` prints (`manage.py local_link` prints it
again); opening that link logs the browser in as the local user with a normal session, and
from then on the session cookie is what counts, for pages, the API and websockets alike.
"""

from __future__ import annotations

import hmac
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

LOCAL_USERNAME = "local"


def local_user() -> Any:
    user, created = get_user_model().objects.get_or_create(username=LOCAL_USERNAME)
    if created:  # logs in only through the key, never with a password
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def key_path() -> Path:
    return Path(settings.DATA_DIR) / "local_login_key"


def login_key() -> str:
    """The local login key, made on first use (readable by this OS user only)."""
    from kernelweb.data_dir import private_file

    path = key_path()
    key = path.read_text().strip() if path.exists() else ""
    if not key:
        key = secrets.token_urlsafe(32)
        private_file(path).write_text(key)
    return key


def is_login_key(candidate: str | None) -> bool:
    """Whether `candidate` is the local login key (compared in constant time)."""
    if not settings.LOCAL_MODE or not candidate or not key_path().exists():
        return False
    return hmac.compare_digest(candidate.encode(), login_key().encode())


def login_link(base_url: str) -> str:
    """The URL that logs a browser in as the local user."""
    from django.urls import reverse

    return f"{base_url.rstrip('/')}{reverse('local_login')}?key={login_key()}"
