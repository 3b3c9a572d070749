"""`manage.py optimize`: a search run in-process through the real runner, printed as it grows,
recorded like a web search, the best kernel written as a ModelNew file, a JSON summary."""

import ast
import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from search.models import Search
from tests.fixtures.web import SOFTMAX_REFERENCE

FAST = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)
'''

WRONG = FAST.replace("torch.softmax(x, dim=-1)", "torch.zeros_like(x)")


@pytest.fixture
def files(tmp_path):
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"rounds": [{"ideas": [
        {"idea": "Call the fused softmax directly.", "category": "compute", "implementations": [FAST, WRONG]}]}]}))
    return ref, script, tmp_path / "best.py"


def test_it_runs_a_search_and_writes_the_best_kernel_with_a_json_summary(files, owner, capsys):
    ref, script, out = files
    stdout = StringIO()
    call_command("optimize", str(ref), "--proposer", "scripted", "--model", str(script), "--rounds", "1",
                 "--ideas", "1", "--impls", "2", "--device", "cpu", "--no-library", "--user", "owner",
                 "--out", str(out), "--json", stdout=stdout)
    summary = json.loads(stdout.getvalue())
    assert {"search_id", "status", "best_speedup", "best_node", "candidates", "correct"} <= set(summary)
    search = Search.objects.get(id=summary["search_id"])
    assert search.owner == owner and summary["status"] == search.status == "finished"
    assert summary["candidates"] == 2 and summary["correct"] == 1
    assert summary["best_node"] == search.best_node_id and search.best_node.source == FAST
    written = out.read_text()
    assert written.startswith("# kernelweb kernel for problem:") and "class ModelNew" in written
    ast.parse(written)
    tree = capsys.readouterr().err  # with --json the tree goes to stderr
    assert "round 1" in tree and "correct" in tree and "incorrect" in tree


def test_a_candidate_budget_stops_the_search_cleanly_with_its_best(files, owner):
    ref, script, out = files
    stdout = StringIO()
    call_command("optimize", str(ref), "--proposer", "scripted", "--model", str(script), "--rounds", "1",
                 "--ideas", "1", "--impls", "2", "--device", "cpu", "--no-library", "--user", "owner",
                 "--max-candidates", "1", "--json", stdout=stdout)
    summary = json.loads(stdout.getvalue())
    assert summary["status"] == "finished" and summary["candidates"] == 1
    assert "max_candidates" in (summary["reason"] or "") or "candidates" in (summary["reason"] or "")
    assert summary["best_node"] is not None  # the one evaluated kernel, correct and faster


def test_it_refuses_a_budget_out_of_range_and_names_the_flag(files, db):
    ref, script, _ = files
    with pytest.raises(CommandError, match="--max-cost"):
        call_command("optimize", str(ref), "--proposer", "scripted", "--model", str(script),
                     "--device", "cpu", "--max-cost", "-2")


def test_it_refuses_a_reference_with_a_syntax_error_and_says_where(tmp_path, db):
    ref = tmp_path / "broken.py"
    ref.write_text("import torch\nclass Model(:\n    pass\n")
    with pytest.raises(CommandError, match=r"broken.py:2: Syntax error"):
        call_command("optimize", str(ref), stdout=StringIO())
    assert not Search.objects.exists()


def test_it_refuses_a_missing_file(db):
    with pytest.raises(CommandError, match="no such file"):
        call_command("optimize", "/nonexistent/ref.py", stdout=StringIO())


def test_it_refuses_an_unknown_user(files, db):
    ref, _, _ = files
    with pytest.raises(CommandError, match="no user named 'nobody'"):
        call_command("optimize", str(ref), "--user", "nobody", stdout=StringIO())


def test_the_printer_draws_a_bar_only_on_a_terminal():
    from search.management.commands.optimize import TreePrinter
    from search.models import SearchEvent

    class Tty(StringIO):
        def isatty(self):
            return True

    node = {"kind": "kernel", "status": "correct", "speedup": 1.5, "key": "r1/ref/i0/k0", "error": ""}
    for out, has_bar in ((StringIO(), False), (Tty(), True)):
        printer = TreePrinter(out, expected=4)
        printer(SearchEvent(kind="node_updated", payload={"node": node}))
        assert ("1/4 candidates" in out.getvalue()) is has_bar
        assert "1.50x" in out.getvalue()
