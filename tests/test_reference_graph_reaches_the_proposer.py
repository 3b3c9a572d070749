"""The graph the runner captures while validating a pasted reference is stored with the problem
and reaches the proposer's context; nothing outside the sandbox runs the pasted code."""

from search import services
from search.execution import claim_queued, execute_search
from search.proposers.scripted import ScriptedProposer
from tests.fixtures.problems import problem_source


def _no_candidates(reference, sources, config):
    return []


def test_a_validated_reference_carries_its_graph_to_the_proposer(owner):
    search = services.start_search(owner, problem_source("gemm_scale_sum"),
                                   {"device": "cpu", "rounds": 1, "use_library": False}, enqueue=False)
    graph = search.problem.info["graph"]
    assert graph["captured"] and any(n["target"] == "aten.addmm.default" for n in graph["nodes"])
    proposer = ScriptedProposer({"rounds": [{"ideas": []}]})
    execute_search(search.id, claim_queued(search.id), proposer=proposer, evaluator=_no_candidates)
    assert proposer.last_context is not None
    assert proposer.last_context.reference_info["graph"] == graph
