"""What a user does to searches: start, cancel, share, revoke. Views and the API call these."""

from __future__ import annotations

import ast
import math
from dataclasses import fields
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.utils import timezone

from search.engine.types import SearchConfig
from search.events import emit
from search.models import Problem, Search

PROPOSERS = ("builtin", "openai", "anthropic", "ensemble", "scripted")
DEVICES = ("cpu", "cuda")
POLICIES = ("any", "custom-kernels")
STRATEGIES = ("branching", "sequential")


class InvalidReference(Exception):
    """The reference cannot be searched: the message (and line) say why, in the runner's words.

    `status` is the HTTP status an API answers with (413 for a reference over the size limit).
    """

    def __init__(self, message: str, line: int | None = None, status: int = 422) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.status = status


class InvalidSettings(Exception):
    """A search setting is out of range; `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def static_check(reference: str) -> None:
    """Refuse what needs no runner to refuse: empty, too large, binary, unparsable, incomplete.

    Parses only (ast); never executes the text. Raises InvalidReference.
    """
    if not reference or not reference.strip():
        raise InvalidReference("The reference is empty: paste a KernelBench problem (class Model, get_inputs, get_init_inputs).")
    size = len(reference.encode("utf-8", errors="surrogatepass"))
    if size > django_settings.REFERENCE_MAX_BYTES:
        raise InvalidReference(
            f"The reference is {size // 1024} KB; the limit is {django_settings.REFERENCE_MAX_BYTES // 1024} KB.",
            status=413,
        )
    if "\x00" in reference or any(0xD800 <= ord(ch) <= 0xDFFF for ch in reference):
        raise InvalidReference("The reference contains binary data (NUL bytes or invalid UTF-8), not Python source.")
    try:
        tree = ast.parse(reference)
    except SyntaxError as exc:
        raise InvalidReference(f"Syntax error: {exc.msg}.", line=exc.lineno) from None
    defined = {n.name for n in tree.body if isinstance(n, ast.ClassDef | ast.FunctionDef)}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    missing = [name for name in ("Model", "get_inputs", "get_init_inputs") if name not in defined]
    if missing:
        raise InvalidReference(f"The reference does not define {', '.join(missing)} (KernelBench format).")


def _bounded_int(data: dict[str, Any], name: str, low: int, high: int) -> None:
    if name in data:
        try:
            value = int(data[name])
        except (TypeError, ValueError):
            raise InvalidSettings(name, "must be a whole number") from None
        if not low <= value <= high:
            raise InvalidSettings(name, f"must be between {low} and {high}")
        data[name] = value


def clean_config(raw: dict[str, Any] | None) -> SearchConfig:
    """A SearchConfig from user settings, with defaults from the environment; checks ranges."""
    known = {f.name for f in fields(SearchConfig)}
    data = {k: v for k, v in (raw or {}).items() if k in known and v is not None and v != ""}
    data.setdefault("proposer", django_settings.DEFAULT_PROPOSER)
    data.setdefault("model", django_settings.DEFAULT_MODEL)
    data.setdefault("device", django_settings.RUNNER_DEVICE)
    for name, allowed in (("proposer", PROPOSERS), ("device", DEVICES), ("policy", POLICIES), ("strategy", STRATEGIES)):
        if name in data and data[name] not in allowed:
            raise InvalidSettings(name, f"must be one of {', '.join(allowed)}")
    _bounded_int(data, "rounds", 1, django_settings.SEARCH_MAX_ROUNDS)
    _bounded_int(data, "ideas_per_round", 1, django_settings.SEARCH_MAX_IDEAS)
    _bounded_int(data, "impls_per_idea", 1, django_settings.SEARCH_MAX_IMPLS)
    _bounded_int(data, "seeds_per_round", 1, 16)
    _bounded_int(data, "trials", 1, 50)
    _positive_number(data, "tolerance", at_most=1.0)
    # Budgets: the search stops cleanly, with its best so far, at the first one reached.
    _bounded_int(data, "max_candidates", 1, 100_000)
    _positive_number(data, "max_cost_usd")
    _positive_number(data, "max_wall_s")
    if data.get("proposer") == "builtin":
        from search.proposers import builtin_extra_ideas

        try:
            builtin_extra_ideas(str(data.get("model") or ""))
        except ValueError as exc:
            raise InvalidSettings("model", str(exc)) from None
    return SearchConfig.from_dict(data)


def _positive_number(data: dict[str, Any], name: str, at_most: float = math.inf) -> None:
    if name in data:
        try:
            value = float(data[name])
        except (TypeError, ValueError):
            raise InvalidSettings(name, "must be a number") from None
        if not 0 < value <= at_most or value == math.inf:  # NaN fails the comparison too
            raise InvalidSettings(name, f"must be above 0 and at most {at_most:g}" if at_most < math.inf
                                  else "must be a positive number")
        data[name] = value


def check_with_runner(reference: str, device: str) -> dict[str, Any]:
    """Validate the reference in the runner's sandbox; its report as a dict. Raises InvalidReference."""
    import gpurunner

    report = gpurunner.check_reference(reference, device=device)
    if not report.ok:
        raise InvalidReference(report.error or "The runner refused the reference.", line=report.line)
    return report.to_dict()


