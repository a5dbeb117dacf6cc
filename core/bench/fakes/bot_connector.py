"""A local Bot Connector service for tests and the load benchmark: the `serviceUrl` Teams activities name.

The adapter sends its replies, proactive posts and card updates here through the SDK's real
connector client, exactly as it would to Teams (`POST /v3/conversations/{id}/activities[/{replyTo}]`,
`PUT /v3/conversations/{id}/activities/{activityId}`). Every call is recorded with its bearer
token; messages are kept per conversation with their latest content (an update replaces it).
`GET /v3/conversations/{team id}/members/{user}` answers from `teams` (team id → member ids): the
member, or 404 — each lookup recorded in `lookups`.

`TeamsClient` plays Teams' side of the other direction: it posts activities (a message, a mention
in a channel, a card's button press) to the adapter's real `/api/messages`, optionally with a
bearer token.

Run standalone:  python -m core.bench.fakes.bot_connector --port 8767
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import unquote, urlparse

from core.bench.fakes.local_server import LocalServer, QuietHandler

CARD = "application/vnd.microsoft.card.adaptive"


@dataclass
class Call:
    method: str  # POST | PUT | DELETE
    path: str
    conversation: str
    activity_id: str | None  # the activity replied to or updated
    body: dict[str, Any]
    token: str | None
    at: float = field(default_factory=time.time)


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    """Every dict inside `node` (an activity, a card), depth first, each before what it holds."""
    if isinstance(node, dict):
        yield node
        for value in node.values():
            if isinstance(value, dict | list):
                yield from _dicts(value)
    elif isinstance(node, list):
        for item in node:
            yield from _dicts(item)


@dataclass
class Posted:
    """A message the bot posted, as a person in the conversation would see it now."""

    id: str
    conversation: str
    activity: dict[str, Any]
    reply_to: str | None = None
    updates: int = 0

    @property
    def type(self) -> str:
        return str(self.activity.get("type", ""))

    @property
    def cards(self) -> list[dict[str, Any]]:
        return [
            a.get("content") or {}
            for a in self.activity.get("attachments") or []
            if a.get("contentType") == CARD
        ]

    @property
    def card(self) -> dict[str, Any] | None:
        found = self.cards
        return found[0] if found else None

    def texts(self) -> list[str]:
        """Every text of the message and its cards (TextBlocks, titles, cells), in order."""
        return [
            node[key]
            for node in _dicts(self.activity)
            for key in ("text", "title", "altText")
            if isinstance(node.get(key), str)
        ]

    def all_text(self) -> str:
        return "\n".join(self.texts())

    def actions(self) -> list[dict[str, Any]]:
        """Every action of its cards, nested ones (inside Action.ShowCard, ActionSets) included."""
        return [
            node
            for content in self.cards
            for node in _dicts(content)
            if str(node.get("type", "")).startswith("Action.")
        ]

    def action(self, title: str) -> dict[str, Any] | None:
        return next((a for a in self.actions() if a.get("title") == title), None)

    def submits(self) -> list[dict[str, Any]]:
        return [a for a in self.actions() if a.get("type") == "Action.Submit"]

    def executes(self) -> list[dict[str, Any]]:
        """The Action.Execute buttons (answered with a card for the presser alone)."""
        return [a for a in self.actions() if a.get("type") == "Action.Execute"]

    @property
    def entities(self) -> list[dict[str, Any]]:
        return [e for e in self.activity.get("entities") or [] if isinstance(e, dict)]

    @property
    def ai_generated(self) -> bool:
        """Teams shows its "AI generated" label on it."""
        return any("AIGeneratedContent" in (e.get("additionalType") or []) for e in self.entities)

    @property
    def feedback_loop(self) -> bool:
        """Teams shows its own 👍 / 👎 under it."""
        data = self.activity.get("channelData") or {}
        return bool(data.get("feedbackLoop") or data.get("feedbackLoopEnabled"))

    def stream(self) -> dict[str, Any] | None:
        """Its streaminfo entity, when it is part of a stream."""
        return next((e for e in self.entities if e.get("type") == "streaminfo"), None)

    @property
    def is_answer(self) -> bool:
        """An answer card: it has the Show SQL toggle (a single value has no table)."""
        return self.action("Show SQL") is not None

    def sentence(self) -> str:
        """The answer's sentence (or a question's text): its first Medium TextBlock."""
        return next(
            (
                str(node["text"])
                for content in self.cards
                for node in _dicts(content.get("body") or [])
                if node.get("type") == "TextBlock" and node.get("size") == "Medium"
            ),
            "",
        )

    def table(self) -> list[list[str]]:
        for content in self.cards:
            stack: list[Any] = list(content.get("body") or [])
            while stack:
                node = stack.pop(0)
                if isinstance(node, dict):
                    if node.get("type") == "Table":
                        return [
                            [
                                " ".join(i.get("text", "") for i in c.get("items", []))
                                for c in r.get("cells", [])
                            ]
                            for r in node.get("rows", [])
                        ]
                    for key in ("items", "body", "columns"):
                        if isinstance(node.get(key), list):
                            stack.extend(node[key])
        return []


@dataclass
class FakeConnector(LocalServer):
    host: str = "127.0.0.1"
    port: int = 0
    calls: list[Call] = field(default_factory=list)
    messages: dict[str, Posted] = field(default_factory=dict)
    fail_next: dict[str, int] = field(default_factory=dict)  # method → HTTP status to answer once
    # Calls for which `hold` is true wait, unanswered, until `release()`: Teams being slow to
    # take a card, so what the adapter does before it has the card's id can be seen.
    hold: Callable[[Call], bool] | None = None
    held: list[Call] = field(default_factory=list)
    teams: dict[str, set[str]] = field(default_factory=dict)  # team id → its members' Entra ids
    lookups: list[tuple[str, str]] = field(default_factory=list)  # (team, user) asked about

    def __post_init__(self) -> None:
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._released = threading.Event()
        self._listen(self._handler())

    def release(self) -> None:
        """Answer the held calls (and hold none from now on)."""
        self.hold = None
        self._released.set()

    def _wait_if_held(self, call: Call) -> None:
        hold = self.hold
        if hold is None or not hold(call):
            return
        with self._changed:
            self.held.append(call)
            self._changed.notify_all()
        self._released.wait(30)

    @property
    def service_url(self) -> str:
        return f"http://{self.host}:{self.port}/"

    # ------------------------------------------------------------ reading what happened

    def in_conversation(self, conversation: str) -> list[Posted]:
        with self._lock:
            return [m for m in self.messages.values() if m.conversation == conversation]

    def wait_for(self, predicate: Callable[[FakeConnector], Any], timeout: float = 10.0) -> Any:
        deadline = time.monotonic() + timeout
        while True:
            found = predicate(self)
            if found:
                return found
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"timed out; calls so far: {[(c.method, c.path) for c in self.calls]}")
            with self._changed:
                self._changed.wait(min(left, 0.2))

    def card_in(
        self, conversation: str, predicate: Callable[[Posted], bool], timeout: float = 10.0
    ) -> Posted:
        found: Posted = self.wait_for(
            lambda c: next((m for m in c.in_conversation(conversation) if m.card and predicate(m)), None),
            timeout=timeout,
        )
        return found

    def typing_in(self, conversation: str) -> list[Call]:
        return [c for c in self.calls if c.conversation == conversation and c.body.get("type") == "typing"]

    # ------------------------------------------------------------ serving

    def _record(self, call: Call) -> tuple[int, dict[str, Any]]:
        with self._changed:
            self.calls.append(call)
            status = self.fail_next.pop(call.method, 0)
            if status:
                self._changed.notify_all()
                return status, {"error": {"code": "ServiceError", "message": "scripted failure"}}
            if call.method == "PUT" and call.activity_id:
                known = self.messages.get(call.activity_id)
                if known is None:
                    self._changed.notify_all()
                    return 404, {"error": {"code": "NotFound", "message": "no such activity"}}
                known.activity = call.body
                known.updates += 1
                self._changed.notify_all()
                return 200, {"id": call.activity_id}
            new_id = f"1{next(self._ids):012d}"
            if call.body.get("type", "message") != "typing":
                self.messages[new_id] = Posted(
                    new_id, call.conversation, call.body, reply_to=call.activity_id
                )
            self._changed.notify_all()
            return 201, {"id": new_id}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(QuietHandler):
            def _handle(self, method: str) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self.send_json(400, {"error": {"code": "BadSyntax", "message": "not JSON"}})
                    return
                parts = [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]
                if len(parts) < 4 or parts[:2] != ["v3", "conversations"] or parts[3] != "activities":
                    self.send_json(404, {"error": {"code": "NotFound", "message": self.path}})
                    return
                auth = self.headers.get("Authorization") or ""
                token = auth.split(" ", 1)[1] if auth.lower().startswith("bearer ") else None
                call = Call(method, self.path, parts[2], parts[4] if len(parts) > 4 else None, body, token)
                fake._wait_if_held(call)
                status, answer = fake._record(call)
                self.send_json(status, answer)

            def do_GET(self) -> None:
                parts = [unquote(p) for p in urlparse(self.path).path.strip("/").split("/")]
                if len(parts) != 5 or parts[:2] != ["v3", "conversations"] or parts[3] != "members":
                    self.send_json(404, {"error": {"code": "NotFound", "message": self.path}})
                    return
                team, user = parts[2], parts[4]
                with fake._changed:
                    fake.lookups.append((team, user))
                    member = user in fake.teams.get(team, set())
                if member:
                    self.send_json(200, {"id": f"29:{user}", "aadObjectId": user, "name": user})
                else:
                    self.send_json(404, {"error": {"code": "MemberNotFoundInConversation", "message": user}})

            def do_POST(self) -> None:
                self._handle("POST")

            def do_PUT(self) -> None:
                self._handle("PUT")

        return Handler


# ---------------------------------------------------------------- Teams' side


BOT_ID = "28:askbase-bot"
TENANT = "72f988bf-0000-4000-8000-000000000001"


@dataclass
class TeamsClient:
    """Posts activities to the adapter's `/api/messages`, as the Bot Connector does."""

    url: str  # http://127.0.0.1:PORT/api/messages
    service_url: str
    token: str | None = None

    def place(self, kind: str = "personal", conversation: str | None = None) -> dict[str, Any]:
        """A conversation and channelData: personal chat, group chat, or a channel thread."""
        if kind == "channel":
            channel = "19:general0123456789abcdef@thread.tacv2"
            post = conversation or f"{int(time.time() * 1000)}"
            return {
                "conversation": {
                    "id": f"{channel};messageid={post}",
                    "conversationType": "channel",
                    "isGroup": True,
                    "tenantId": TENANT,
                },
                "channelData": {
                    "team": {"id": "19:team0123456789abcdef@thread.tacv2"},
                    "channel": {"id": channel},
                    "tenant": {"id": TENANT},
                },
            }
        if kind == "groupChat":
            return {
                "conversation": {
                    "id": conversation or "19:groupchat0123456789abcdef@thread.v2",
                    "conversationType": "groupChat",
                    "isGroup": True,
                    "tenantId": TENANT,
                },
                "channelData": {"tenant": {"id": TENANT}},
            }
        return {
            "conversation": {
                "id": conversation or ("a:1" + "x" * 120),
                "conversationType": "personal",
                "tenantId": TENANT,
            },
            "channelData": {"tenant": {"id": TENANT}},
        }

    def activity(
        self,
        text: str | None = None,
        *,
        place: dict[str, Any] | None = None,
        user: str = "00000000-0000-4000-8000-00000000a11c",
        name: str = "Alice",
        mention: bool = False,
        value: dict[str, Any] | None = None,
        reply_to: str | None = None,
        activity_id: str | None = None,
        kind: str = "message",
        invoke_name: str | None = None,
    ) -> dict[str, Any]:
        where = place or self.place()
        body: dict[str, Any] = {
            "type": kind,
            "id": activity_id or f"{int(time.time() * 1000)}{uuid.uuid4().int % 10**6:06d}",
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime()),
            "serviceUrl": self.service_url,
            "channelId": "msteams",
            "from": {"id": f"29:{user}", "aadObjectId": user, "name": name},
            "recipient": {"id": BOT_ID, "name": "Askbase"},
            "locale": "en-US",
            "entities": [{"type": "clientInfo", "locale": "en-US", "timezone": "Europe/Berlin"}],
            **where,
        }
        if text is not None:
            body["text"] = f"<at>Askbase</at> {text}" if mention else text
            if mention:
                body["entities"].append(
                    {
                        "type": "mention",
                        "text": "<at>Askbase</at>",
                        "mentioned": {"id": BOT_ID, "name": "Askbase"},
                    }
                )
        if value is not None:
            body["value"] = value
        if reply_to:
            body["replyToId"] = reply_to
        if invoke_name:
            body["name"] = invoke_name
        return body

    def execute(
        self, action: dict[str, Any], inputs: dict[str, Any] | None = None, **kw: Any
    ) -> dict[str, Any]:
        """The invoke Teams sends when an Action.Execute is pressed (its data plus the card's inputs)."""
        value = {
            "action": {
                "type": "Action.Execute",
                "verb": action.get("verb"),
                "data": {**(action.get("data") or {}), **(inputs or {})},
            },
            "trigger": "manual",
        }
        return self.activity(None, value=value, kind="invoke", invoke_name="adaptiveCard/action", **kw)

    def feedback(self, reply_to: str, reaction: str, text: str = "", **kw: Any) -> dict[str, Any]:
        """What Teams sends when its own 👍 / 👎 under a message is used (the feedback loop)."""
        value = {
            "actionName": "feedback",
            "actionValue": {"reaction": reaction, "feedback": json.dumps({"feedbackText": text})},
        }
        return self.activity(
            None, value=value, kind="invoke", invoke_name="message/submitAction", reply_to=reply_to, **kw
        )

    def post(self, activity: dict[str, Any], token: str | None = None) -> tuple[int, bytes]:
        data = json.dumps(activity).encode()
        headers = {"Content-Type": "application/json"}
        bearer = token if token is not None else self.token
        if bearer:
            headers["Authorization"] = f"Bearer {bearer}"
        request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A local Bot Connector service that records replies.")
    parser.add_argument("--port", type=int, default=8767)
    args = parser.parse_args(argv)
    with FakeConnector(port=args.port) as fake:
        print(f"fake Bot Connector on {fake.service_url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
