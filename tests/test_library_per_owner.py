"""The kernel library belongs to each owner: Bob's planted kernel never reaches Alice's search,
Alice's private kernels never reach Bob, and a kept kernel seeds a search only after the runner
has evaluated it again against that search's reference."""

from __future__ import annotations

from typing import Any

import pytest

from search.engine.types import SearchConfig
from search.execution import claim_queued, execute_search, keep_in_library, library_seeds
from search.models import LibraryKernel, Node, Search
from search.services import create_search
from tests.fixtures.web import SOFTMAX_REFERENCE, correct_verdict
from tests.test_tasks_search_run import INFO, TwoIdeas, evaluate_by_comment

pytestmark = pytest.mark.django_db

PLANTED = "# speed 59884\nimport os\nos.system('touch /tmp/planted')\nclass ModelNew: pass\n"


class Recording:
    """Evaluates like `evaluate_by_comment`, except that a source in `refuse` is incorrect
    (what the runner says of a forged kernel evaluated honestly); remembers every batch."""

    def __init__(self, refuse: tuple[str, ...] = ()) -> None:
        self.batches: list[list[str]] = []
        self.refuse = refuse

    def __call__(self, reference: str, sources: list[str], config: SearchConfig) -> list[dict[str, Any]]:
        self.batches.append(list(sources))
        verdicts = evaluate_by_comment(reference, sources, config)
        return [{"verdict": "incorrect", "reason": "output mismatch", "checks": []} if s in self.refuse else v
                for s, v in zip(sources, verdicts, strict=True)]

    def saw(self, source: str) -> bool:
        return any(source in batch for batch in self.batches)


def library_search(user) -> Search:
    config = SearchConfig(rounds=1, ideas_per_round=1, impls_per_idea=1, device="cpu", use_library=True)
    return create_search(user, SOFTMAX_REFERENCE, config, INFO)


def plant(user, source: str = PLANTED, speedup: float = 59884.0) -> LibraryKernel:
    """A kept kernel of `user` on the same problem, claiming a huge speedup."""
    search = library_search(user)
    node = Node.objects.create(search=search, key="k", kind="kernel", source=source, status="correct",
                               speedup=speedup, verdict=correct_verdict(speedup))
    keep_in_library(search, node)
    return LibraryKernel.objects.get(search=search)


def test_bobs_planted_kernel_never_reaches_alices_search(alice, bob):
    plant(bob)
    search = library_search(alice)
    assert library_seeds(search, SearchConfig.from_dict(search.config)) == []
    evaluator = Recording()
    assert execute_search(search.id, claim_queued(search.id), proposer=TwoIdeas(), evaluator=evaluator) == "finished"
    assert not evaluator.saw(PLANTED)
    assert not Node.objects.filter(search=search, source=PLANTED).exists()


def test_alices_private_kernel_never_reaches_bob(alice, bob):
    private = "# speed 3\n# alice's private kernel\nclass ModelNew: pass\n"
    plant(alice, private, 3.0)
    search = library_search(bob)
    evaluator = Recording()
    execute_search(search.id, claim_queued(search.id), proposer=TwoIdeas(), evaluator=evaluator)
    assert not evaluator.saw(private)


def test_a_kept_kernel_is_evaluated_again_before_it_seeds_its_owners_search(alice):
    plant(alice)  # claims 59,884x; the runner, asked again, finds it wrong
    search = library_search(alice)
    evaluator = Recording(refuse=(PLANTED,))
    execute_search(search.id, claim_queued(search.id), proposer=TwoIdeas(), evaluator=evaluator)
    assert evaluator.batches[0] == [PLANTED]  # evaluated first, against this search's reference
    kept = Node.objects.get(search=search, key="lib/0")
    assert kept.status == "incorrect" and kept.speedup is None
    search.refresh_from_db()
    assert search.best_node_id != kept.id
    assert not Node.objects.filter(search=search, kind="idea", parent=kept).exists()


def test_only_a_kernel_that_passed_every_check_is_kept(alice):
    search = library_search(alice)
    verdict = correct_verdict(9.0)
    verdict["checks"][1]["passed"] = False
    node = Node.objects.create(search=search, key="k", kind="kernel", source="# speed 9\n", status="correct",
                               speedup=9.0, verdict=verdict)
    keep_in_library(search, node)
    assert not LibraryKernel.objects.filter(search=search).exists()


def test_a_kept_kernel_belongs_to_its_searchs_owner(alice):
    assert plant(alice).owner == alice


def test_a_kernel_its_owner_shared_reaches_others_only_after_evaluation_again(alice, bob):
    """Bob shares his forged kernel: Alice's search evaluates it first, finds it wrong, and
    neither keeps it as best nor grows ideas from it."""
    from search.services import share_in_library

    kept = plant(bob)
    assert share_in_library(kept.search, True) is True
    search = library_search(alice)
    evaluator = Recording(refuse=(PLANTED,))
    execute_search(search.id, claim_queued(search.id), proposer=TwoIdeas(), evaluator=evaluator)
    assert evaluator.batches[0] == [PLANTED]
    lib = Node.objects.get(search=search, key="lib/0")
    search.refresh_from_db()
    assert lib.status == "incorrect" and search.best_node_id != lib.id


def test_sharing_goes_through_the_owners_api_only(alice, bob, production):
    from django.test import Client

    from search.api_auth import create_token

    kept = plant(bob)
    alice_api = Client(headers={"Authorization": f"Bearer {create_token(alice)}"})
    bob_api = Client(headers={"Authorization": f"Bearer {create_token(bob)}"})
    url = f"/api/searches/{kept.search_id}/library"
    assert alice_api.post(url, {"shared": True}, content_type="application/json").status_code == 404
    kept.refresh_from_db()
    assert not kept.shared
    response = bob_api.post(url, {"shared": True}, content_type="application/json")
    assert response.status_code == 200 and response.json() == {"shared": True}
    kept.refresh_from_db()
    assert kept.shared
    empty = library_search(bob)
    missing = bob_api.post(f"/api/searches/{empty.id}/library", {"shared": True}, content_type="application/json")
    assert missing.status_code == 404 and "kept no kernel" in missing.json()["detail"]
