"""A local HTTP server that speaks the OpenAI Chat Completions and Anthropic Messages wire formats
and replays recorded responses, so the real SDK clients can be tested without a network."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

RECORDED = Path(__file__).with_name("responses")
FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "llm"


@dataclass
class Canned:
    """One recorded response: status, body (a dict is sent as JSON, a str as is) and headers."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # wait before answering (to make the client time out)


@dataclass
class Seen:
    """A request the server received."""

    path: str
    body: Any
    at: float  # time.monotonic() when it arrived


def recorded(name: str) -> dict[str, Any]:
    """A recorded wire response from tests/fakes/responses/<name>.json."""
    return json.loads((RECORDED / f"{name}.json").read_text())


def fixture(name: str) -> Canned:
    """A recorded provider answer or error from tests/fixtures/llm/<name>.json: status, headers
    and the body exactly as the provider sends it."""
    data = json.loads((FIXTURES / f"{name}.json").read_text())
    return Canned(data.get("status", 200), data["body"], data.get("headers", {}))


def openai_reply(text: str, prompt_tokens: int = 1000, completion_tokens: int = 500, **choice: Any) -> dict:
    """A Chat Completions response carrying `text` (built on a recorded one)."""
    body = recorded("openai_chat_completion")
    body["choices"][0]["message"]["content"] = text
    body["choices"][0].update(choice)
    body["usage"].update(prompt_tokens=prompt_tokens, completion_tokens=completion_tokens,
                         total_tokens=prompt_tokens + completion_tokens)
    return body


def anthropic_reply(text: str, input_tokens: int = 1000, output_tokens: int = 500, stop_reason: str = "end_turn") -> dict:
    """A Messages response carrying `text` (built on a recorded one)."""
    body = recorded("anthropic_message")
    body["content"][0]["text"] = text
    body["stop_reason"] = stop_reason
    body["usage"].update(input_tokens=input_tokens, output_tokens=output_tokens)
    return body


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True  # a delayed answer must not hold up stop()

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that timed out and hung up is part of the test, not an error


class FakeLLMServer:
    """Replays queued responses in order, per endpoint; answers 500 when its queue is empty."""

    def __init__(self) -> None:
        self.queues: dict[str, list[Canned]] = {"/v1/chat/completions": [], "/v1/messages": [],
                                                "/v1/responses": []}
        self.seen: list[Seen] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - the http.server hook's name
                length = int(self.headers.get("content-length") or 0)
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = raw.decode(errors="replace")
                path = self.path.split("?")[0]
                with server._lock:
                    server.seen.append(Seen(path, body, time.monotonic()))
                    queue = server.queues.get(path, [])
                    canned = queue.pop(0) if queue else Canned(500, {"error": {"message": "nothing queued"}})
                if canned.delay_s:
                    time.sleep(canned.delay_s)
                payload = canned.body if isinstance(canned.body, str) else json.dumps(canned.body)
                data = payload.encode()
                self.send_response(canned.status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for name, value in canned.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:  # keep test output quiet
                pass

        self.httpd = _QuietServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02},
                                       daemon=True)

    @property
    def url(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def queue_openai(self, *responses: Canned) -> None:
        self.queues["/v1/chat/completions"].extend(responses)

    def queue_anthropic(self, *responses: Canned) -> None:
        self.queues["/v1/messages"].extend(responses)

    def queue_responses(self, *responses: Canned) -> None:
        self.queues["/v1/responses"].extend(responses)

    def start(self) -> FakeLLMServer:
        self.thread.start()
        return self

    def gaps(self) -> list[float]:
        """Seconds between consecutive requests (how long the client waited before retrying)."""
        return [b.at - a.at for a, b in zip(self.seen, self.seen[1:], strict=False)]

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
