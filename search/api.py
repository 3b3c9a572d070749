"""The JSON API (django-ninja). Response shapes are contracts scripts rely on: add, never rename.

OpenAPI schema at /api/openapi.json, interactive docs at /api/docs. Authentication: the
browser's session (CSRF-checked), or `Authorization: Bearer <token>` for scripts.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import Http404, HttpRequest
from ninja import Field, NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError

from search import services

try:  # django-ninja >= 1.5 wants Status(code, body); older versions take a tuple
    from ninja import Status
except ImportError:  # pragma: no cover
    def Status(code: int, body: Any) -> tuple[int, Any]:  # noqa: N802
        return code, body

from search.access import node_for_user_or_404, search_for_user_or_404, searches_for_user
from search.api_auth import api_auth
from search.engine.types import SearchConfig
from search.events import events_after
from search.quotas import TooBusy
from search.search_settings import describe
from search.serialize import node_detail_json, search_json, search_summary_json

api = NinjaAPI(
    title="kernelweb",
    version="1",
    description="Start kernel searches, follow them, fetch the best kernel. Token: Authorization: Bearer <token>.",
    auth=api_auth,
    urls_namespace="api",
)


# A request with the session's cookie but no CSRF token is a script, not the page.
SCRIPT_AUTH_HINT = ("The CSRF check failed: this request came without a browser page's CSRF token. "
                    "Scripts send Authorization: Bearer <token> instead of cookies; get a token on "
                    "the API tokens page, or with `python manage.py api_token local` in single-user "
                    "mode.")


def _setting(name: str) -> Any:
    """An optional setting, described (bounds, choices) as services.clean_config checks it."""
    return Field(None, description=describe(name))


class SearchIn(Schema):
    reference: str
    proposer: str | None = _setting("proposer")
    model: str | None = Field(None, description="model name; for an ensemble "
                              "provider:model=weight,...; for the built-in proposer optional ideas")
    rounds: int | None = _setting("rounds")
    ideas_per_round: int | None = _setting("ideas_per_round")
    impls_per_idea: int | None = _setting("impls_per_idea")
    seeds_per_round: int | None = _setting("seeds_per_round")
    device: str | None = _setting("device")
    tolerance: float | None = _setting("tolerance")
    policy: str | None = _setting("policy")
    strategy: str | None = _setting("strategy")
    max_candidates: int | None = _setting("max_candidates")
    max_cost_usd: float | None = _setting("max_cost_usd")
    max_wall_s: float | None = _setting("max_wall_s")
    # USD per million tokens [input, output] for models the price table lacks.
    model_prices: dict[str, list[float]] | None = None
    title: str = ""
    name: str = ""


class CreatedOut(Schema):
    id: int
    url: str
    warnings: list[str] = []  # e.g. a model without a price, whose calls count as $0


class UrlOut(Schema):
    url: str


class ErrorOut(Schema):
    detail: str
    line: int | None = None
    field: str | None = None
    reference: str | None = None


class BestOut(Schema):
    node_id: int | None
    speedup: float | None
    speedup_vs_compile: float | None
    speedup_ci: list[float] | None = None
    speedup_vs_compile_ci: list[float] | None = None
    noisy: bool = False


class SearchOut(Schema):
    id: int
    title: str
    problem: str
    status: str
    status_reason: str
    round: int
    config: dict[str, Any]
    best: BestOut
    costs: dict[str, Any]
    created: str | None
    started: str | None
    finished: str | None
    shared: bool
    nodes: list[dict[str, Any]]


class SearchListItem(Schema):
    id: int
    title: str
    problem: str
    status: str
    round: int
    best: BestOut
    costs: dict[str, Any]
    created: str | None


class EventOut(Schema):
    id: int
    kind: str
    payload: dict[str, Any]
    created: str


@api.exception_handler(HttpError)
def http_error(request: HttpRequest, exc: HttpError):
    if isinstance(exc, AuthenticationError):
        return api.create_response(request, {"detail": "Log in or send Authorization: Bearer <token>."}, status=401)
    if exc.status_code == 403 and "CSRF" in str(exc):
        return api.create_response(request, {"detail": SCRIPT_AUTH_HINT}, status=403)
    if exc.status_code == 400 and str(exc).startswith("Cannot parse request body"):
        # Binary junk or invalid UTF-8 is bad input (422), like any other unusable reference.
        return api.create_response(request, {"detail": "The request body is not valid JSON text (binary data or invalid UTF-8)."}, status=422)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(RequestDataTooBig)
def body_too_large(request: HttpRequest, exc: RequestDataTooBig):
    size = int(request.META.get("CONTENT_LENGTH") or 0)
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return api.create_response(request, {
        "detail": f"The request body is {size / 2**20:.1f} MB; the limit is {limit / 2**20:.1f} MB "
                  f"(a reference may be at most {settings.REFERENCE_MAX_BYTES // 1024} KB)."}, status=413)


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404):
    return api.create_response(request, {"detail": str(exc) or "Not found."}, status=404)


@api.post("/searches", response={201: CreatedOut, 413: ErrorOut, 422: ErrorOut, 429: ErrorOut},
          tags=["searches"])
def create_search(request: HttpRequest, body: SearchIn):
    """Validate the reference in the runner's sandbox and queue a search for it.

    An invalid reference answers 422 (413 when too large) with the runner's message and line,
    and the reference text back so nothing is lost; 429 when the caller already validates or
    queues as many as the limits allow.
    """
    data = body.dict()
    reference = data.pop("reference")
    title = data.pop("title")
    try:
        search = services.start_search(request.auth, reference, data, title=title)
    except services.InvalidReference as exc:
        return Status(exc.status, {"detail": exc.message, "line": exc.line, "reference": reference})
    except services.InvalidSettings as exc:
        return Status(422, {"detail": exc.message, "field": exc.field, "reference": reference})
    except TooBusy as exc:
        return Status(429, {"detail": exc.message, "reference": reference})
    return Status(201, {"id": search.id, "url": services.search_url(search),
                        "warnings": services.price_warnings(SearchConfig.from_dict(search.config))})


@api.get("/searches", response=list[SearchListItem], tags=["searches"])
def list_searches(request: HttpRequest, limit: int = 50):
    """The caller's searches, newest first."""
    rows = searches_for_user(request.auth).select_related("problem", "best_node")[: max(1, min(limit, 500))]
    return [search_summary_json(s) for s in rows]


