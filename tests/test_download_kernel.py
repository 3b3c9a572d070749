"""Downloads: the best kernel and any node's kernel as ModelNew files, the search as JSON."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tests.fixtures.web import SOFTMAX_REFERENCE, make_finished_search

pytestmark = pytest.mark.django_db


def test_best_py_is_an_attachment_with_a_header(owner_client, finished_search):
    response = owner_client.get(f"/searches/{finished_search.id}/best.py")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/x-python")
    assert "attachment" in response["Content-Disposition"] and ".py" in response["Content-Disposition"]
    text = response.content.decode()
    header = text.split("\n\n", 1)[0].splitlines()
    assert all(line.startswith("#") for line in header)
    joined = "\n".join(header)
    assert "Softmax over the last dimension." in joined
    assert "over eager PyTorch: 1.50x" in joined and "torch.compile: 1.20x" in joined
    assert "Device: cpu (test cpu)" in joined and "Date: " in joined
    assert "Checks: 3/3 passed" in joined and "[pass] correctness" in joined


def test_best_py_imports_and_runs_unchanged(owner_client, finished_search, tmp_path):
    kernel = tmp_path / "best.py"
    kernel.write_bytes(owner_client.get(f"/searches/{finished_search.id}/best.py").content)
    reference = tmp_path / "reference.py"
    reference.write_text(SOFTMAX_REFERENCE)
    # A separate interpreter, as KernelBench's harness would load it.
    script = textwrap.dedent(f"""
        import importlib.util, torch
        def load(path, name):
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod); return mod
        ref = load({str(reference)!r}, "ref"); cand = load({str(kernel)!r}, "cand")
        x = ref.get_inputs()
        out = cand.ModelNew(*ref.get_init_inputs())(*x)
        assert torch.allclose(out, ref.Model(*ref.get_init_inputs())(*x), atol=1e-5)
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"


def test_best_py_is_not_found_before_a_kernel_is_correct(owner_client, owner):
    search = make_finished_search(owner, status="running")
    search.best_node = None
    search.save()
    response = owner_client.get(f"/searches/{search.id}/best.py")
    assert response.status_code == 404
    assert b"no correct kernel" in response.content


def test_any_kernel_node_downloads_even_an_incorrect_one(owner_client, finished_search):
    wrong = finished_search.nodes.get(key="r1/ref/i0/k1")
    response = owner_client.get(f"/searches/{finished_search.id}/nodes/{wrong.id}/kernel.py")
    assert response.status_code == 200
    text = response.content.decode()
    assert "# Status: incorrect" in text and "[FAIL] correctness" in text
    assert text.endswith(wrong.source if wrong.source.endswith("\n") else wrong.source + "\n")


def test_an_idea_node_has_no_kernel_file(owner_client, finished_search):
    idea = finished_search.nodes.get(key="r1/ref/i0")
    assert owner_client.get(f"/searches/{finished_search.id}/nodes/{idea.id}/kernel.py").status_code == 404


def test_search_json_holds_every_node_with_source_and_verdict(owner_client, finished_search):
    response = owner_client.get(f"/searches/{finished_search.id}/search.json")
    assert response.status_code == 200
    assert "attachment" in response["Content-Disposition"]
    data = response.json()
    assert data["id"] == finished_search.id and data["status"] == "finished"
    assert data["best"]["speedup"] == 1.5
    assert len(data["nodes"]) == finished_search.nodes.count()
    best = next(n for n in data["nodes"] if n["key"] == "r1/ref/i0/k0")
    assert "class ModelNew" in best["source"] and best["verdict"]["checks"]
    assert data["reference"] == SOFTMAX_REFERENCE


@pytest.mark.parametrize("path", ["best.py", "search.json", "nodes/{node}/kernel.py"])
def test_a_stranger_downloads_nothing(stranger_client, finished_search, path):
    node = finished_search.nodes.get(key="r1/ref/i0/k0")
    url = f"/searches/{finished_search.id}/" + path.format(node=node.id)
    assert stranger_client.get(url).status_code == 404


def test_an_anonymous_viewer_downloads_nothing(anonymous_client, finished_search):
    assert anonymous_client.get(f"/searches/{finished_search.id}/best.py").status_code == 302
