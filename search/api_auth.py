"""Per-user API tokens for scripts: shown once at creation, stored as a SHA-256 hash."""

from __future__ import annotations

import hashlib
import secrets
from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja.security import HttpBearer, SessionAuth

from search.access import acting_user
from search.models import ApiToken

TOKEN_PREFIX = "kw_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(user: Any, name: str = "script") -> str:
    """Create a token for user and return it in clear: the only time it is ever shown."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    ApiToken.objects.create(user=user, name=name, token_hash=hash_token(token), prefix=token[:8])
    return token


def user_for_token(token: str) -> Any | None:
    """The active user owning this token, or None; records when the token was last used."""
    if not token:
        return None
    row = ApiToken.objects.select_related("user").filter(token_hash=hash_token(token)).first()
    if row is None or not row.user.is_active:
        return None
    ApiToken.objects.filter(id=row.id).update(last_used=timezone.now())
    return row.user


def revoke_tokens(user: Any) -> int:
    """Delete every token of user; returns how many there were."""
    deleted, _ = ApiToken.objects.filter(user=user).delete()
    return deleted


class BearerToken(HttpBearer):
    """`Authorization: Bearer <token>`: acts as the token's owner (no CSRF: not a cookie)."""

    def authenticate(self, request: HttpRequest, token: str) -> Any | None:
        user = user_for_token(token)
        if user is not None:
            request.user = user
        return user


class SessionOrLocal(SessionAuth):
    """A logged-in session (CSRF-checked), or the local user in single-user mode."""

    def authenticate(self, request: HttpRequest, key: str | None) -> Any | None:
        return acting_user(request.user)


# Tried in order: a bearer token first, then the browser's session.
api_auth = [BearerToken(), SessionOrLocal()]

__all__ = ["api_auth", "create_token", "revoke_tokens", "user_for_token"]
