"""The JSON API (django-ninja). Response shapes are contracts scripts rely on: add, never rename.

OpenAPI schema at /api/openapi.json, interactive docs at /api/docs. Authentication: the
browser's session (CSRF-checked), or `Authorization: Bearer <token>` for scripts.
"""

from __future__ import annotations

from typing import Any

from django.http import Http404, HttpRequest
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError

from search import services

try:  # django-ninja >= 1.5 wants Status(code, body); older versions take a tuple
    from ninja import Status
except ImportError:  # pragma: no cover
    def Status(code: int, body: Any) -> tuple[int, Any]:  # noqa: N802
        return code, body

from search.access import node_for_user_or_404, search_for_user_or_404, searches_for_user
from search.api_auth import api_auth
from search.events import events_after
from search.serialize import node_detail_json, search_json, search_summary_json

api = NinjaAPI(
    title="kernelweb",
    version="1",
    description="Start kernel searches, follow them, fetch the best kernel. Token: Authorization: Bearer <token>.",
    auth=api_auth,
    urls_namespace="api",
)


class SearchIn(Schema):
    reference: str
    proposer: str | None = None
    model: str | None = None
    rounds: int | None = None
    ideas_per_round: int | None = None
    impls_per_idea: int | None = None
    seeds_per_round: int | None = None
    device: str | None = None
    tolerance: float | None = None
    policy: str | None = None
    strategy: str | None = None
    max_candidates: int | None = None  # budgets: the search stops cleanly at the first reached
    max_cost_usd: float | None = None
    max_wall_s: float | None = None
    title: str = ""
    name: str = ""


class CreatedOut(Schema):
    id: int
    url: str


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
    if exc.status_code == 400 and str(exc).startswith("Cannot parse request body"):
        # Binary junk or invalid UTF-8 is bad input (422), like any other unusable reference.
        return api.create_response(request, {"detail": "The request body is not valid JSON text (binary data or invalid UTF-8)."}, status=422)
    return api.create_response(request, {"detail": str(exc)}, status=exc.status_code)


@api.exception_handler(Http404)
def not_found(request: HttpRequest, exc: Http404):
    return api.create_response(request, {"detail": str(exc) or "Not found."}, status=404)


@api.post("/searches", response={201: CreatedOut, 413: ErrorOut, 422: ErrorOut}, tags=["searches"])
def create_search(request: HttpRequest, body: SearchIn):
    """Validate the reference in the runner's sandbox and queue a search for it.

    An invalid reference answers 422 (413 when too large) with the runner's message and line,
    and the reference text back so nothing is lost.
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
    return Status(201, {"id": search.id, "url": services.search_url(search)})


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


@api.get("/nodes/{node_id}", response=dict[str, Any], tags=["nodes"])
def get_node(request: HttpRequest, node_id: int):
    """One node of the caller's searches with its source, parent source and full verdict."""
    return node_detail_json(node_for_user_or_404(request.auth, node_id))


__all__ = ["api"]
