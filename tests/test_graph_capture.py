"""Capturing a reference's forward as an operator graph (gpurunner/graph.py): the shared JSON
format, weights told apart from inputs, shapes without running the computation, and a reason
when the forward cannot be traced."""

from __future__ import annotations

import json

import pytest
import torch

from gpurunner import check_reference
from gpurunner.graph import capture, capture_module
from tests.fixtures.problems import TRACEABLE, load_problem, problem_source


def _targets(graph: dict) -> list[str]:
    return [n["target"] for n in graph["nodes"]]


@pytest.mark.parametrize("name", TRACEABLE)
def test_it_captures_every_kind_of_problem_as_plain_json(name):
    graph = capture_module(load_problem(name))
    assert graph["captured"], graph["reason"]
    assert json.loads(json.dumps(graph, allow_nan=False)) == graph
    names = [i["name"] for i in graph["inputs"]] + [n["name"] for n in graph["nodes"]]
    assert len(names) == len(set(names))
    defined: set[str] = {i["name"] for i in graph["inputs"]}
    for node in graph["nodes"]:  # every reference points at something defined before it
        refs = _refs([node["args"], node["kwargs"]])
        assert refs <= defined, (node, refs)
        defined.add(node["name"])
    assert graph["outputs"] and all(o["ref"] in defined for o in graph["outputs"])


def _refs(value) -> set[str]:
    if isinstance(value, dict):
        return {value["ref"]} if "ref" in value else set().union(*map(_refs, value.values()))
    if isinstance(value, list):
        return set().union(*map(_refs, value))
    return set()


def test_it_tells_parameters_and_buffers_from_inputs():
    graph = capture_module(load_problem("conv_bn_relu"))
    kinds = {i["name"]: (i["kind"], i["target"]) for i in graph["inputs"]}
    assert kinds["x"] == ("input", None)
    assert kinds["conv_weight"] == ("parameter", "conv.weight")
    assert kinds["bn_running_mean"] == ("buffer", "bn.running_mean")
    assert [i["kind"] for i in graph["inputs"]][0] == "input"  # inputs first, then weights


def test_it_records_shapes_and_constant_arguments():
    graph = capture_module(load_problem("gemm_scale_sum"))
    addmm = next(n for n in graph["nodes"] if n["target"] == "aten.addmm.default")
    assert addmm["outputs"] == [{"shape": [32, 48], "dtype": "float32"}]
    total = next(n for n in graph["nodes"] if n["target"] == "aten.sum.dim_IntList")
    assert total["args"][1:] == [[1], True] and total["outputs"][0]["shape"] == [32, 1]
    scale = [n for n in graph["nodes"] if n["target"] == "aten.mul.Tensor"]
    assert scale and scale[-1]["args"][1] == 1.5


def test_multi_output_operators_are_read_through_getitem():
    graph = capture_module(load_problem("matmul_sum_max_lse"))
    top = next(n for n in graph["nodes"] if n["target"] == "aten.max.dim")
    assert len(top["outputs"]) == 2
    reads = [n for n in graph["nodes"] if n["target"] == "getitem" and n["args"][0] == {"ref": top["name"]}]
    assert reads and reads[0]["args"][1] == 0


def test_attention_and_loops_are_captured_as_their_operators():
    attention = _targets(capture_module(load_problem("transformer_block")))
    assert any("scaled_dot_product" in t or "bmm" in t for t in attention)
    assert attention.count("aten.addmm.default") + attention.count("aten.mm.default") >= 4
    lstm = _targets(capture_module(load_problem("lstm_loop")))
    sigmoids = [t for t in lstm if t.startswith("aten.sigmoid")]  # in place or not
    assert len(sigmoids) >= 5 * 3  # three gates per step, five steps


def test_a_huge_problem_captures_without_allocating_it():
    module = load_problem("relu")
    module.get_inputs = lambda: [torch.randn(1 << 20, 1 << 14)]  # 64 GiB if it were real
    graph = capture_module(module)
    assert graph["captured"] and graph["inputs"][0]["shape"] == [1 << 20, 1 << 14]


def test_a_value_dependent_forward_has_no_graph_and_says_why():
    graph = capture_module(load_problem("data_dependent"))
    assert not graph["captured"] and graph["nodes"] == []
    assert "depend on tensor values" in graph["reason"]


def test_capture_does_not_change_the_models_state():
    module = load_problem("conv_bn_relu")
    model = module.Model(*module.get_init_inputs())
    before = model.bn.running_mean.clone()
    assert capture(model, module.get_inputs())["captured"]
    assert torch.equal(model.bn.running_mean, before)


def test_the_reference_worker_returns_the_graph_in_its_report():
    report = check_reference(problem_source("gemm_scale_sum"))
    assert report.ok, report.error
    assert report.graph["captured"] and report.graph["method"] == "make_fx"
    assert "aten.addmm.default" in _targets(report.graph)
    missing = check_reference(problem_source("data_dependent"))
    assert missing.ok and not missing.graph["captured"] and missing.graph["reason"]


def test_the_check_command_says_whether_the_graph_was_captured(tmp_path):
    import subprocess
    import sys

    for name, words in (("gemm_scale_sum", "graph: 5 operators (make_fx)"),
                        ("data_dependent", "graph: not captured: the forward's control flow")):
        path = tmp_path / f"{name}.py"
        path.write_text(problem_source(name))
        out = subprocess.run([sys.executable, "-m", "gpurunner", "check", str(path)], capture_output=True,
                             text=True, timeout=300)
        assert words in out.stdout, out.stdout + out.stderr
