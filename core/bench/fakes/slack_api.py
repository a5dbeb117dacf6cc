"""A local Slack Web API for tests and the load benchmark: records every call and keeps the messages as a user would see them.

The bot talks to it through the real slack_sdk WebClient (`SLACK_API_BASE_URL`), so JSON and form
bodies, tokens, the three-step file upload and 429 retries all go over real HTTP. Messages are
kept by ts with their latest text and blocks (chat.update replaces them), files by id with their
bytes. Failures are scripted per method: `fail("chat.update", "ratelimited", status=429)`. A
response can be held back: `hold("chat.postMessage", when)` returns a `Hold` whose `arrived` is set
once a matching call has been carried out (its message is there for people to see) while its
caller still waits for the answer, until `release()` — so a test orders events deterministically.

Serves: auth.test, chat.postMessage, chat.update, chat.delete, chat.postEphemeral (kept apart, in
`ephemerals`, with the one person who sees each),
chat.startStream/appendStream/stopStream (streamed messages keep their chunks),
assistant.threads.setStatus/setSuggestedPrompts/setTitle (kept per thread), reactions.add/remove,
views.open/update/publish, conversations.info, users.info, users.list, files.getUploadURLExternal, the upload URL,
files.completeUploadExternal, and response_url posts (`/respond/<id>`). Blocks are checked against
Slack's documented limits for the kinds the bot uses (table, data_table, context_actions), so a
payload Slack would reject is rejected here too.

Run standalone:  python -m core.bench.fakes.slack_api --port 8766
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import re
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import parse_qs, urlparse

from core.bench.fakes.local_server import LocalServer, QuietHandler

JSON_FIELDS = ("blocks", "attachments", "files", "view", "metadata", "chunks", "prompts", "loading_messages")


def _valid_block(block: dict[str, Any]) -> bool:
    """Slack's documented rules for the block kinds Askbase sends (docs.slack.dev/reference/block-kit)."""
    kind = block.get("type")
    if kind == "table":
        rows = block.get("rows") or []
        return 1 <= len(rows) <= 101 and all(c.get("text") for r in rows for c in r)
    if kind == "data_table":
        rows = block.get("rows") or []
        width = len(rows[0]) if rows else 0
        cells = [c for r in rows for c in r]
        return (
            bool(block.get("caption"))
            and 2 <= len(rows) <= 101
            and 1 <= width <= 20
            and all(len(r) == width for r in rows)
            and all(c.get("type") == "raw_text" for c in rows[0])
            and all(c.get("text") for c in cells)
            and all(isinstance(c.get("value"), int | float) for c in cells if c.get("type") == "raw_number")
            and sum(len(c.get("text", "")) for c in cells) <= 10_000
            and 1 <= int(block.get("page_size", 5)) <= 100
        )
    if kind == "context_actions":
        elements = block.get("elements") or []
        return 1 <= len(elements) <= 5 and all(
            e.get("type") in ("feedback_buttons", "icon_button") for e in elements
        )
    return True


@dataclass
class Call:
    method: str
    args: dict[str, Any]
    token: str | None = None
    at: float = field(default_factory=time.time)


@dataclass
class Failure:
    error: str
    status: int = 200
    retry_after: int | None = None