@api.get("/searches/{search_id}", response=SearchOut, tags=["searches"])
def get_search(request: HttpRequest, search_id: int):
    """Status, round, best kernel, costs and every node of one of the caller's searches."""
    return search_json(search_for_user_or_404(request.auth, search_id))


@api.get("/searches/{search_id}/events", response=list[EventOut], tags=["searches"])
def get_events(request: HttpRequest, search_id: int, after: int = 0, limit: int = 500):
    """The search's event log after event id `after` (the websocket's stream, for scripts)."""
    search = search_for_user_or_404(request.auth, search_id)
    return events_after(search.id, after, limit=max(1, min(limit, 2000)))


@api.post("/searches/{search_id}/cancel", response=SearchOut, tags=["searches"])
def cancel(request: HttpRequest, search_id: int):
    """Cancel: a queued search at once, a running one at its next evaluation boundary."""
    search = services.cancel_search(search_for_user_or_404(request.auth, search_id))
    return search_json(search)


@api.post("/searches/{search_id}/share", response=UrlOut, tags=["sharing"])
def share(request: HttpRequest, search_id: int):
    """Make the read-only public page; returns its URL (the same one until revoked)."""
    search = search_for_user_or_404(request.auth, search_id)
    return {"url": request.build_absolute_uri(services.share_search(search))}


@api.delete("/searches/{search_id}/share", response={204: None}, tags=["sharing"])
def unshare(request: HttpRequest, search_id: int):
    """Revoke the public page: its URL answers 404 from now on."""
    services.revoke_share(search_for_user_or_404(request.auth, search_id))
    return Status(204, None)


@api.post("/searches/{search_id}/unshare", response={204: None}, tags=["sharing"])
def unshare_post(request: HttpRequest, search_id: int):
    """Revoke the public page (for clients that cannot send DELETE)."""
    return unshare(request, search_id)


class LibraryIn(Schema):
    shared: bool


class LibraryOut(Schema):
    shared: bool


@api.post("/searches/{search_id}/library", response={200: LibraryOut, 404: ErrorOut}, tags=["sharing"])
def share_in_library(request: HttpRequest, search_id: int, body: LibraryIn):
    """Offer this search's kept kernel to other users' searches (`shared: true`) or stop
    offering it. Their searches evaluate it again before it can seed them."""
    shared = services.share_in_library(search_for_user_or_404(request.auth, search_id), body.shared)
    if shared is None:
        return Status(404, {"detail": "This search kept no kernel in the library (it has no "
                                      "correct kernel that passed every check, or has not finished)."})
    return {"shared": shared}


@api.get("/nodes/{node_id}", response=dict[str, Any], tags=["nodes"])
def get_node(request: HttpRequest, node_id: int):
    """One node of the caller's searches with its source, parent source and full verdict."""
    return node_detail_json(node_for_user_or_404(request.auth, node_id))


__all__ = ["api"]
