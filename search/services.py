"""What a user does to searches: start, cancel, share, revoke. Views and the API call these."""

from __future__ import annotations

import ast
import math
from dataclasses import fields
from typing import Any

from django.conf import settings as django_settings
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from search import availability
from search.engine.statuses import SearchStatus
from search.engine.types import SearchConfig
from search.events import emit
from search.models import Problem, Search
from search.proposers import PROPOSERS, unpriced_models, validate_spec
from search.search_settings import CHOICES, NUMBERS

DEVICES = CHOICES["device"]
POLICIES = CHOICES["policy"]
STRATEGIES = CHOICES["strategy"]


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


def clean_config(raw: dict[str, Any] | None, check_keys: bool = True) -> SearchConfig:
    """A SearchConfig from user settings, with defaults from the environment; checks ranges,
    and (unless `check_keys` is off: the caller says it its own way) that this server has the
    keys the proposer needs."""
    known = {f.name for f in fields(SearchConfig)}
    data = {k: v for k, v in (raw or {}).items() if k in known and v is not None and v != ""}
    data.setdefault("proposer", django_settings.DEFAULT_PROPOSER)
    data.setdefault("model", django_settings.DEFAULT_MODEL)
    data.setdefault("device", django_settings.RUNNER_DEVICE)
    _check_proposer(data)
    for name, allowed in CHOICES.items():
        if name in data and data[name] not in allowed:
            raise InvalidSettings(name, f"must be one of {', '.join(allowed)}")
    for name, number in NUMBERS.items():
        if name in data:
            value, problem = number.check(data[name])
            if problem:
                raise InvalidSettings(name, problem)
            data[name] = value
    device_problem = availability.device_problem(str(data.get("device")))
    if device_problem:
        raise InvalidSettings("device", device_problem)
    _check_cost_budget(data)
    if check_keys:
        _check_keys(data)
    return SearchConfig.from_dict(data)


def _check_proposer(data: dict[str, Any]) -> None:
    """The proposer and model (an ensemble spec, the built-in proposer's optional ideas) as
    search.proposers.validate_spec reads them; test-only proposers are refused."""
    proposer, model = str(data.get("proposer") or ""), str(data.get("model") or "")
    errors = validate_spec(proposer, model)
    if errors:
        raise InvalidSettings("model" if proposer in PROPOSERS else "proposer", errors[0])


def _check_keys(data: dict[str, Any]) -> None:
    """A proposer (or ensemble member) whose key this server lacks is refused at submit, not
    failed later: the proposer's field, or the model's for an ensemble's member."""
    from search.execution import provider_keys

    proposer, model = str(data.get("proposer") or ""), str(data.get("model") or "")
    errors = validate_spec(proposer, model, keys=provider_keys())
    if errors:
        raise InvalidSettings("model" if proposer == "ensemble" else "proposer", errors[0])


def _check_cost_budget(data: dict[str, Any]) -> None:
    """Prices given with the search are numbers; a cost budget needs every model priced."""
    prices = data.get("model_prices") or {}
    if not isinstance(prices, dict) or not all(
            isinstance(v, list | tuple) and len(v) == 2 and all(_non_negative(x) for x in v)
            for v in prices.values()):
        raise InvalidSettings("model_prices", "give each model's price as [input, output] US dollars "
                                              "per million tokens, both 0 or more")
    data["model_prices"] = {str(k): [float(x) for x in v] for k, v in prices.items()}
    if data.get("max_cost_usd") is None:
        return
    unpriced = unpriced_models(str(data.get("proposer") or ""), str(data.get("model") or ""),
                               data["model_prices"])
    if unpriced:
        raise InvalidSettings("max_cost_usd", f"{', '.join(unpriced)} has no price in the price table, so "
                              "its calls would count as $0 and a cost budget would never stop the search; "
                              "give its price (USD per million input and output tokens) or add it to "
                              "the file KERNELWEB_PRICES names")


def price_warnings(config: SearchConfig) -> list[str]:
    """A sentence per model the search calls that has no price (its calls count as $0)."""
    return [f"{model} has no price in the price table: its calls count as $0 (give its price with the "
            "search, or add it to the file KERNELWEB_PRICES names)"
            for model in unpriced_models(config.proposer, config.model, config.model_prices)]


def _non_negative(value: Any) -> bool:
    try:
        return 0 <= float(value) < math.inf
    except (TypeError, ValueError):
        return False


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
                                       title=title[:200], status=SearchStatus.QUEUED)
        emit(search.id, "search_status", {"status": SearchStatus.QUEUED, "round": 0, "reason": ""})
    return search


def start_search(user: Any, reference: str, settings: dict[str, Any] | None = None,
                 title: str = "", enqueue: bool = True) -> Search:
    """Validate the reference (statically, then in the runner's sandbox), create a queued
    search and hand it to the task queue. Raises InvalidReference, InvalidSettings or
    quotas.TooBusy; nothing is stored when any is raised.
    """
    from search.quotas import check_queue_room, validation_slot

    static_check(reference)
    config = clean_config(settings)
    check_queue_room(user)
    with validation_slot(user.pk):  # raises quotas.TooBusy (429) when no slot is free
        info = check_with_runner(reference, config.device)
    search = create_search(user, reference, config, info, title=title, name=(settings or {}).get("name", ""))
    if enqueue:
        from search.tasks import run_search_task

        run_search_task(search.id)
    return search


def cancel_search(search: Search) -> Search:
    """Cancel: a queued search stops at once; a running one at its next evaluation boundary."""
    now = timezone.now()
    if Search.objects.filter(id=search.id, status=SearchStatus.QUEUED).update(
        status=SearchStatus.CANCELLED, status_reason="cancelled by the owner", finished=now, cancel_requested=True
    ):
        emit(search.id, "search_status", {"status": SearchStatus.CANCELLED, "round": search.round, "reason": "cancelled by the owner"})
    elif Search.objects.filter(id=search.id, status=SearchStatus.RUNNING, cancel_requested=False).update(cancel_requested=True):
        emit(search.id, "search_status", {"status": SearchStatus.RUNNING, "round": search.round, "reason": "cancelling"})
    search.refresh_from_db()
    return search


def share_url(search: Search) -> str:
    return reverse("share", args=[search.share_slug])


def search_url(search: Search) -> str:
    return reverse("search", args=[search.id])


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


def share_in_library(search: Search, shared: bool) -> bool | None:
    """Offer (or stop offering) the search's kept kernel to other users' searches, which still
    evaluate it again before it seeds them. None when the search kept no kernel."""
    from search.models import LibraryKernel

    if not LibraryKernel.objects.filter(search=search).update(shared=shared):
        return None
    return shared
