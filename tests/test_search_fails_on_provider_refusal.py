"""A search whose provider refuses the account (quota, key, credit, model) ends `failed` at the
first call, with the provider's message on its page; nothing more is asked or billed."""

from __future__ import annotations

from search.engine.types import SearchConfig
from search.execution import claim_queued, execute_search
from search.models import Search
from search.services import create_search
from tests.fakes.llm_server import FakeLLMServer, fixture
from tests.fixtures.web import SOFTMAX_REFERENCE

INFO = {"ok": True, "operators": ["aten::_softmax"], "input_shapes": [[8, 64]], "input_dtypes": ["float32"],
        "output_shapes": [[8, 64]], "output_dtypes": ["float32"]}


def test_no_quota_fails_the_search_with_the_providers_message_on_its_page(owner, owner_client, settings):
    server = FakeLLMServer().start()
    try:
        settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY = server.url + "/v1", "sk-test"
        server.queue_openai(fixture("openai_429_insufficient_quota"))
        config = SearchConfig(proposer="openai", model="gpt-5", rounds=3, ideas_per_round=4, device="cpu",
                              use_library=False)
        search = create_search(owner, SOFTMAX_REFERENCE, config, INFO)
        assert execute_search(search.id, claim_queued(search.id)) == "failed"
    finally:
        server.stop()
    search = Search.objects.get(id=search.id)
    message = "OpenAI refused the request (HTTP 429): You exceeded your current quota"
    assert search.status == "failed" and search.status_reason.startswith(message)
    assert len(server.seen) == 1
    assert message in owner_client.get(f"/searches/{search.id}/").content.decode()
