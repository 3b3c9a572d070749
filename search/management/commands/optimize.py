"""`manage.py optimize REF.py`: run a search in this process, print the tree as it grows.

The search goes through the same DjangoStore as a queued one, so it also shows in the web UI.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search import services
from search.engine.speedups import Speedup, speedup_of
from search.engine.statuses import (
    FINAL_NODE_STATUSES,
    FINAL_SEARCH_STATUSES,
    PENDING_STATUSES,
    NodeStatus,
)
from search.engine.types import NO_IDEAS
from search.execution import claim_queued, execute_search, provider_keys, set_status
from search.kernel_file import kernel_file
from search.local_user import local_user
from search.models import Node, Search, SearchEvent
from search.proposers import validate_spec
from search.store import DjangoStore


def migrate_if_needed(out: Any) -> None:
    """Bring the database up to date first (a fresh checkout's SQLite has no tables yet): the
    search is recorded like a web search, so it needs them."""
    from django.core.management import call_command
    from django.db import connection
    from django.db.migrations.executor import MigrationExecutor

    executor = MigrationExecutor(connection)
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        out.write("preparing the database (manage.py migrate)...\n")
        call_command("migrate", interactive=False, verbosity=0)


class TreePrinter:
    """Prints one line per finished kernel and per round; on a terminal, a progress bar of the
    kernels that actually run (queued in the runner so far) and the stage of the one running."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.stages: dict[str, str] = {}  # kernel key -> its latest status, once queued
        self.bar_shown = False

    def __call__(self, event: SearchEvent) -> None:
        kind, payload = event.kind, event.payload
        node = payload.get("node") or {}
        if kind == "round_started":
            self.line(f"round {payload.get('round')}")
        elif kind == "node_added" and node.get("kind") == "idea":
            if node.get("status") == "failed":  # the proposer could not write ideas: say why
                self.line(f"  idea failed: {first(node.get('error') or 'no reason given', 200)}")
            else:
                self.line(f"  idea [{node['category'] or '-'}] {first(node['idea'])}")
        elif kind in ("node_added", "node_updated") and node.get("kind") == "kernel":
            self.kernel(node)
        elif kind == "best_changed" and payload.get("speedup"):
            self.line(f"  best so far: {Speedup.from_json(payload).text(times='x')} over eager")
        elif kind == "search_status" and payload.get("status") in FINAL_SEARCH_STATUSES:
            self.line(f"search {payload['status']}" + (f": {payload['reason']}" if payload.get("reason") else ""))
        self.bar()

    def kernel(self, node: dict[str, Any]) -> None:
        status, before = node["status"], self.stages.get(node["key"])
        if status == NodeStatus.PROPOSED:
            return
        if status in FINAL_NODE_STATUSES and before not in FINAL_NODE_STATUSES:
            speed = Speedup.from_json(node).text(times="x") if node.get("speedup") else "  -  "
            detail = f" {first(node['error'], 200)}" if node.get("error") and status != "correct" else ""
            self.line(f"    kernel {node['key']:<22} {status:<14} {speed}{detail}")
        if status == NodeStatus.FAILED and before is None:
            return  # the proposer's failure, never handed to the runner: not part of what runs
        self.stages[node["key"]] = status

    def counts(self) -> tuple[int, int, str]:
        """(evaluated, planned, what runs now) over the kernels handed to the runner so far."""
        done = sum(1 for s in self.stages.values() if s in FINAL_NODE_STATUSES)
        running = [f"{k} {s}" for k, s in self.stages.items()
                   if s in PENDING_STATUSES and s != NodeStatus.QUEUED]
        return done, len(self.stages), ", ".join(running[:2])

    def line(self, text: str) -> None:
        if self.tty and self.bar_shown:
            self.out.write("\r\x1b[K")
        self.out.write(text + "\n")
        self.bar_shown = False

    def bar(self, width: int = 30) -> None:
        if not self.tty or not self.stages:
            return
        done, planned, running = self.counts()
        fill = int(done / planned * width)
        now = f" · {running}" if running else ""
        self.out.write(f"\r\x1b[K[{'#' * fill}{'.' * (width - fill)}] {done}/{planned} evaluated{now}")
        self.out.flush()
        self.bar_shown = True

    def close(self) -> None:
        if self.tty and self.bar_shown:
            self.out.write("\n")
            self.out.flush()


@contextmanager
def library_logs_quiet() -> Iterator[None]:
    """Keep the HTTP clients' request logs (one line per model call) out of the printed tree."""
    loggers = [logging.getLogger(name) for name in ("httpx", "httpx2", "httpcore", "openai", "anthropic")]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.WARNING)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def first(text: str, limit: int = 90) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def summary(search: Search) -> dict[str, Any]:
    """The --json summary: what a script needs to know about how the search ended."""
    best = search.best_node
    speedup = speedup_of(best) if best else Speedup()
    return {
        "search_id": search.id,
        "status": search.status,
        "reason": search.status_reason,
        "best_speedup": speedup.eager,
        "best_speedup_vs_compile": speedup.compile,
        "best_speedup_ci": list(speedup.eager_ci) if speedup.eager_ci else None,
        "best_noisy": speedup.noisy,
        "best_node": best.id if best else None,
        "best_key": best.key if best else None,
        "candidates": search.candidates,
        "correct": search.correct,
        "rounds": search.round,
        "cost_usd": search.cost_usd,
        "url": services.search_url(search),
    }


