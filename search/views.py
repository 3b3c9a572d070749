"""The pages: new search, the user's searches, the live search page, downloads, share page."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from search import services
from search.access import (
    node_for_user_or_404,
    search_for_share_or_404,
    search_for_user_or_404,
    searches_for_user,
    shared_node_or_404,
)
from search.engine.speedups import speedup_of
from search.engine.statuses import FINAL_SEARCH_STATUSES, page_statuses
from search.engine.types import CATEGORIES
from search.events import events_after
from search.examples import list_examples
from search.forms import NewSearchForm
from search.highlight import highlight_source
from search.kernel_file import kernel_file, kernel_filename
from search.models import Node, Search
from search.panel import panel_context
from search.quotas import TooBusy
from search.serialize import search_json as serialize_search


@login_required
@require_http_methods(["GET", "POST"])
def new_search(request: HttpRequest) -> HttpResponse:
    """The new-search page; on POST, validate through the runner and start the search.

    A refused reference re-displays the form with the pasted text and the error by the code.
    """
    form = NewSearchForm(request.POST or None, request.FILES or None)
    error_line: int | None = None
    busy = False
    if request.method == "POST" and form.is_valid():
        try:
            search = services.start_search(
                request.user, form.cleaned_data["reference"], form.search_settings(),
                title=form.cleaned_data["title"],
            )
        except services.InvalidReference as exc:
            form.add_error("reference", exc.message)
            error_line = exc.line
        except services.InvalidSettings as exc:
            form.add_error(exc.field if exc.field in form.fields else None, exc.message)
        except TooBusy as exc:
            form.add_error(None, exc.message)
            busy = True
        else:
            return redirect("search", search_id=search.id)
    examples = [{"name": e.name, "label": e.label, "source": e.source} for e in list_examples()]
    status = (429 if busy else 422) if request.method == "POST" else 200
    return render(request, "search/new.html",
                  {"form": form, "examples": examples, "error_line": error_line}, status=status)


@login_required
@require_GET
def search_list(request: HttpRequest) -> HttpResponse:
    """The user's searches, newest first."""
    searches = searches_for_user(request.user).select_related("problem", "best_node")[:200]
    return render(request, "search/list.html", {"searches": searches})


def all_events(search_id: int) -> list[dict[str, Any]]:
    """Every event of a search so far, oldest first (the page embeds them, then streams)."""
    events: list[dict[str, Any]] = []
    while True:
        page = events_after(search_id, events[-1]["id"] if events else 0, limit=2000)
        events.extend(page)
        if len(page) < 2000:
            return events


def node_url_template(name: str, owner: int | str) -> str:
    """A node URL with `{id}` where the page's script puts the node's id."""
    return reverse(name, args=[owner, 0]).replace("/nodes/0/", "/nodes/{id}/")


def page_context(request: HttpRequest, search: Search, shared: bool) -> dict[str, Any]:
    """What the search page and the share page render: the search, its events, its URLs."""
    events = all_events(search.id)
    if shared:
        panel_url = node_url_template("share_panel", search.share_slug)
        kernel_url = None
        ws_path = f"/ws/share/{search.share_slug}/"  # channels routes (search/routing.py)
    else:
        panel_url = node_url_template("node_panel", search.id)
        kernel_url = node_url_template("node_kernel", search.id)
        ws_path = f"/ws/searches/{search.id}/"
    page = {
        "search_id": search.id,
        "ws_path": ws_path,
        "panel_url": panel_url,
        "kernel_url": kernel_url,
        "status": search.status,
        "rounds": search.config.get("rounds"),
        "device": search.config.get("device", "cpu"),
        "started": search.started.isoformat() if search.started else None,
        "finished": search.finished.isoformat() if search.finished else None,
        "shared": shared,
        "statuses": page_statuses(),
        "categories": CATEGORIES,  # the study's optimization categories, key -> label
        "events": events,
    }
    return {
        "search": search,
        "config": search.config,
        "page": page,
        "shared": shared,
        "is_final": search.status in FINAL_SEARCH_STATUSES,
        "share_url": request.build_absolute_uri(services.share_url(search)) if search.share_slug else "",
    }


@login_required
@require_GET
def search_page(request: HttpRequest, search_id: int) -> HttpResponse:
    """The live search page: header numbers, the tree, chart, lineage; the owner's controls."""
    search = search_for_user_or_404(request.user, search_id)
    return render(request, "search/detail.html", page_context(request, search, shared=False))


def render_panel(request: HttpRequest, search: Search, node: Node, shared: bool) -> HttpResponse:
    ctx = panel_context(search, node)
    ctx["shared"] = shared
    return render(request, "search/_panel.html", ctx)


