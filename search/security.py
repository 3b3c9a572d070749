"""Security headers every response carries: the Content-Security-Policy.

The pages run only the site's own script files (ES modules under /static/js/; page data sits in
`application/json` blocks, which are not executed), so scripts are limited to 'self' with no
inline code. Inline `style` attributes remain in the templates, hence 'unsafe-inline' for
styles only. Websockets go back to the same host.
"""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse

POLICY = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
          "img-src 'self' data:; font-src 'self'; connect-src 'self'{ws}; object-src 'none'; "
          "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")


def policy_for(request: HttpRequest) -> str:
    """The policy for a response to `request` (the websocket origin is this host's)."""
    try:
        host = request.get_host()
    except DisallowedHost:
        return POLICY.format(ws="")
    return POLICY.format(ws=f" {'wss' if request.is_secure() else 'ws'}://{host}")


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        response.headers.setdefault("Content-Security-Policy", policy_for(request))
        return response
