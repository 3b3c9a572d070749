"""`python -m gpurunner evaluate`: exit 0 whenever the evaluation ran, with the JSON contract."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.fixtures.runner import CANDIDATES, REFERENCES

KEYS = {"verdict", "reason", "checks", "ref_ms", "compile_ref_ms", "cand_ms", "speedup",
        "speedup_ci", "noisy",
        "speedup_vs_compile", "max_abs_err", "rel_err", "roofline_pct", "backend", "compile_s"}


def evaluate_cli(candidate: str, runner_cache, *extra: str) -> tuple[int, dict]:
    out = subprocess.run([sys.executable, "-m", "gpurunner", "evaluate",
                          str(REFERENCES / "softmax_rows.py"), str(CANDIDATES / candidate),
                          "--no-compile-baseline", "--cache-dir", str(runner_cache), "--json",
                          *extra], capture_output=True, text=True, timeout=600)
    return out.returncode, json.loads(out.stdout)


def test_evaluate_prints_the_json_contract_for_a_correct_candidate(runner_cache):
    code, data = evaluate_cli("softmax_torch_rewrite.py", runner_cache, "--trials", "3")
    assert code == 0
    assert KEYS <= data.keys()
    assert data["verdict"] == "correct" and data["backend"] == "torch"
    assert data["compile_ref_ms"] is None and data["speedup_vs_compile"] is None
    assert all({"name", "passed", "detail"} <= c.keys() for c in data["checks"])


def test_evaluate_exits_0_for_a_wrong_candidate_too(runner_cache):
    code, data = evaluate_cli("softmax_zeros.py", runner_cache, "--trials", "3")
    assert code == 0
    assert data["verdict"] == "incorrect"