@dataclass
class Message:
    channel: str
    ts: str
    text: str = ""
    blocks: list[dict[str, Any]] = field(default_factory=list)
    thread_ts: str | None = None
    updates: int = 0
    broadcast: bool = False  # reply_broadcast: also shown in the channel
    chunks: list[dict[str, Any]] = field(default_factory=list)  # a streamed message's chunks, in order
    streaming: bool = False  # started and not yet stopped
    to: str | None = None  # an ephemeral message: the one person who sees it

    @property
    def streamed(self) -> bool:
        return bool(self.chunks) or self.streaming

    def block_types(self) -> list[str]:
        return [b.get("type", "") for b in self.blocks]

    def table(self) -> list[list[str]] | None:
        """The table's cells as text (a `table` or a `data_table` block), header first; None when the
        message has no table."""
        for block in self.blocks:
            if block.get("type") in ("table", "data_table"):
                return [
                    [cell.get("text", str(cell.get("value", ""))) for cell in row] for row in block["rows"]
                ]
        return None

    def sentence(self) -> str:
        """The text of the first section: an answer's sentence."""
        return next(
            (b["text"]["text"] for b in self.blocks if b.get("type") == "section" and b.get("text")), ""
        )

    def result(self) -> list[list[str]] | None:
        """The rows an answer shows: its table's body, or the one value its sentence states ("Number of
        clients: 300." → [["300"]]); None for a message that is not an answer."""
        table = self.table()
        if table is not None:
            return table[1:]
        if "show_sql" not in self.action_ids():
            return None
        match = re.search(r": ([^:]+)\.$", self.sentence())
        return [[match.group(1)]] if match else None

    def feedback_values(self) -> dict[str, str]:
        """{"positive": value, "negative": value} of the message's feedback buttons, when it has them."""
        for b in self.blocks:
            for e in b.get("elements", []) if b.get("type") == "context_actions" else []:
                if e.get("type") == "feedback_buttons":
                    return {
                        "positive": e["positive_button"]["value"],
                        "negative": e["negative_button"]["value"],
                    }
        return {}

    def tasks(self) -> dict[str, str]:
        """A streamed plan's tasks: id → latest status."""
        found: dict[str, str] = {}
        for chunk in self.chunks:
            if chunk.get("type") == "task_update":
                found[chunk["id"]] = chunk.get("status", "")
        return found

    def action_ids(self) -> list[str]:
        return [
            e.get("action_id", "") for b in self.blocks if b.get("type") == "actions" for e in b["elements"]
        ]

    def button_value(self, action_id: str) -> str | None:
        for b in self.blocks:
            for e in b.get("elements", []) if b.get("type") == "actions" else []:
                if e.get("action_id") == action_id:
                    value = e.get("value")
                    return None if value is None else str(value)
        return None

    def all_text(self) -> str:
        """Every piece of text in the message, as one string (for 'does the user see X' checks)."""
        parts = [self.text]

        def walk(node: Any) -> None:
            if isinstance(node, dict):
                for key, value in node.items():
                    if key == "text" and isinstance(value, str):
                        parts.append(value)
                    else:
                        walk(value)
            elif isinstance(node, list):
                for item in node:
                    walk(item)

        walk(self.blocks)
        return "\n".join(parts)


@dataclass
class UploadedFile:
    id: str
    filename: str
    content: bytes = b""
    title: str = ""
    channel: str | None = None
    thread_ts: str | None = None
    completed: bool = False
    alt_txt: str = ""  # what the image shows, for screen readers


@dataclass
class Hold:
    """The response to one matching call, held back until `release()` (at most `timeout` s)."""

    method: str
    when: Callable[[dict[str, Any]], bool]
    timeout: float = 30.0
    arrived: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    response: dict[str, Any] = field(default_factory=dict)

    def release(self) -> None:
        self.released.set()


