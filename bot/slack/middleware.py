"""What every Slack request goes through once, before any listener (Bolt middleware, in this order):

1. `skip_replays` — each slash command and interaction runs once however often its signed
   request is replayed, each event other than a question once however often Slack redelivers it
   (a question is left to its claim, 3.);
2. `who_is_asking` — `context["asker"]`: who the request comes from, as the access rules and the
   analyst list see them (`Asker`). Their Slack user groups and email cost Slack calls, so they
   are read only when a listener asks, once per request (and cached per workspace);
3. `claim_questions` — a mention, a DM or a follow-up in one of our threads is read into an `Ask`
   and claimed in the state database (bot/slack/inflight.py) with what is needed to answer it
   again; `context["ask"]` carries the claimed ask to the listener. A delivery of a question that
   is answered, or being answered by a live process, or that is not a question (an edit, a bot's
   post, "thanks"), stops here: acknowledged, nothing run. When the state database cannot take
   it, the asker is told so — the one case a question is turned away; a burst is not: it waits
   in the claims and the answering queue (core/conversation/queue.py).

Events reach Bolt after their ack over HTTP (bot/slack/http_server.py), so nothing here delays
one; in Socket Mode the ack is Bolt's response, and waits for the claim (a late ack is retried by
Slack, and the retry finds the claim). `/ask QUESTION` is claimed by its listener after its ack
(the ack of a slash command carries its reply, and must not wait on the state database).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections.abc import Callable
from typing import Any

from slack_bolt import BoltContext, BoltRequest, BoltResponse
from slack_sdk import WebClient
from slack_sdk.webhook import WebhookClient

from bot.slack.ask import incoming_ask
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.inflight import STATE_TROUBLE, claim_question, message_key
from core.conversation.claims import StateUnavailable, first_delivery, first_request

log = logging.getLogger("askbase.slack")

QUESTION_EVENTS = {"message", "app_mention"}  # answered once by their claims (bot/slack/inflight.py)
Middleware = Callable[..., BoltResponse | None]


def who_is_asking(ctx: BotContext) -> Middleware:
    def middleware(context: BoltContext, client: WebClient, next: Callable[[], None]) -> None:
        context["asker"] = asker_at(ctx, client, context.team_id or "", context.channel_id, context.user_id)
        next()

    return middleware


def claim_questions(ctx: BotContext) -> Middleware:
    def middleware(
        body: dict[str, Any], context: BoltContext, client: WebClient, next: Callable[[], None]
    ) -> BoltResponse | None:
        event = body.get("event") or {}
        if body.get("type") != "event_callback" or event.get("type") not in QUESTION_EVENTS:
            next()
            return None
        ask = incoming_ask(ctx, body, context.bot_user_id)
        if ask is None:  # an edit, a join, a bot's post, a thank-you, someone else's thread
            return BoltResponse(status=200, body="")
        key = message_key(ask.team, ask.channel, ask.message_ts or "")
        claimed = claim_question(ctx, client, ask, key, delivery=body.get("event_id"))
        if claimed is None:
            return BoltResponse(status=200, body="")
        context["ask"] = claimed
        next()
        return None

    return middleware


def request_digest(request: BoltRequest) -> str:
    """What makes a signed request itself: its timestamp and its bytes (a replay repeats both)."""
    timestamp = (request.headers.get("x-slack-request-timestamp") or [""])[0]
    return hashlib.sha256(f"{timestamp}:{request.raw_body}".encode()).hexdigest()


def skip_replays(ctx: BotContext) -> Middleware:
    """Run each slash command and interaction once, however often its signed request is replayed,
    and each event other than a question once, however often Slack redelivers it.

    Slack never retries commands and interactions, so a second copy of the same signed bytes
    inside the signature's 5-minute window is a replay: acknowledged, not run (`/ask schedule`
    replayed must not make two schedules). The check writes to the state database, waiting at most
    `slack.state_wait_s`; past that the person is told the bot cannot take requests now, and
    nothing runs. Any other event (a panel opened, the Home tab) runs once per event id.
    """
    wait_s = ctx.settings.slack.state_wait_s

    def middleware(
        request: BoltRequest, body: dict[str, Any], next: Callable[[], None]
    ) -> BoltResponse | None:
        if body.get("type") == "event_callback":
            event_id = body.get("event_id")
            if not event_id or (body.get("event") or {}).get("type") in QUESTION_EVENTS:
                next()
                return None
            try:
                first = first_delivery(ctx.state, event_id, wait_s)
            except StateUnavailable as exc:  # a greeting twice beats none
                log.warning("event %s not checked for redelivery: %s", event_id, exc)
                first = True
            if not first:
                log.info("event %s already handled; acknowledged only", event_id)
                return BoltResponse(status=200, body="")
            next()
            return None
        if request.mode == "socket_mode" or body.get("type") == "url_verification":
            next()
            return None
        digest = request_digest(request)
        try:
            first = first_request(ctx.state, digest, wait_s)
        except StateUnavailable as exc:
            log.warning("request %s… not run: %s", digest[:12], exc)
            return _state_trouble(body)
        if not first:
            log.info("replayed request %s… acknowledged only", digest[:12])
            return BoltResponse(status=200, body="")
        next()
        return None

    return middleware


def _state_trouble(body: dict[str, Any]) -> BoltResponse:
    """A slash command shows the ack's text to its sender; a click hears back through its response_url."""
    if body.get("command"):
        reply = {"response_type": "ephemeral", "text": STATE_TROUBLE}
        return BoltResponse(status=200, body=json.dumps(reply), headers={"content-type": "application/json"})
    response_url = body.get("response_url")
    if isinstance(response_url, str) and response_url:

        def tell() -> None:
            try:
                WebhookClient(response_url, timeout=5).send(
                    text=STATE_TROUBLE, response_type="ephemeral", replace_original=False
                )
            except Exception as exc:  # the person clicked; nothing else depends on this message
                log.info("could not send the state-trouble note: %s", type(exc).__name__)

        threading.Thread(target=tell, name="askbase-state-note", daemon=True).start()
    return BoltResponse(status=200, body="")


def install(app: Any, ctx: BotContext) -> None:
    """The middleware above, in its order, once for the whole app."""
    app.use(skip_replays(ctx))
    app.use(who_is_asking(ctx))
    app.use(claim_questions(ctx))
