"""Signed requests to a running Bolt HTTP endpoint, shaped like the ones Slack sends.

Signatures follow Slack's v0 scheme: HMAC-SHA256 over `v0:{timestamp}:{raw body}` with the
signing secret, sent as X-Slack-Signature with X-Slack-Request-Timestamp. Events are JSON;
slash commands and interactivity are form-encoded (interactivity as a `payload` JSON field).
"""

from __future__ import annotations

import hashlib
import hmac
import itertools
import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

SIGNING_SECRET = "test-signing-secret"
BOT_TOKEN = "xoxb-test-token"


def signature(secret: str, timestamp: str, body: str) -> str:
    digest = hmac.new(secret.encode(), f"v0:{timestamp}:{body}".encode(), hashlib.sha256).hexdigest()
    return f"v0={digest}"


@dataclass
class Response:
    status: int
    body: str

    def json(self) -> Any:
        return json.loads(self.body) if self.body else None


@dataclass
class SlackSender:
    url: str  # http://127.0.0.1:PORT/slack/events
    secret: str = SIGNING_SECRET
    team: str = "T0001"
    api_app_id: str = "A0001"
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def next_ts(self) -> str:
        n = next(self._ids)
        return f"{1800000000 + n}.{n:06d}"

    def post(
        self,
        body: str,
        content_type: str,
        *,
        signed: bool = True,
        secret: str | None = None,
        timestamp: int | None = None,
        headers: dict[str, str] | None = None,
    ) -> Response:
        ts = str(int(time.time()) if timestamp is None else timestamp)
        all_headers = {"Content-Type": content_type, **(headers or {})}
        if signed:
            all_headers["X-Slack-Request-Timestamp"] = ts
            all_headers["X-Slack-Signature"] = signature(secret or self.secret, ts, body)
        request = urllib.request.Request(self.url, data=body.encode(), headers=all_headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=10) as resp:
                return Response(resp.status, resp.read().decode())
        except urllib.error.HTTPError as err:
            return Response(err.code, err.read().decode())

    # ------------------------------------------------------------ events

    def event(
        self, event: dict[str, Any], *, event_id: str | None = None, retry_num: int | None = None, **kw: Any
    ) -> Response:
        body = {
            "token": "legacy-verification-token",
            "team_id": self.team,
            "api_app_id": self.api_app_id,
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._ids):08d}",
            "event_time": int(time.time()),
            "authorizations": [{"team_id": self.team, "user_id": "UBOT", "is_bot": True}],
            "event": event,
        }
        headers = dict(kw.pop("headers", None) or {})
        if retry_num is not None:
            headers["X-Slack-Retry-Num"] = str(retry_num)
            headers["X-Slack-Retry-Reason"] = "http_timeout"
        return self.post(json.dumps(body), "application/json", headers=headers, **kw)

    def mention(
        self,
        text: str,
        *,
        channel: str = "C0001",
        user: str = "U0001",
        ts: str | None = None,
        thread_ts: str | None = None,
        bot_user_id: str = "UBOT",
        **kw: Any,
    ) -> tuple[Response, str]:
        ts = ts or self.next_ts()
        event = {
            "type": "app_mention",
            "user": user,
            "text": f"<@{bot_user_id}> {text}",
            "ts": ts,
            "channel": channel,
            "event_ts": ts,
            "team": self.team,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return self.event(event, **kw), ts

    def message(
        self,
        text: str,
        *,
        channel: str = "D0001",
        user: str = "U0001",
        channel_type: str = "im",
        ts: str | None = None,
        thread_ts: str | None = None,
        **kw: Any,
    ) -> tuple[Response, str]:
        ts = ts or self.next_ts()
        event = {
            "type": "message",
            "user": user,
            "text": text,
            "ts": ts,
            "channel": channel,
            "channel_type": channel_type,
            "event_ts": ts,
            "team": self.team,
        }
        if thread_ts:
            event["thread_ts"] = thread_ts
        return self.event(event, **kw), ts

    # ------------------------------------------------------------ commands and interactivity

    def command(
        self,
        text: str,
        *,
        channel: str = "C0001",
        user: str = "U0001",
        response_url: str = "http://127.0.0.1:9/respond",
        command: str = "/ask",
        **kw: Any,
    ) -> Response:
        form = {
            "token": "legacy-verification-token",
            "team_id": self.team,
            "team_domain": "askbase-test",
            "channel_id": channel,
            "channel_name": "general",
            "user_id": user,
            "user_name": user.lower(),
            "command": command,
            "text": text,
            "api_app_id": self.api_app_id,
            "response_url": response_url,
            "trigger_id": f"trigger.{next(self._ids)}",
        }
        return self.post(urlencode(form), "application/x-www-form-urlencoded", **kw)

    def interaction(self, payload: dict[str, Any], **kw: Any) -> Response:
        return self.post(
            urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded", **kw
        )

    def click(
        self,
        action_id: str,
        value: str,
        *,
        channel: str,
        message_ts: str,
        thread_ts: str | None = None,
        user: str = "U0001",
        blocks: list[dict[str, Any]] | None = None,
        action_type: str = "button",
        **kw: Any,
    ) -> Response:
        """A click on a message's element; `blocks` are the message's blocks, as Slack sends them."""
        container = {
            "type": "message",
            "message_ts": message_ts,
            "channel_id": channel,
            "is_ephemeral": False,
        }
        message: dict[str, Any] = {"type": "message", "ts": message_ts, "user": "UBOT", "text": ""}
        if blocks is not None:
            message["blocks"] = blocks
        if thread_ts:
            container["thread_ts"] = thread_ts
            message["thread_ts"] = thread_ts
        payload = {
            "type": "block_actions",
            "user": {"id": user, "username": user.lower(), "team_id": self.team},
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "container": container,
            "trigger_id": f"trigger.{next(self._ids)}",
            "team": {"id": self.team, "domain": "askbase-test"},
            "channel": {"id": channel, "name": "general"},
            "message": message,
            "response_url": "http://127.0.0.1:9/respond",
            "actions": [
                {
                    "type": action_type,
                    "action_id": action_id,
                    "block_id": "b1",
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        return self.interaction(payload, **kw)

    def view(
        self,
        kind: str,
        callback_id: str,
        *,
        private_metadata: str = "",
        values: dict[str, Any] | None = None,
        user: str = "U0001",
        **kw: Any,
    ) -> Response:
        """A view_submission or view_closed of a modal we opened."""
        payload = {
            "type": kind,
            "team": {"id": self.team, "domain": "askbase-test"},
            "user": {"id": user, "username": user.lower(), "team_id": self.team},
            "api_app_id": self.api_app_id,
            "token": "legacy-verification-token",
            "trigger_id": f"trigger.{next(self._ids)}",
            "view": {
                "id": "V0001",
                "type": "modal",
                "callback_id": callback_id,
                "private_metadata": private_metadata,
                "state": {"values": values or {}},
                "team_id": self.team,
                "app_id": self.api_app_id,
            },
            "is_cleared": False,
        }
        return self.interaction(payload, **kw)
