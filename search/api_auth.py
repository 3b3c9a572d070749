"""Per-user API tokens for scripts: shown once at creation, stored as a SHA-256 hash.

Each token has a name, a scope (`read` tokens only read; `write` tokens may also start,
cancel and share searches), an optional expiry, and is revoked on its own.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta
from typing import Any

from django.db.models import Q
from django.http import HttpRequest
from django.utils import timezone
from ninja.errors import HttpError
from ninja.security import HttpBearer, SessionAuth

from search.access import acting_user
from search.models import ApiToken

TOKEN_PREFIX = "kw_"
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")
SCOPES = tuple(ApiToken.Scope.values)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user: Any, name: str = "script", scope: str = ApiToken.Scope.WRITE,
                 expires_in_days: float | None = None) -> str:
    """Create a token for user and return it in clear: the only time it is ever shown.

    Raises ValueError for an unknown scope or a lifetime that is not a positive number of days.
    """
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    expires = None
    if expires_in_days is not None:
        if not 0 < expires_in_days <= 3650:
            raise ValueError(f"a token lives between 1 and 3650 days, not {expires_in_days:g}")
        expires = timezone.now() + timedelta(days=expires_in_days)
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=(name or "script")[:100], token_hash=hash_token(token),
                            prefix=token[:8], scope=scope, expires=expires)
    return token


def live_tokens():
    """Tokens not yet expired."""
    return ApiToken.objects.filter(Q(expires__isnull=True) | Q(expires__gt=timezone.now()))


def token_row(token: str) -> ApiToken | None:
    """The live token row of an active user for this token, or None; records its use."""
    if not token:
        return None
    row = live_tokens().select_related("user").filter(token_hash=hash_token(token)).first()
    if row is None or not row.user.is_active:
        return None
    ApiToken.objects.filter(id=row.id).update(last_used=timezone.now())
    return row


def user_for_token(token: str) -> Any | None:
    """The active user owning this live token, or None."""
    row = token_row(token)
    return row.user if row is not None else None


def revoke_token(user: Any, token_id: int) -> bool:
    """Delete one of user's tokens; False when user has no token with that id."""
    deleted, _ = ApiToken.objects.filter(user=user, id=token_id).delete()
    return bool(deleted)


def revoke_tokens(user: Any) -> int:
    """Delete every token of user; returns how many there were."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted


class BearerToken(HttpBearer):
    """`Authorization: Bearer <token>`: acts as the token's owner (no CSRF: not a cookie).
    A read-scoped token is refused (403) on anything but a read."""

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        row = token_row(token)
        if row is None:
            return None
        if row.scope != ApiToken.Scope.WRITE and request.method not in SAFE_METHODS:
            raise HttpError(403, f"The token {row.prefix}… ({row.name!r}) has the scope "
                                 f"{row.scope!r}: it may only read. Create a write token to start, "
                                 "cancel or share searches.")
        request.user = row.user
        return row.user


class BrowserSession(SessionAuth):
    """A logged-in session (CSRF-checked); in single-user mode the local user's session."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        return acting_user(request.user)


# Tried in order: a bearer token first, then the browser's session.
api_auth = [BearerToken(), BrowserSession()]

__all__ = ["api_auth", "create_token", "revoke_token", "revoke_tokens", "user_for_token"]
