"""`manage.py optimize --proposer openai` end to end on a CPU problem: the OpenAI SDK talks to the
local fake server, whose answers are real working (and broken) CPU kernels; the real runner
checks and times them; the search finishes with a correct kernel faster than the reference, and
round 2's prompt shows round 1's failure the way the model should see it."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command

from search.models import Node, Search
from tests.fakes.llm_server import fixture
from tests.test_optimize_command import code, llm  # noqa: F401 - the fake model server fixture

REFERENCE = '''"""Softmax over rows, one row at a time, each spelled out in five passes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        rows = []
        for row in x:
            shifted = row - row.max()
            numerator = torch.exp(shifted)
            rows.append(numerator / numerator.sum())
        return torch.stack(rows)


def get_inputs():
    return [torch.randn(32, 64)]


def get_init_inputs():
    return []
'''

BROKEN = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        weights = torch.ones(x.shape[0], 1)
        return torch.mm(x, weights).softmax(dim=-1)
'''

REDEFINES = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


class Model(ModelNew):
    pass


if __name__ == "__main__":
    print(ModelNew()(torch.randn(4, 4)))
'''

VECTORISED = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        numerator = torch.exp(x - x.amax(dim=-1, keepdim=True))
        return numerator / numerator.sum(dim=-1, keepdim=True)
'''

IN_PLACE = VECTORISED.replace("numerator = torch.exp(x - x.amax(dim=-1, keepdim=True))",
                              "numerator = (x - x.amax(dim=-1, keepdim=True)).exp_()")


def test_an_openai_search_on_the_cpu_finishes_with_a_correct_faster_kernel(tmp_path, llm, owner):  # noqa: F811
    ref = tmp_path / "softmax_passes.py"
    ref.write_text(REFERENCE)
    llm.queue_openai(
        fixture("openai_ideas_json_after_prose"),  # round 1: prose with shapes in brackets, then JSON
        code(BROKEN), code(VECTORISED),
        fixture("openai_ideas_numbered_list"),  # round 2: a numbered Markdown list
        code(REDEFINES), code(REDEFINES),  # refused unrun, the model told why, refused again
        code(IN_PLACE),
    )
    out = StringIO()
    call_command("optimize", str(ref), "--proposer", "openai", "--model", "gpt-5", "--rounds", "2", "--ideas", "1",
                 "--impls", "2", "--seeds", "1", "--device", "cpu", "--no-library", "--user", "owner", "--json",
                 "--out", str(tmp_path / "best.py"), stdout=out)
    summary = json.loads(out.getvalue())
    assert summary["status"] == "finished" and summary["correct"] >= 1
    assert summary["best_speedup"] > 1.0, summary
    kernels = {n.key: n for n in Node.objects.filter(search=Search.objects.get(), kind="kernel")}
    assert kernels["r1/ref/i0/k0"].status == "runtime_error"
    assert kernels["r1/ref/i0/k1"].status == "correct"
    refused = next(n for key, n in kernels.items() if key.startswith("r2/") and key.endswith("/k0"))
    assert refused.status == "failed" and not refused.verdict
    assert refused.error.startswith("the candidate defines `Model` (line 10)")
    assert "numerator.sum(dim=-1, keepdim=True)" in (tmp_path / "best.py").read_text()

    round2 = llm.seen[3].body["messages"][1]["content"]
    assert "Task: propose 1 optimization ideas" in round2
    assert "ModelNew raised RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x64 and 32x1)" in round2
    assert "candidate.py line 11, in forward: return torch.mm(x, weights).softmax(dim=-1)" in round2
    assert "gpurunner" not in round2 and "/tmp/" not in round2
    assert llm.seen[5].body["messages"][-1]["content"].startswith(
        "Your answer above could not be used: the candidate defines `Model` (line 10)")
    assert len(llm.seen) == 7
