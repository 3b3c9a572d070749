"""A model-written candidate that redefines the reference's names or runs code under __main__ is
refused before it is run, the model is told why once, and it never becomes a seed."""

from __future__ import annotations

import pytest

from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import SearchConfig
from search.proposers.candidate_rules import broken_rule
from search.proposers.openai_proposer import OpenAIProposer
from tests.fakes.engine import FakeEvaluator, kernel
from tests.fakes.llm_server import Canned, FakeLLMServer, openai_reply
from tests.test_engine_branching import REFERENCE

SNEAKY = kernel("sneaky", 0.1) + '''

class Model(nn.Module):
    def forward(self, x):
        return x


def get_inputs():
    return []


if __name__ == "__main__":
    print("benchmarking on import")
'''


def test_a_candidate_redefining_model_is_refused_with_its_line():
    assert broken_rule(SNEAKY) == ("the candidate defines `Model` (line 13); a candidate defines only `ModelNew` "
                                   "and its helpers: Model, get_inputs and get_init_inputs come from the reference")


def test_main_code_is_refused_with_its_line():
    source = kernel("main", 0.5) + '\nif __name__ == "__main__":\n    ModelNew()\n'
    assert broken_rule(source).startswith('the candidate runs code under `if __name__ == "__main__"` (line 12)')


def test_an_ordinary_candidate_or_a_syntax_error_is_left_to_the_runner():
    assert broken_rule(kernel("fine")) == ""
    assert broken_rule("class ModelNew(:\n") == ""


@pytest.fixture
def server():
    fake = FakeLLMServer().start()
    yield fake
    fake.stop()


def test_the_model_is_told_once_and_a_refused_candidate_is_never_evaluated(server):
    server.queue_openai(Canned(200, openai_reply('[{"idea": "Cheat.", "category": "memory"}]')),
                        Canned(200, openai_reply(f"```python\n{SNEAKY}```")),
                        Canned(200, openai_reply(f"```python\n{SNEAKY}```")))
    evaluator, store = FakeEvaluator(), MemoryStore()
    proposer = OpenAIProposer("gpt-5", api_key="sk-test", base_url=server.url + "/v1", timeout_s=5)
    outcome = run_search(REFERENCE, {}, SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=1), proposer,
                         evaluator, store)
    [refused] = [n for n in store.nodes() if n.kind == "kernel"]
    assert refused.status == "failed" and refused.error.startswith("the candidate defines `Model` (line 13)")
    assert evaluator.evaluated == [] and outcome.best is None
    reask = server.seen[2].body["messages"][-1]["content"]
    assert reask.startswith("Your answer above could not be used: the candidate defines `Model` (line 13)")


def test_names_the_starting_kernel_already_defines_may_stay():
    # The built-in proposer's files embed the reference (Model, get_inputs) on purpose; a model
    # editing such a seed keeps them, but still may not add a __main__ block.
    seed = SNEAKY.split('\n\nif __name__')[0] + "\n"
    assert broken_rule(seed, allowed={"Model", "get_inputs"}) == ""
    assert broken_rule(SNEAKY, allowed={"Model", "get_inputs"}).startswith("the candidate runs code under")