@dataclass
class FakeSlack(LocalServer):
    host: str = "127.0.0.1"
    port: int = 0
    team_id: str = "T0001"
    bot_user_id: str = "UBOT"
    bot_id: str = "BBOT"
    reject_block_types: set[str] = field(default_factory=set)  # e.g. {"table"}: answer invalid_blocks
    installed_token: str = "xoxb-installed-by-oauth"  # what oauth.v2.access hands out
    # users.info / conversations.info fields per id, over the defaults: {"U2": {"is_admin": True}}
    users: dict[str, dict[str, Any]] = field(default_factory=dict)
    channels: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.calls: list[Call] = []
        self.messages: dict[str, Message] = {}
        self.files: dict[str, UploadedFile] = {}
        self.home_views: dict[str, dict[str, Any]] = {}  # user → the App Home view last published
        self.deleted: list[Message] = []  # messages removed with chat.delete
        self.ephemerals: list[Message] = []  # chat.postEphemeral, in order (Slack keeps none of them)
        self.statuses: dict[tuple[str, str], list[str]] = defaultdict(
            list
        )  # (channel, thread) → statuses set
        self.prompts: dict[
            tuple[str, str], list[dict[str, Any]]
        ] = {}  # (channel, thread) → suggested prompts
        self.titles: dict[tuple[str, str], str] = {}  # (channel, thread) → assistant thread title
        self.failures: dict[str, deque[Failure]] = defaultdict(deque)
        self.holds: list[Hold] = []
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._listen(self._handler())

    # ------------------------------------------------------------ control

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    @property
    def base_url(self) -> str:
        return f"{self.url}api/"

    def response_url(self, name: str = "1") -> str:
        return f"{self.url}respond/{name}"

    def fail(
        self, method: str, error: str, *, status: int = 200, times: int = 1, retry_after: int | None = None
    ) -> None:
        for _ in range(times):
            self.failures[method].append(Failure(error, status, retry_after))

    def hold(self, method: str, when: Callable[[dict[str, Any]], bool] = lambda args: True) -> Hold:
        """Hold back the response to the next `method` call whose arguments satisfy `when`."""
        held = Hold(method, when)
        with self._lock:
            self.holds.append(held)
        return held

    def _held(self, method: str, args: dict[str, Any]) -> Hold | None:
        with self._lock:
            for held in self.holds:
                if held.method == method and held.when(args):
                    self.holds.remove(held)
                    return held
        return None

    def calls_to(self, method: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.method == method]

    def wait_for(self, predicate: Callable[[FakeSlack], Any], timeout: float = 10.0) -> Any:
        """Block until `predicate(self)` is truthy (re-checked on every call); return its value."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while True:
                value = predicate(self)
                if value:
                    return value
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(
                        f"condition not met in {timeout} s; calls: {[c.method for c in self.calls]}"
                    )
                self._lock.wait(left)

    def thread(self, channel: str, thread_ts: str) -> list[Message]:
        """Our messages in a thread (or the thread root itself), oldest first."""
        return sorted(
            (
                m
                for m in self.messages.values()
                if m.channel == channel and (m.thread_ts == thread_ts or m.ts == thread_ts)
            ),
            key=lambda m: float(m.ts),
        )

    def answer_in(self, channel: str, thread_ts: str) -> Message | None:
        """The first reply of ours in the thread that is neither a status message nor a streamed plan
        (the root of a thread we started, e.g. "<@U> asked: …" for /ask, is not an answer)."""
        return next(
            (
                m
                for m in self.thread(channel, thread_ts)
                if m.ts != thread_ts and not m.streamed and ":hourglass" not in m.all_text()
            ),
            None,
        )

    def files_in(self, channel: str, thread_ts: str | None = None) -> list[UploadedFile]:
        return [
            f
            for f in self.files.values()
            if f.completed and f.channel == channel and (thread_ts is None or f.thread_ts == thread_ts)
        ]

    # ------------------------------------------------------------ API

    def _next_ts(self) -> str:
        n = next(self._ids)
        return f"{1700000000 + n}.{n:06d}"

    def _check_blocks(self, blocks: list[dict[str, Any]]) -> str | None:
        if any(b.get("type") in self.reject_block_types for b in blocks):
            return "invalid_blocks"
        if len(blocks) > 50:
            return "invalid_blocks"
        if any(not _valid_block(b) for b in blocks):
            return "invalid_blocks"
        return None

    def handle(self, method: str, args: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        queue = self.failures.get(method)
        if queue:
            failure = queue.popleft()
            headers = {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            return failure.status, {"ok": False, "error": failure.error}, headers
        handler = getattr(self, "api_" + method.replace(".", "_"), None)
        if handler is None:
            return 200, {"ok": False, "error": "unknown_method"}, {}
        return 200, handler(args), {}

    def api_auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "ok": True,
            "url": "https://askbase-test.slack.com/",
            "team": "Askbase Test",
            "user": "askbase",
            "team_id": self.team_id,
            "user_id": self.bot_user_id,
            "bot_id": self.bot_id,
        }

    def api_oauth_v2_access(self, args: dict[str, Any]) -> dict[str, Any]:
        """The OAuth v2 code exchange: a bot token for this fake team."""
        if not args.get("code"):
            return {"ok": False, "error": "invalid_code"}
        return {
            "ok": True,
            "app_id": "A0001",
            "access_token": self.installed_token,
            "token_type": "bot",
            "scope": "app_mentions:read,chat:write,commands",
            "bot_user_id": self.bot_user_id,
            "team": {"id": self.team_id, "name": "Askbase Test"},
            "enterprise": None,
            "is_enterprise_install": False,
            "authed_user": {"id": "U0001"},
        }

    def api_chat_postMessage(self, args: dict[str, Any]) -> dict[str, Any]:
        blocks = args.get("blocks") or []
        if error := self._check_blocks(blocks):
            return {"ok": False, "error": error}
        if not args.get("channel"):
            return {"ok": False, "error": "channel_not_found"}
        ts = self._next_ts()
        channel = args["channel"]  # a user id stands for the app's DM with that person
        broadcast = str(args.get("reply_broadcast", "")).lower() in ("true", "1")
        self.messages[ts] = Message(
            channel, ts, args.get("text", ""), blocks, args.get("thread_ts"), broadcast=broadcast
        )
        return {
            "ok": True,
            "channel": channel,
            "ts": ts,
            "message": {"text": args.get("text", ""), "ts": ts},
        }

    def api_chat_delete(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(args.get("ts", ""))
        if message is None or message.channel != args.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        self.deleted.append(self.messages.pop(message.ts))
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def api_chat_startStream(self, args: dict[str, Any]) -> dict[str, Any]:
        channel, thread_ts = args.get("channel"), args.get("thread_ts")
        if not channel or not thread_ts:
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (
            args.get("recipient_user_id") and args.get("recipient_team_id")
        ):
            return {"ok": False, "error": "missing_recipient_user_id"}  # required outside DMs
        ts = self._next_ts()
        message = Message(channel, ts, args.get("markdown_text") or "", [], thread_ts, streaming=True)
        message.chunks.extend(args.get("chunks") or [])
        self.messages[ts] = message
        return {"ok": True, "channel": channel, "ts": ts}

    def api_chat_appendStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(args.get("ts", ""))
        if message is None or not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        message.text += args.get("markdown_text") or ""
        message.chunks.extend(args.get("chunks") or [])
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def api_chat_stopStream(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(args.get("ts", ""))
        if message is None or not message.streaming:
            return {"ok": False, "error": "message_not_in_streaming_state"}
        blocks = args.get("blocks") or []
        if error := self._check_blocks(blocks):
            return {"ok": False, "error": error}
        message.text += args.get("markdown_text") or ""
        message.chunks.extend(args.get("chunks") or [])
        message.blocks = blocks
        message.streaming = False
        return {"ok": True, "channel": message.channel, "ts": message.ts}

    def api_assistant_threads_setStatus(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel_id") or not args.get("thread_ts") or "status" not in args:
            return {"ok": False, "error": "invalid_arguments"}
        self.statuses[(args["channel_id"], args["thread_ts"])].append(args["status"])
        return {"ok": True}

    def api_assistant_threads_setSuggestedPrompts(self, args: dict[str, Any]) -> dict[str, Any]:
        prompts = args.get("prompts") or []
        if not args.get("channel_id") or not prompts or len(prompts) > 4:
            return {"ok": False, "error": "invalid_arguments"}
        if any(not p.get("title") or not p.get("message") for p in prompts):
            return {"ok": False, "error": "invalid_arguments"}
        self.prompts[(args["channel_id"], args.get("thread_ts") or "")] = prompts
        return {"ok": True}

    def api_assistant_threads_setTitle(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("channel_id") or not args.get("thread_ts") or not args.get("title"):
            return {"ok": False, "error": "invalid_arguments"}
        self.titles[(args["channel_id"], args["thread_ts"])] = args["title"]
        return {"ok": True}

    def status_of(self, channel: str, thread_ts: str) -> str | None:
        """The assistant status shown under a thread now ("" cleared; None never set)."""
        seen = self.statuses.get((channel, thread_ts))
        return seen[-1] if seen else None

    def api_chat_update(self, args: dict[str, Any]) -> dict[str, Any]:
        message = self.messages.get(args.get("ts", ""))
        if message is None or message.channel != args.get("channel"):
            return {"ok": False, "error": "message_not_found"}
        blocks = args.get("blocks") or []
        if error := self._check_blocks(blocks):
            return {"ok": False, "error": error}
        message.text, message.blocks = args.get("text", ""), blocks
        message.updates += 1
        return {"ok": True, "channel": message.channel, "ts": message.ts, "text": message.text}

    def api_chat_postEphemeral(self, args: dict[str, Any]) -> dict[str, Any]:
        blocks = args.get("blocks") or []
        if error := self._check_blocks(blocks):
            return {"ok": False, "error": error}
        if not args.get("channel") or not args.get("user"):
            return {"ok": False, "error": "invalid_arguments"}
        ts = self._next_ts()
        self.ephemerals.append(
            Message(args["channel"], ts, args.get("text", ""), blocks, args.get("thread_ts"), to=args["user"])
        )
        return {"ok": True, "message_ts": ts}

    def api_reactions_add(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def api_reactions_remove(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True}

    def api_views_open(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("trigger_id"):
            return {"ok": False, "error": "invalid_trigger_id"}
        return {"ok": True, "view": {"id": f"V{next(self._ids)}", **(args.get("view") or {})}}

    def api_views_update(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"ok": True, "view": {"id": args.get("view_id", "V1"), **(args.get("view") or {})}}

    def api_conversations_info(self, args: dict[str, Any]) -> dict[str, Any]:
        channel = args.get("channel", "")
        return {
            "ok": True,
            "channel": {
                "id": channel,
                "name": channel.lower(),
                "is_member": True,
                "is_im": channel.startswith("D"),
                **self.channels.get(channel, {}),
            },
        }

    def api_users_info(self, args: dict[str, Any]) -> dict[str, Any]:
        user = args.get("user", "")
        return {
            "ok": True,
            "user": {
                "id": user,
                "name": user.lower(),
                "tz": "Europe/Berlin",
                "is_bot": False,
                **self.users.get(user, {}),
            },
        }

    def api_users_list(self, args: dict[str, Any]) -> dict[str, Any]:
        """The people of `users` (their fields over the defaults), one page."""
        members = [
            {"id": user, "name": user.lower(), "is_bot": False, "deleted": False, **fields}
            for user, fields in self.users.items()
        ]
        return {"ok": True, "members": members, "response_metadata": {"next_cursor": ""}}

    def api_views_publish(self, args: dict[str, Any]) -> dict[str, Any]:
        if not args.get("user_id"):
            return {"ok": False, "error": "invalid_arguments"}
        self.home_views[args["user_id"]] = args.get("view") or {}
        return {"ok": True, "view": {"id": f"V{next(self._ids)}", **(args.get("view") or {})}}

    def api_files_getUploadURLExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        file_id = f"F{next(self._ids):06d}"
        self.files[file_id] = UploadedFile(
            file_id, args.get("filename", ""), alt_txt=args.get("alt_txt") or ""
        )
        return {"ok": True, "upload_url": f"{self.url}upload/{file_id}", "file_id": file_id}

    def api_files_completeUploadExternal(self, args: dict[str, Any]) -> dict[str, Any]:
        done = []
        for item in args.get("files") or []:
            f = self.files.get(item.get("id", ""))
            if f is None:
                return {"ok": False, "error": "file_not_found"}
            f.title = item.get("title") or f.filename
            f.channel = args.get("channel_id") or (args.get("channels") or "").split(",")[0] or None
            f.thread_ts = args.get("thread_ts")
            f.completed = True
            done.append({"id": f.id, "name": f.filename, "title": f.title})
        return {"ok": True, "files": done}

    # ------------------------------------------------------------ HTTP

    def _record(self, call: Call) -> None:
        with self._lock:
            self.calls.append(call)
            self._lock.notify_all()

    def _changed(self) -> None:
        with self._lock:
            self._lock.notify_all()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(QuietHandler):
            def _reply(
                self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None
            ) -> None:
                self.send_json(status, payload, headers, content_type="application/json; charset=utf-8")

            def do_GET(self) -> None:
                self.do_POST()

            def do_POST(self) -> None:
                parsed = urlparse(self.path)
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if parsed.path.startswith("/upload/"):
                    file_id = parsed.path.rsplit("/", 1)[-1]
                    with fake._lock:
                        f = fake.files.get(file_id)
                        if f is not None:
                            f.content = raw
                    fake._record(Call("upload", {"file_id": file_id, "bytes": len(raw)}))
                    self.send_response(200 if f is not None else 404)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"OK")
                    return
                args = self._args(parsed.query, raw)
                if parsed.path.startswith("/respond/"):
                    fake._record(Call("response_url", {"id": parsed.path.rsplit("/", 1)[-1], **args}))
                    self._reply(200, {"ok": True})
                    return
                if not parsed.path.startswith("/api/"):
                    self._reply(404, {"ok": False, "error": "not_found"})
                    return
                method = parsed.path[len("/api/") :]
                auth = self.headers.get("Authorization", "")
                token = auth.removeprefix("Bearer ") if auth.startswith("Bearer ") else args.get("token")
                call = Call(method, args, token)
                with fake._lock:
                    if not token and method != "oauth.v2.access":
                        headers: dict[str, str] = {}
                        status, payload = 200, {"ok": False, "error": "not_authed"}
                    else:
                        status, payload, headers = fake.handle(method, args)
                fake._record(call)
                held = fake._held(method, args)
                if held is not None:  # done and visible; the caller waits for its answer
                    held.response = payload
                    held.arrived.set()
                    held.released.wait(held.timeout)
                self._reply(status, payload, headers)

            def _args(self, query: str, raw: bytes) -> dict[str, Any]:
                args: dict[str, Any] = {k: v[-1] for k, v in parse_qs(query).items()}
                ctype = self.headers.get("Content-Type", "")
                if raw and "json" in ctype:
                    args.update(json.loads(raw.decode("utf-8")))
                elif raw:
                    args.update({k: v[-1] for k, v in parse_qs(raw.decode("utf-8")).items()})
                for key in JSON_FIELDS:
                    if isinstance(args.get(key), str):
                        with contextlib.suppress(json.JSONDecodeError):
                            args[key] = json.loads(args[key])
                return args

        return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fake Slack Web API")
    parser.add_argument("--port", type=int, default=8766)
    args = parser.parse_args(argv)
    fake = FakeSlack(port=args.port)
    print(f"fake Slack API on {fake.base_url}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        fake._server.serve_forever()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