def operator_signature(info: dict[str, Any]) -> str:
    """The problem's operator signature, as the kernel library keys it."""
    from search.engine.library import operator_signature as signature

    return signature(info)


def problem_name(reference: str, info: dict[str, Any]) -> str:
    """A short name for a problem: the module docstring's first line, else its operators."""
    try:
        doc = ast.get_docstring(ast.parse(reference)) or ""
    except SyntaxError:
        doc = ""
    if doc.strip():
        return doc.strip().splitlines()[0][:200]
    ops = [op.split("::")[-1].split(".")[0] for op in info.get("operators") or []]
    return ("+".join(dict.fromkeys(ops)) or "reference")[:200]


def create_search(user: Any, reference: str, config: SearchConfig, info: dict[str, Any],
                  title: str = "", name: str = "") -> Search:
    """Persist a validated problem and a queued search for it, and log the queued status."""
    with transaction.atomic():
        problem = Problem.objects.create(
            owner=user, name=name or problem_name(reference, info), source=reference,
            info=info, signature=operator_signature(info),
        )
        search = Search.objects.create(owner=user, problem=problem, config=config.to_dict(),
                                       title=title[:200], status="queued")
        emit(search.id, "search_status", {"status": "queued", "round": 0, "reason": ""})
    return search


def start_search(user: Any, reference: str, settings: dict[str, Any] | None = None,
                 title: str = "", enqueue: bool = True) -> Search:
    """Validate the reference (statically, then in the runner's sandbox), create a queued
    search and hand it to the task queue. Raises InvalidReference or InvalidSettings;
    nothing is stored when either is raised.
    """
    static_check(reference)
    config = clean_config(settings)
    info = check_with_runner(reference, config.device)
    search = create_search(user, reference, config, info, title=title, name=(settings or {}).get("name", ""))
    if enqueue:
        from search.tasks import run_search_task

        run_search_task(search.id)
    return search


def cancel_search(search: Search) -> Search:
    """Cancel: a queued search stops at once; a running one at its next evaluation boundary."""
    now = timezone.now()
    if Search.objects.filter(id=search.id, status="queued").update(
        status="cancelled", status_reason="cancelled by the owner", finished=now, cancel_requested=True
    ):
        emit(search.id, "search_status", {"status": "cancelled", "round": search.round, "reason": "cancelled by the owner"})
    elif Search.objects.filter(id=search.id, status="running", cancel_requested=False).update(cancel_requested=True):
        emit(search.id, "search_status", {"status": "running", "round": search.round, "reason": "cancelling"})
    search.refresh_from_db()
    return search


def share_url(search: Search) -> str:
    return f"/s/{search.share_slug}"


def search_url(search: Search) -> str:
    return f"/searches/{search.id}/"


def share_search(search: Search) -> str:
    """Make (or keep) the search's read-only public page; returns its path."""
    if not search.share_slug:
        search.new_share_slug()
        search.save(update_fields=["share_slug"])
    return share_url(search)


def revoke_share(search: Search) -> None:
    """Take the public page down: its URL answers 404 from now on, a new share gets a new URL."""
    search.share_slug = None
    search.save(update_fields=["share_slug"])
