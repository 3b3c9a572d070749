"""`manage.py optimize`: a search run in-process through the real runner, printed as it grows,
recorded like a web search, the best kernel written as a ModelNew file, a JSON summary. The model
is the OpenAI SDK talking to the local fake server."""

import ast
import json
import logging
import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from search.models import Search
from tests.fakes.llm_server import Canned, FakeLLMServer, fixture, openai_reply
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


# Softmax one op at a time on rows long enough that the fused call is clearly faster.
MANUAL_SOFTMAX = SOFTMAX_REFERENCE.replace(
    "return torch.softmax(x, dim=-1)",
    "e = torch.exp(x - x.max(dim=-1, keepdim=True).values)\n"
    "        return e / e.sum(dim=-1, keepdim=True)",
).replace("torch.randn(8, 64)", "torch.randn(256, 2048)")
IDEA = '[{"idea": "Call the fused softmax directly.", "category": "compute"}]'


def code(source: str) -> Canned:
    return Canned(200, openai_reply(f"Here it is:\n```python\n{source}```"))


@pytest.fixture
def llm(settings):
    """The fake model server, as OPENAI_BASE_URL; queue its answers in call order."""
    fake = FakeLLMServer().start()
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = fake.url + "/v1", "sk-test"
    yield fake
    fake.stop()


@pytest.fixture
def files(tmp_path, llm):
    ref = tmp_path / "softmax.py"
    ref.write_text(MANUAL_SOFTMAX)
    llm.queue_openai(Canned(200, openai_reply(IDEA)), code(FAST), code(WRONG))
    return ref, "gpt-4.1", tmp_path / "best.py"


