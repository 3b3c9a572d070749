"""Get an object *for this user* or 404: every view, API endpoint and consumer calls these."""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from django.http import Http404

from search.models import Node, Search


def acting_user(user: Any) -> Any | None:
    """The user a request acts as, or None for an anonymous one. In single-user mode the local
    user is an ordinary session, opened by the login link (see search.local_user)."""
    if user is not None and user.is_authenticated:
        return user
    return None


def searches_for_user(user: Any) -> QuerySet[Search]:
    """The searches this user may see and control: their own, nothing for anonymous."""
    user = acting_user(user)
    if user is None:
        return Search.objects.none()
    return Search.objects.filter(owner=user)


def search_for_user_or_404(user: Any, search_id: int) -> Search:
    """The user's own search with this id; Http404 for another user's or a missing one."""
    try:
        return searches_for_user(user).select_related("problem", "best_node").get(id=search_id)
    except (Search.DoesNotExist, ValueError, TypeError):
        raise Http404("No such search.") from None


def node_for_user_or_404(user: Any, node_id: int, search_id: int | None = None) -> Node:
    """A node of one of the user's searches (of search_id when given); Http404 otherwise."""
    user = acting_user(user)
    if user is None:
        raise Http404("No such node.")
    nodes = Node.objects.filter(search__owner=user).select_related("search", "parent")
    if search_id is not None:
        nodes = nodes.filter(search_id=search_id)
    try:
        return nodes.get(id=node_id)
    except (Node.DoesNotExist, ValueError, TypeError):
        raise Http404("No such node.") from None


def search_for_share_or_404(slug: str) -> Search:
    """The search shared under this slug; Http404 once revoked or for an unknown slug."""
    if not slug:
        raise Http404("No such page.")
    try:
        return Search.objects.select_related("problem", "best_node").get(share_slug=slug)
    except Search.DoesNotExist:
        raise Http404("No such page.") from None


def shared_node_or_404(slug: str, node_id: int) -> Node:
    """A node of the search shared under this slug; Http404 otherwise."""
    search = search_for_share_or_404(slug)
    try:
        return search.nodes.select_related("parent").get(id=node_id)
    except (Node.DoesNotExist, ValueError, TypeError):
        raise Http404("No such node.") from None
