"""A search that no idea applies to ends as such, with the reason on the search and in
`manage.py optimize` (a non-zero exit), never as a search whose kernels all failed."""



from search.engine import run_search
from search.engine.memory_store import MemoryStore
from search.engine.types import NO_IDEAS, SearchConfig
from search.proposers.scripted import ScriptedProposer
from tests.fixtures.web import SOFTMAX_REFERENCE

EMPTY = {"rounds": [{"ideas": []}]}


def _never_called(reference, sources, config):
    raise AssertionError("nothing should be evaluated")


def test_the_engine_stops_with_no_ideas_and_says_why():
    outcome = run_search(SOFTMAX_REFERENCE, {}, SearchConfig(rounds=3), ScriptedProposer(EMPTY),
                         _never_called, MemoryStore())
    assert outcome.stop_reason == "no_ideas" and outcome.candidates == 0
    assert outcome.detail.startswith(NO_IDEAS) and "scripted" in outcome.detail
