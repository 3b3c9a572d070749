"""One speedup per kernel: the API, the tree's data, the header, the download, the share page
and `optimize --json` show the number the kernel's own verdict measured; a noisy one reads as
an estimate with its interval everywhere."""

from __future__ import annotations

import json
from io import StringIO

from django.core.management import call_command

from search.engine.speedups import speedup_of
from search.models import Node, Search, SearchEvent
from search.serialize import node_json
from tests.fakes.llm_server import Canned, openai_reply
from tests.fixtures.web import SOFTMAX_REFERENCE, correct_verdict, make_finished_search
from tests.test_optimize_command import code, llm  # noqa: F401 - the fake model server fixture

FAST = '''import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)
'''


def tree_data(search: Search, node_id: int) -> dict:
    """The last NODE payload the tree received for a node."""
    events = SearchEvent.objects.filter(search=search, kind__in=["node_added", "node_updated"])
    return [e.payload["node"] for e in events.order_by("id") if e.payload["node"]["id"] == node_id][-1]


def test_a_searched_kernel_shows_its_own_speedup_in_every_view(tmp_path, llm, owner, owner_client):  # noqa: F811
    ref = tmp_path / "softmax.py"
    ref.write_text(SOFTMAX_REFERENCE)
    llm.queue_openai(Canned(200, openai_reply('[{"idea": "Call the fused softmax.", "category": "compute"}]')),
                     code(FAST))
    stdout = StringIO()
    call_command("optimize", str(ref), "--proposer", "openai", "--model", "gpt-4.1",
                 "--rounds", "1", "--ideas", "1", "--impls", "1", "--device", "cpu",
                 "--no-library", "--user", "owner", "--json", stdout=stdout)
    summary = json.loads(stdout.getvalue())
    search = Search.objects.get(id=summary["search_id"])
    kernel = Node.objects.get(search=search, kind="kernel", status="correct")
    measured = kernel.verdict["speedup"]  # the ratio the runner measured for this kernel
    assert measured and kernel.speedup == measured
    speedup = speedup_of(kernel)  # a busy machine may leave it noisy: then an estimate everywhere
    shown = speedup.text(times="x")

    assert summary["best_speedup"] == measured and search.best_node_id == kernel.id
    api = owner_client.get(f"/api/searches/{search.id}").json()
    assert api["best"]["speedup"] == measured and api["best"]["node_id"] == kernel.id
    assert api["best"]["noisy"] == speedup.noisy
    assert [n["speedup"] for n in api["nodes"] if n["id"] == kernel.id] == [measured]
    assert tree_data(search, kernel.id)["speedup"] == measured
    changed = SearchEvent.objects.filter(search=search, kind="best_changed").last()
    assert changed.payload["speedup"] == measured
    for download in ("best.py", f"nodes/{kernel.id}/kernel.py"):
        header = owner_client.get(f"/searches/{search.id}/{download}").content.decode()
        assert f"# Speedup over eager PyTorch: {shown}" in header
    page = owner_client.get(f"/searches/{search.id}/").content.decode()
    assert f'id="stat-speedup">{speedup.text(short=True)}' in page


def test_a_noisy_kernel_reads_as_an_estimate_in_every_view_and_is_not_the_best(owner, owner_client):
    search = make_finished_search(owner, shared=True)
    idea = Node.objects.get(search=search, key="r1/ref/i0")
    verdict = correct_verdict(3.0, noisy=True, speedup_ci=[1.5, 4.8])
    noisy = Node.objects.create(search=search, parent=idea, key="r1/ref/i0/k2", kind="kernel",
                                round=1, source=FAST, status="correct", verdict=verdict,
                                speedup=3.0, speedup_vs_compile=2.4, cand_ms=0.5)
    data = node_json(noisy)
    assert data["noisy"] is True and data["speedup_ci"] == [1.5, 4.8] and data["speedup"] == 3.0
    api = owner_client.get(f"/api/searches/{search.id}").json()
    assert [n["noisy"] for n in api["nodes"] if n["id"] == noisy.id] == [True]
    assert api["best"]["node_id"] != noisy.id and api["best"]["noisy"] is False
    panel = owner_client.get(f"/searches/{search.id}/nodes/{noisy.id}/panel").content.decode()
    assert "≈3.0× (noisy, CI 1.5–4.8)" in panel
    header = owner_client.get(f"/searches/{search.id}/nodes/{noisy.id}/kernel.py").content.decode()
    assert "# Speedup over eager PyTorch: ≈3.0x (noisy, CI 1.5–4.8)" in header
    share = owner_client.get(f"/s/{search.share_slug}").content.decode()
    assert "Best kernel — 1.50× over eager" in share
