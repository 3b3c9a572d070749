"""`manage.py optimize REF.py`: run a search in this process, print the tree as it grows.

The search goes through the same DjangoStore as a queued one, so it also shows in the web UI.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, TextIO

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from search import services
from search.execution import claim_queued, execute_search, set_status
from search.kernel_file import kernel_file
from search.local_user import local_user
from search.models import Node, Search, SearchEvent
from search.store import DjangoStore

FINAL = {"correct", "incorrect", "compile_error", "runtime_error", "timeout", "rejected", "failed"}


class TreePrinter:
    """Prints one line per finished kernel and per round, with a progress bar on a terminal."""

    def __init__(self, out: TextIO, expected: int) -> None:
        self.out = out
        self.tty = out.isatty()
        self.expected = max(1, expected)
        self.done = 0
        self.bar_shown = False

    def __call__(self, event: SearchEvent) -> None:
        kind, payload = event.kind, event.payload
        if kind == "round_started":
            self.line(f"round {payload.get('round')}")
        elif kind == "node_added" and payload["node"]["kind"] == "idea":
            node = payload["node"]
            self.line(f"  idea [{node['category'] or '-'}] {first(node['idea'])}")
        elif kind == "node_updated" and payload["node"]["kind"] == "kernel" and payload["node"]["status"] in FINAL:
            node = payload["node"]
            self.done += 1
            speed = f"{node['speedup']:.2f}x" if node.get("speedup") else "  -  "
            detail = f" {first(node['error'])}" if node.get("error") and node["status"] != "correct" else ""
            self.line(f"    kernel {node['key']:<22} {node['status']:<14} {speed}{detail}")
        elif kind == "best_changed" and payload.get("speedup"):
            self.line(f"  best so far: {payload['speedup']:.2f}x over eager")
        elif kind == "search_status" and payload.get("status") in ("finished", "failed", "cancelled"):
            self.line(f"search {payload['status']}" + (f": {payload['reason']}" if payload.get("reason") else ""))
        self.bar()

    def line(self, text: str) -> None:
        if self.tty and self.bar_shown:
            self.out.write("\r\x1b[K")
        self.out.write(text + "\n")
        self.bar_shown = False

    def bar(self, width: int = 30) -> None:
        if not self.tty:
            return
        frac = min(1.0, self.done / self.expected)
        fill = int(frac * width)
        self.out.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {self.done}/{self.expected} candidates")
        self.out.flush()
        self.bar_shown = True

    def close(self) -> None:
        if self.tty and self.bar_shown:
            self.out.write("\n")
            self.out.flush()


def first(text: str, limit: int = 90) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line[:limit]


def summary(search: Search) -> dict[str, Any]:
    """The --json summary: what a script needs to know about how the search ended."""
    best = search.best_node
    return {
        "search_id": search.id,
        "status": search.status,
        "reason": search.status_reason,
        "best_speedup": best.speedup if best else None,
        "best_speedup_vs_compile": best.speedup_vs_compile if best else None,
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
        parser.add_argument("--model", default=None, help="model name (scripted: the recorded file)")
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
        owner = self.owner(opts["user"])
        settings = {"proposer": opts["proposer"], "model": opts["model"], "rounds": opts["rounds"],
                    "ideas_per_round": opts["ideas"], "impls_per_idea": opts["impls"],
                    "seeds_per_round": opts["seeds"], "device": opts["device"], "tolerance": opts["tolerance"],
                    "policy": opts["policy"], "strategy": opts["strategy"],
                    "max_candidates": opts["max_candidates"], "max_cost_usd": opts["max_cost"],
                    "max_wall_s": opts["max_minutes"] * 60 if opts["max_minutes"] else None}
        if opts["no_library"]:
            settings["use_library"] = False
        self.stdout.ending = ""  # the printer ends its own lines (and redraws the bar in place)
        stream = sys.stderr if opts["json"] else self.stdout
        try:
            services.static_check(reference)
            config = services.clean_config(settings)
            stream.write(f"checking {path} on {config.device}...\n")
            info = services.check_with_runner(reference, config.device)
        except services.InvalidReference as exc:
            where = f"{path}:{exc.line}: " if exc.line else f"{path}: "
            raise CommandError(where + exc.message) from None
        except services.InvalidSettings as exc:
            flag = {"ideas_per_round": "ideas", "impls_per_idea": "impls", "seeds_per_round": "seeds",
                    "max_cost_usd": "max-cost", "max_wall_s": "max-minutes"}.get(exc.field, exc.field)
            raise CommandError(f"--{flag.replace('_', '-')}: {exc.message}") from None
        search = services.create_search(owner, reference, config, info, title=path.name)
        printer = TreePrinter(stream, config.rounds * config.ideas_per_round * config.impls_per_idea)
        stream.write(f"search {search.id}: {search.problem.name} "
                     f"({config.proposer}, {config.rounds} rounds x {config.ideas_per_round} ideas x "
                     f"{config.impls_per_idea} implementations, {config.device})\n")
        claim = claim_queued(search.id)
        try:
            execute_search(search.id, claim, listener=printer)
        except KeyboardInterrupt:
            printer.close()
            set_status(DjangoStore(search.id, claim=claim), "cancelled", "interrupted from the terminal")
        printer.close()
        search = Search.objects.select_related("best_node", "problem").get(id=search.id)
        self.report(search, opts, stream)

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
            vs_compile = f", {best.speedup_vs_compile:.2f}x over torch.compile" if best.speedup_vs_compile else ""
            stream.write(f"best: {best.speedup:.2f}x over eager{vs_compile} (node {best.id}, {best.key})\n")
        else:
            stream.write("no correct kernel was found\n")
        if opts["out"]:
            if best is None or best.kind != "kernel":
                stream.write(f"nothing written to {opts['out']}: no kernel beat the reference's checks\n")
            else:
                Path(opts["out"]).write_text(kernel_file(search, best))
                stream.write(f"wrote {opts['out']}\n")
        stream.flush()
        if opts["json"]:
            self.stdout.write(json.dumps(summary(search)) + "\n")
        if search.status == "failed":
            raise CommandError(f"search failed: {search.status_reason}")
