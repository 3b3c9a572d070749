"""A reference whose forward gives different outputs on the same inputs (Dropout in training
mode) is refused at validation, with the output and the difference named."""

from __future__ import annotations

import torch

from gpurunner import check_reference, determinism, evaluate
from tests.fixtures.runner import reference_source, runner_cache, runner_options  # noqa: F401


def test_a_dropout_reference_is_refused_with_the_output_and_the_difference():
    report = check_reference(reference_source("matmul_dropout_softmax"))
    assert not report.ok
    assert report.error.startswith("the reference is not deterministic")
    assert "output 0 differs in" in report.error and "of 1,536 values" in report.error
    assert report.line == 13  # the forward


def test_an_evaluation_against_it_names_the_cause(runner_options):  # noqa: F811
    reference = reference_source("matmul_dropout_softmax")
    identity = reference + "\n\nModelNew = Model\n"
    verdict = evaluate(reference, identity, runner_options())
    assert verdict.verdict == "runtime_error"
    assert "the reference is not deterministic" in verdict.reason


def test_a_deterministic_forward_passes_the_rerun():
    assert check_reference(reference_source("linear_relu")).ok


def test_the_difference_names_the_first_differing_output_and_ignores_bit_noise():
    a = torch.ones(4, 5)
    assert determinism.difference([a, a], [a.clone(), a + 1e-8]) is None
    b = a.clone()
    b[0, :2] = 0
    assert determinism.difference([a, a], [a, b]) == (
        "output 1 differs in 2 of 20 values (10.0%), by up to 1")
    assert "shape [4, 5], then [5, 4]" in determinism.difference([a], [a.t()])