def test_it_runs_a_search_and_writes_the_best_kernel_with_a_json_summary(files, owner, capsys):
    ref, script, out = files
    stdout = StringIO()
    call_command("optimize", str(ref), "--proposer", "openai", "--model", script, "--rounds", "1",
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
    call_command("optimize", str(ref), "--proposer", "openai", "--model", script, "--rounds", "1",
                 "--ideas", "1", "--impls", "2", "--device", "cpu", "--no-library", "--user", "owner",
                 "--max-candidates", "1", "--json", stdout=stdout)
    summary = json.loads(stdout.getvalue())
    assert summary["status"] == "finished" and summary["candidates"] == 1
    assert "max_candidates" in (summary["reason"] or "") or "candidates" in (summary["reason"] or "")
    assert summary["best_node"] is not None  # the one evaluated kernel, correct and faster


def test_it_refuses_a_budget_out_of_range_and_names_the_flag(files, db):
    ref, script, _ = files
    with pytest.raises(CommandError, match="--max-cost"):
        call_command("optimize", str(ref), "--proposer", "openai", "--model", script,
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


def test_the_printer_counts_what_runs_and_draws_a_bar_only_on_a_terminal():
    from search.management.commands.optimize import TreePrinter
    from search.models import SearchEvent

    class Tty(StringIO):
        def isatty(self):
            return True

    def kernel(key, status, speedup=None):
        node = {"kind": "kernel", "status": status, "speedup": speedup, "key": key, "error": ""}
        return SearchEvent(kind="node_updated", payload={"node": node})

    for out, has_bar in ((StringIO(), False), (Tty(), True)):
        printer = TreePrinter(out)
        printer(kernel("r1/ref/i0/k0", "queued"))
        printer(kernel("r1/ref/i0/k1", "queued"))
        printer(kernel("r1/ref/i0/k0", "timing"))
        assert ("0/2 evaluated · r1/ref/i0/k0 timing" in out.getvalue()) is has_bar
        printer(kernel("r1/ref/i0/k0", "correct", 1.5))
        printer(kernel("r1/ref/i0/k1", "checking"))
        # Two kernels run, not the 16 a round could have planned: the bar counts those two.
        assert ("1/2 evaluated · r1/ref/i0/k1 checking" in out.getvalue()) is has_bar
        assert "1.50x" in out.getvalue()


def test_a_rejected_key_fails_the_search_with_the_providers_message_and_exits_non_zero(tmp_path, llm, owner,
                                                                                         caplog):
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    llm.queue_openai(fixture("openai_401_invalid_api_key"))
    out, err = StringIO(), StringIO()
    with caplog.at_level(logging.DEBUG), pytest.raises(
            CommandError, match=r"search failed: OpenAI refused the request \(HTTP 401\): Incorrect API"):
        call_command("optimize", str(ref), "--proposer", "openai", "--model", "gpt-5", "--device", "cpu",
                     "--no-library", "--user", "owner", stdout=out, stderr=err)
    # No HTTP client logged a request anywhere (stdout, stderr or a log handler).
    assert not [r for r in caplog.records if r.name.split(".")[0] in ("httpx", "httpcore", "openai")
                and r.levelno < logging.WARNING]
    assert "HTTP Request:" not in err.getvalue()
    search = Search.objects.get()
    assert search.status == "failed" and search.status_reason.startswith("OpenAI refused the request (HTTP 401)")
    assert "idea failed: OpenAI refused the request (HTTP 401): Incorrect API key provided" in out.getvalue()
    assert "HTTP Request:" not in out.getvalue() and len(llm.seen) == 1


def test_a_kernel_the_model_failed_to_write_prints_with_its_reason(tmp_path, llm, owner):
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    chat = Canned(200, openai_reply("You could call torch.softmax directly."))
    llm.queue_openai(Canned(200, openai_reply(IDEA)), code(FAST), chat, chat)
    out = StringIO()
    call_command("optimize", str(ref), "--proposer", "openai", "--model", "gpt-4.1", "--rounds", "1", "--ideas", "1",
                 "--impls", "2", "--device", "cpu", "--no-library", "--user", "owner", stdout=out)
    assert re.search(r"kernel r1/ref/i0/k1 +failed +- +no code in the answer: 'You could call "
                     r"torch\.softmax directly\.'", out.getvalue())
    assert "HTTP Request:" not in out.getvalue()


def test_an_unpriced_model_is_warned_about_and_refused_a_cost_budget_without_a_price(tmp_path, llm, owner):
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    with pytest.raises(CommandError, match=r"--max-cost: my-local-model has no price in the price table"):
        call_command("optimize", str(ref), "--proposer", "openai", "--model", "my-local-model", "--device", "cpu",
                     "--max-cost", "1", "--user", "owner", stdout=StringIO())
    with pytest.raises(CommandError, match=r"--price 'cheap': write \[MODEL=\]IN,OUT"):
        call_command("optimize", str(ref), "--proposer", "openai", "--model", "my-local-model",
                     "--price", "cheap", "--user", "owner", stdout=StringIO())
    llm.queue_openai(Canned(200, openai_reply(IDEA, 1_000_000, 0)), code(FAST))
    out = StringIO()
    call_command("optimize", str(ref), "--proposer", "openai", "--model", "my-local-model", "--price", "0.5,2",
                 "--max-cost", "0.4", "--rounds", "2", "--ideas", "1", "--impls", "1", "--device", "cpu",
                 "--no-library", "--user", "owner", "--json", stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["cost_usd"] == pytest.approx(0.5) and "max_cost" in summary["reason"]
    assert summary["rounds"] == 1  # the budget stopped it before round 2's calls
    warned = StringIO()
    llm.queue_openai(Canned(200, openai_reply(IDEA)), code(FAST))
    call_command("optimize", str(ref), "--proposer", "openai", "--model", "my-local-model", "--rounds", "1",
                 "--ideas", "1", "--impls", "1", "--device", "cpu", "--no-library", "--user", "owner", stdout=warned)
    assert "warning: my-local-model has no price in the price table" in warned.getvalue()


def test_a_missing_key_is_refused_before_anything_runs(tmp_path, owner, settings):
    settings.OPENAI_API_KEY, settings.OPENAI_BASE_URL = "", None
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    with pytest.raises(CommandError, match=r"^--proposer openai: OPENAI_API_KEY is not set"):
        call_command("optimize", str(ref), "--proposer", "openai", "--model", "gpt-5", "--user", "owner",
                     stdout=StringIO())
    assert not Search.objects.exists()
