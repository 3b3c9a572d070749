"""Values every page may need: whether sign-up is open (the header's link)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest


def site(request: HttpRequest) -> dict[str, Any]:
    return {"signup_open": settings.SIGNUP_OPEN}
