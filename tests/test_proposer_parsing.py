"""Reading models' answers: ideas as a JSON list, code from the fenced block."""

from __future__ import annotations

import pytest

from search.engine.types import Idea, ProposerError
from search.proposers.parsing import category_key, extract_code, parse_ideas

MODEL_NEW = "import torch.nn as nn\n\nclass ModelNew(nn.Module):\n    def forward(self, x):\n        return x\n"


def test_ideas_are_read_from_a_json_fence_inside_prose():
    text = 'Sure.\n```json\n[{"idea": "Fuse the passes.", "category": "memory"}]\n```\nGood luck!'
    assert parse_ideas(text) == [Idea("Fuse the passes.", "memory")]


def test_ideas_are_read_from_bare_json_with_trailing_commas():
    text = 'Ideas: [{"idea": "A", "category": "async",}, {"idea": "B", "category": "loops",},] done'
    assert parse_ideas(text) == [Idea("A", "async"), Idea("B", "control_flow")]


def test_ideas_may_be_an_object_with_a_list_or_plain_strings():
    assert parse_ideas('{"ideas": [{"text": "A", "category": "Memory access"}]}') == [Idea("A", "memory")]
    assert parse_ideas('["Use TF32 tensor cores."]') == [Idea("Use TF32 tensor cores.", "precision")]


def test_no_more_ideas_than_asked_for_are_kept():
    assert len(parse_ideas('["a", "b", "c"]', k=2)) == 2


def test_an_answer_without_ideas_is_malformed():
    with pytest.raises(ProposerError, match="malformed answer: no JSON list of ideas in 'I would fuse"):
        parse_ideas("I would fuse the kernels and use shared memory.")
    with pytest.raises(ProposerError):
        parse_ideas('[{"category": "memory"}]')


@pytest.mark.parametrize("given, key", [
    ("memory", "memory"), ("Asynchronous operations and latency hiding", "async"),
    ("reduced precision (bf16)", "precision"), ("Occupancy", "parallelism"),
    ("loop unrolling", "control_flow"), ("fewer instructions", "compute"), ("???", "compute"),
])
def test_free_text_categories_map_to_the_studys_categories(given, key):
    assert category_key(given) == key


def test_code_comes_from_the_largest_fence_with_model_new():
    text = f"First a sketch:\n```python\nclass ModelNew: pass\n```\nThe full file:\n```python\n{MODEL_NEW}```\n"
    assert extract_code(text) == MODEL_NEW


def test_among_equal_blocks_the_last_is_taken():
    other = MODEL_NEW.replace("return x", "return y")
    assert extract_code(f"```py\n{MODEL_NEW}```\nfixed:\n```py\n{other}```") == other


def test_a_fence_cut_off_at_the_end_still_counts():
    assert extract_code(f"```python\n{MODEL_NEW}") == MODEL_NEW


def test_a_bare_file_without_fences_is_accepted():
    assert extract_code(MODEL_NEW) == MODEL_NEW


def test_code_without_model_new_is_rejected():
    with pytest.raises(ProposerError, match="code without `class ModelNew`"):
        extract_code("```python\nclass Model(nn.Module):\n    pass\n```")


def test_an_answer_without_code_is_rejected_with_an_excerpt():
    with pytest.raises(ProposerError, match="no code in the answer: \"I'm sorry"):
        extract_code("I'm sorry, but I can't help with that.")


def test_the_complete_ideas_of_a_list_cut_short_are_kept():
    text = ('[{"idea": "Fuse the passes.", "category": "memory"}, {"idea": "Use one warp per row.", '
            '"category": "parallelism"}, {"idea": "Vectorise the lo')
    assert parse_ideas(text, 3, truncated=True) == [Idea("Fuse the passes.", "memory"),
                                                    Idea("Use one warp per row.", "parallelism")]


def test_an_unterminated_think_draft_is_no_answer():
    with pytest.raises(ProposerError, match="no code in the answer: an empty answer"):
        extract_code(f"<think>\nLet me draft:\n```python\n{MODEL_NEW}```\nhmm")


def test_a_bare_file_cut_off_at_the_token_limit_is_not_run():
    with pytest.raises(ProposerError, match="cut off at the output token limit before the file ended"):
        extract_code(MODEL_NEW + "    def helper(self", truncated=True)


def test_a_complete_fence_in_a_cut_off_answer_is_still_the_candidate():
    assert extract_code(f"```python\n{MODEL_NEW}```\nThis kernel works because", truncated=True) == MODEL_NEW