class Command(BaseCommand):
    help = "Search for a faster kernel for a KernelBench reference, printing the tree as it grows."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("reference", help="a KernelBench reference file (Model, get_inputs, get_init_inputs)")
        parser.add_argument("--proposer", choices=services.PROPOSERS, default=None)
        parser.add_argument("--model", default=None,
                            help="model name; for an ensemble provider:model=weight,... ")
        parser.add_argument("--price", action="append", default=[], metavar="[MODEL=]IN,OUT",
                            help="USD per million input and output tokens for a model the price table "
                                 "lacks (MODEL defaults to --model); may be repeated")
        parser.add_argument("--rounds", type=int, default=None)
        parser.add_argument("--ideas", type=int, default=None, help="ideas per round")
        parser.add_argument("--impls", type=int, default=None, help="implementations per idea")
        parser.add_argument("--seeds", type=int, default=None, help="kernels kept as seeds per round")
        parser.add_argument("--device", choices=services.DEVICES, default=None)
        parser.add_argument("--tolerance", type=float, default=None)
        parser.add_argument("--policy", choices=services.POLICIES, default=None)
        parser.add_argument("--strategy", choices=services.STRATEGIES, default=None)
        parser.add_argument("--max-candidates", type=int, default=None,
                            help="budget: stop after this many evaluated candidates")
        parser.add_argument("--max-cost", type=float, default=None,
                            help="budget: stop once model calls have cost this many US dollars")
        parser.add_argument("--max-minutes", type=float, default=None,
                            help="budget: stop after this much wall-clock time")
        parser.add_argument("--no-library", action="store_true", help="do not start from kept kernels")
        parser.add_argument("--user", default=None, help="owner of the search (default: the local user)")
        parser.add_argument("--out", default=None, help="write the best kernel here as a ModelNew file")
        parser.add_argument("--json", action="store_true", help="print a JSON summary (the tree goes to stderr)")

    def handle(self, *args: Any, **opts: Any) -> None:
        path = Path(opts["reference"])
        if not path.is_file():
            raise CommandError(f"{path}: no such file")
        reference = path.read_bytes().decode("utf-8", errors="surrogateescape")
        migrate_if_needed(self.stderr)
        owner = self.owner(opts["user"])
        settings = {"proposer": opts["proposer"], "model": opts["model"], "rounds": opts["rounds"],
                    "ideas_per_round": opts["ideas"], "impls_per_idea": opts["impls"],
                    "seeds_per_round": opts["seeds"], "device": opts["device"], "tolerance": opts["tolerance"],
                    "policy": opts["policy"], "strategy": opts["strategy"],
                    "max_candidates": opts["max_candidates"], "max_cost_usd": opts["max_cost"],
                    "max_wall_s": opts["max_minutes"] * 60 if opts["max_minutes"] else None}
        if opts["no_library"]:
            settings["use_library"] = False
        settings["model_prices"] = self.prices(opts["price"], opts["model"])
        self.stdout.ending = ""  # the printer ends its own lines (and redraws the bar in place)
        stream = sys.stderr if opts["json"] else self.stdout
        try:
            services.static_check(reference)
            config = services.clean_config(settings, check_keys=False)  # keys: said below
            missing = validate_spec(config.proposer, config.model, keys=provider_keys())
            if missing:  # a key this machine lacks: say so before anything runs
                raise CommandError(f"--proposer {config.proposer}: {missing[0]}")
            stream.write(f"checking {path} on {config.device}...\n")
            info = services.check_with_runner(reference, config.device)
        except services.InvalidReference as exc:
            where = f"{path}:{exc.line}: " if exc.line else f"{path}: "
            raise CommandError(where + exc.message) from None
        except services.InvalidSettings as exc:
            flag = {"ideas_per_round": "ideas", "impls_per_idea": "impls", "seeds_per_round": "seeds",
                    "max_cost_usd": "max-cost", "max_wall_s": "max-minutes"}.get(exc.field, exc.field)
            raise CommandError(f"--{flag.replace('_', '-')}: {exc.message}") from None
        for warning in services.price_warnings(config):
            stream.write(f"warning: {warning}\n")
        search = services.create_search(owner, reference, config, info, title=path.name)
        printer = TreePrinter(stream)
        stream.write(f"search {search.id}: {search.problem.name} "
                     f"({config.proposer}, {config.rounds} rounds x {config.ideas_per_round} ideas x "
                     f"{config.impls_per_idea} implementations, {config.device})\n")
        claim = claim_queued(search.id)
        try:
            with library_logs_quiet():
                execute_search(search.id, claim, listener=printer)
        except KeyboardInterrupt:
            printer.close()
            set_status(DjangoStore(search.id, claim=claim), "cancelled", "interrupted from the terminal")
        printer.close()
        search = Search.objects.select_related("best_node", "problem").get(id=search.id)
        self.report(search, opts, stream)

    def prices(self, given: list[str], model: str | None) -> dict[str, list[float]]:
        """--price values as {model: [input, output]}; CommandError names a malformed one."""
        prices = {}
        for text in given:
            name, eq, numbers = text.rpartition("=") if "=" in text else ("", "", text)
            name = name.strip() or (model or "").strip()
            try:
                values = [float(x) for x in numbers.split(",")]
            except ValueError:
                values = []
            if not name or len(values) != 2 or min(values) < 0:
                raise CommandError(f"--price {text!r}: write [MODEL=]IN,OUT in US dollars per million "
                                   "tokens, e.g. --price my-model=0.5,1.5")
            prices[name] = values
        return prices

    def owner(self, username: str | None) -> Any:
        if not username:
            return local_user()
        try:
            return get_user_model().objects.get(username=username)
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user named {username!r}") from None

    def report(self, search: Search, opts: dict[str, Any], stream: TextIO) -> None:
        best: Node | None = search.best_node
        if best is not None and best.speedup:
            speedup = speedup_of(best)
            vs_compile = (f", {speedup.text('compile', 'x')} over torch.compile"
                          if speedup.compile else "")
            stream.write(f"best: {speedup.text(times='x')} over eager{vs_compile} "
                         f"(node {best.id}, {best.key})\n")
        elif search.status_reason.startswith(NO_IDEAS):
            stream.write(f"{search.status_reason}\n")
        else:
            stream.write("no correct kernel was found\n")
        if opts["out"]:
            if search.status_reason.startswith(NO_IDEAS):
                stream.write(f"nothing written to {opts['out']}: {search.status_reason}\n")
            elif best is None or best.kind != "kernel":
                stream.write(f"nothing written to {opts['out']}: no kernel beat the reference's checks\n")
            else:
                Path(opts["out"]).write_text(kernel_file(search, best))
                stream.write(f"wrote {opts['out']}\n")
        stream.flush()
        if opts["json"]:
            self.stdout.write(json.dumps(summary(search)) + "\n")
        if search.status == "failed":
            raise CommandError(f"search failed: {search.status_reason}")
        if search.status_reason.startswith(NO_IDEAS):
            raise CommandError(search.status_reason)
