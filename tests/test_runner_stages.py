"""The runner reports each candidate's stage as it happens, in order, from the parent side:
queued, compiling, checking, timing, verdict for a kernel that runs; queued, compiling,
verdict for one that fails to import."""

from __future__ import annotations

from gpurunner import evaluate_batch
from tests.fixtures.runner import candidate_source, reference_source


def test_each_candidate_goes_through_its_stages_before_the_batch_returns(runner_options):
    seen: list[tuple[int, str, str | None]] = []

    def on_stage(index, stage, verdict):
        seen.append((index, stage, verdict.verdict if verdict else None))

    sources = [candidate_source("softmax_torch_rewrite"), candidate_source("softmax_syntax_error")]
    verdicts = evaluate_batch(reference_source("softmax_rows"), sources, runner_options(),
                              on_stage=on_stage)
    first = [(s, v) for i, s, v in seen if i == 0]
    second = [(s, v) for i, s, v in seen if i == 1]
    assert first == [("queued", None), ("compiling", None), ("checking", None),
                     ("timing", None), ("verdict", verdicts[0].verdict)]
    assert verdicts[0].verdict == "correct"
    assert second == [("queued", None), ("compiling", None), ("verdict", "compile_error")]
    # Both are queued before either starts; the first has its verdict before the second compiles.
    assert seen.index((1, "queued", None)) < seen.index((0, "compiling", None))
    assert seen.index((0, "verdict", "correct")) < seen.index((1, "compiling", None))
