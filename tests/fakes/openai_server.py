"""A local OpenAI-compatible chat-completions server with scripted replies, for tests and demos.

Tests drive the real `openai` client against it, so retries, timeouts, dropped connections and
malformed replies are exercised through the real HTTP stack. Replies are scripted per task (the
client sends `X-Askbase-Task`): a queue of `Reply` objects consumed in order, then a default
responder (a function of the request) when the queue is empty.

Run standalone to stand in for a real endpoint:
    python -m tests.fakes.openai_server --port 8765 --script tests/fakes/demo_script.json
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any

from core.bench.fakes.local_server import LocalServer, QuietHandler


@dataclass
class Reply:
    content: str = ""
    status: int = 200
    delay_s: float = 0.0  # sleep before answering (timeout tests)
    retry_after: float | None = None  # Retry-After header on errors
    drop: bool = False  # close the connection without answering
    refusal: str | None = None  # OpenAI structured-output refusal
    finish_reason: str = "stop"
    error_message: str = "scripted error"


Responder = Callable[[dict[str, Any]], Reply]


@dataclass
class Request:
    task: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, str]]:
        return self.body.get("messages", [])

    @property
    def user(self) -> str:
        return next((m["content"] for m in reversed(self.messages) if m["role"] == "user"), "")

    @property
    def system(self) -> str:
        return next((m["content"] for m in self.messages if m["role"] == "system"), "")


@dataclass
class FakeOpenAI(LocalServer):
    host: str = "127.0.0.1"
    port: int = 0
    queues: dict[str, deque[Reply]] = field(default_factory=lambda: defaultdict(deque))
    responders: dict[str, Responder] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    reject_response_format: bool = False  # act like an endpoint without structured outputs

    def __post_init__(self) -> None:
        self._listen(self._handler())

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    def script(self, task: str, *replies: Reply | str) -> None:
        for r in replies:
            self.queues[task].append(Reply(content=r) if isinstance(r, str) else r)

    def respond(self, task: str, responder: Responder) -> None:
        self.responders[task] = responder

    def calls(self, task: str | None = None) -> list[Request]:
        return [r for r in self.requests if task is None or r.task.split(":")[0] == task]

    def _next_reply(self, task: str, body: dict[str, Any]) -> Reply:
        base = task.split(":")[0]
        for key in (task, base):
            if self.queues.get(key):
                return self.queues[key].popleft()
        for key in (task, base, "*"):
            if key in self.responders:
                return self.responders[key](body)
        return Reply(status=500, error_message=f"no scripted reply for task {task!r}")

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(QuietHandler):
            protocol_version = "HTTP/1.1"
            # Headers and body go out in two writes; with Nagle on, the body waits for the client's
            # delayed ACK of the headers: 40 ms per reply on loopback.
            disable_nagle_algorithm = True

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                if not self.path.rstrip("/").endswith("chat/completions"):
                    return self._send(404, {"error": {"message": "not found"}})
                if self.headers.get("authorization", "") in ("", "Bearer "):
                    return self._send(401, {"error": {"message": "missing API key"}})
                task = self.headers.get("x-askbase-task") or "unknown"
                fake.requests.append(Request(task, body))
                if fake.reject_response_format and "response_format" in body:
                    return self._send(
                        400,
                        {
                            "error": {
                                "message": "response_format is not supported",
                                "param": "response_format",
                            }
                        },
                    )
                reply = fake._next_reply(task, body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.drop:
                    self.close_connection = True
                    self.connection.close()
                    return None
                if reply.status != 200:
                    headers = {"retry-after": str(reply.retry_after)} if reply.retry_after is not None else {}
                    return self._send(reply.status, {"error": {"message": reply.error_message}}, headers)
                prompt_tokens = sum(len(m.get("content") or "") for m in body.get("messages", [])) // 4
                message: dict[str, Any] = {"role": "assistant", "content": reply.content}
                if reply.refusal is not None:
                    message = {"role": "assistant", "content": None, "refusal": reply.refusal}
                return self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(fake.requests)}",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake-model"),
                        "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
                        "usage": {
                            "prompt_tokens": prompt_tokens,
                            "completion_tokens": len(reply.content) // 4,
                            "total_tokens": prompt_tokens + len(reply.content) // 4,
                        },
                    },
                )

            def _send(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(status)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout tests)
                    pass

        return Handler


def scripted_from_file(path: str) -> dict[str, Responder]:
    """Responders from a JSON file: {"task": [{"match": "substring of the question", "content": "..."}]}."""
    with open(path) as f:
        data = json.load(f)

    def make(entries: list[dict[str, str]]) -> Responder:
        def responder(body: dict[str, Any]) -> Reply:
            user = next((m["content"] for m in reversed(body.get("messages", [])) if m["role"] == "user"), "")
            for entry in entries:
                if entry.get("match", "").lower() in user.lower():
                    return Reply(content=entry["content"])
            return Reply(status=500, error_message="no scripted reply matches this question")

        return responder

    return {task: make(entries) for task, entries in data.items()}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--script", required=True, help="JSON file of scripted replies per task")
    args = parser.parse_args()
    fake = FakeOpenAI(port=args.port)
    for task, responder in scripted_from_file(args.script).items():
        fake.respond(task, responder)
    print(f"fake OpenAI-compatible server on {fake.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        fake._server.serve_forever()


if __name__ == "__main__":
    main()