@login_required
@require_GET
def node_panel(request: HttpRequest, search_id: int, node_id: int) -> HttpResponse:
    """The side panel's HTML fragment for one node of the user's search."""
    search = search_for_user_or_404(request.user, search_id)
    node = node_for_user_or_404(request.user, node_id, search_id=search.id)
    return render_panel(request, search, node, shared=False)


def kernel_response(search: Search, node: Node) -> HttpResponse:
    response = HttpResponse(kernel_file(search, node), content_type="text/x-python; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{kernel_filename(search, node)}"'
    return response


def no_kernel(message: str) -> HttpResponse:
    return HttpResponse(message + "\n", status=404, content_type="text/plain; charset=utf-8")


@login_required
@require_GET
def best_kernel(request: HttpRequest, search_id: int) -> HttpResponse:
    """The best kernel as a KernelBench ModelNew .py file; 404 until a kernel is correct."""
    search = search_for_user_or_404(request.user, search_id)
    if search.best_node is None or not search.best_node.source:
        return no_kernel("This search has no correct kernel yet.")
    return kernel_response(search, search.best_node)


@login_required
@require_GET
def node_kernel(request: HttpRequest, search_id: int, node_id: int) -> HttpResponse:
    """Any kernel node's source as a .py file with the same header as the best kernel."""
    search = search_for_user_or_404(request.user, search_id)
    node = node_for_user_or_404(request.user, node_id, search_id=search.id)
    if node.kind != "kernel" or not node.source:
        return no_kernel("This node holds no kernel source.")
    return kernel_response(search, node)


@login_required
@require_GET
def search_download(request: HttpRequest, search_id: int) -> HttpResponse:
    """The whole search as JSON: settings, numbers, every node with source and verdict."""
    search = search_for_user_or_404(request.user, search_id)
    data = serialize_search(search, with_sources=True)
    response = JsonResponse(data, json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="search{search.id}.json"'
    return response


@login_required
@require_POST
def cancel(request: HttpRequest, search_id: int) -> HttpResponse:
    """Cancel the user's search (a running one stops at its next evaluation boundary)."""
    services.cancel_search(search_for_user_or_404(request.user, search_id))
    return redirect("search", search_id=search_id)


@login_required
@require_POST
def share(request: HttpRequest, search_id: int) -> HttpResponse:
    """Make the read-only public page; the search page then shows its URL."""
    services.share_search(search_for_user_or_404(request.user, search_id))
    return redirect("search", search_id=search_id)


@login_required
@require_POST
def revoke(request: HttpRequest, search_id: int) -> HttpResponse:
    """Take the public page down; its URL answers 404 from now on."""
    services.revoke_share(search_for_user_or_404(request.user, search_id))
    return redirect("search", search_id=search_id)


@require_GET
def share_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The read-only public page: the tree, the best kernel, the numbers and checks."""
    search = search_for_share_or_404(slug)
    ctx = page_context(request, search, shared=True)
    best = search.best_node
    if best is not None and best.source:
        # The very text best.py downloads as, header included: what the page shows is what runs.
        ctx["best_source_html"] = highlight_source(kernel_file(search, best))
        ctx["best_checks"] = (best.verdict or {}).get("checks") or []
    ctx["meta_description"] = share_description(search)
    return render(request, "search/share.html", ctx)


def share_description(search: Search) -> str:
    """One sentence for link previews: the problem, the best speedups, the device."""
    best = search.best_node
    device = search.config.get("device", "cpu")
    if best is None or best.speedup is None:
        return f"Kernel search for {search.problem.name} on {device}: {search.status}, no correct kernel yet."
    speedup = speedup_of(best)
    text = f"{speedup.text(times='x')} faster than eager PyTorch"
    if speedup.compile is not None:
        text += f", {speedup.text('compile', 'x')} vs torch.compile"
    return (f"{search.problem.name}: {text} on {device}, checked by {len((best.verdict or {}).get('checks') or [])}"
            f" integrity checks ({search.candidates} candidates evaluated).")


@require_GET
def share_panel(request: HttpRequest, slug: str, node_id: int) -> HttpResponse:
    """The node panel of a shared search (read-only, no downloads of other nodes)."""
    search = search_for_share_or_404(slug)
    node = shared_node_or_404(slug, node_id)
    return render_panel(request, search, node, shared=True)


@require_GET
def share_best_kernel(request: HttpRequest, slug: str) -> HttpResponse:
    """The shared search's best kernel as a ModelNew .py file."""
    search = search_for_share_or_404(slug)
    if search.best_node is None or not search.best_node.source:
        return no_kernel("This search has no correct kernel yet.")
    return kernel_response(search, search.best_node)
