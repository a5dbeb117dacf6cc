"""No lost questions: claiming a Slack question as it arrives, and finishing the ones a dead process left.

`claim_question` runs right after the ack (never before it: the ack does not wait on the state
database). It claims the question (core/conversation/claims.py) with what is needed to answer it again later;
a question that is answered, or being answered by a live process, is dropped; one whose process
died is taken over: the progress it left in the thread (a status message, a streamed plan) is
closed, and the answer comes as usual, a new message in the same thread. When the state database
does not answer in time, the asker gets one ephemeral message saying so and nothing else happens.

`recover` is the sweep every process runs at start and then once per lease: each claim whose
lease ran out is taken over (one process wins) and finished — or, when it is older than
`slack.recover_within_s` or has already been taken over `claims.MAX_ATTEMPTS` times (a question that
kills the process must not kill every process in turn), apologised for in its thread.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.answering import THINKING, start
from bot.slack.ask import Ask
from bot.slack.context import BotContext
from core.clarify.transcript import Transcript
from core.conversation import claims
from core.conversation.claims import Claim, StateUnavailable
from core.request import MAX_QUESTION_CHARS, preview

log = logging.getLogger(__name__)

STATE_TROUBLE = (
    "I can't take questions right now: my own database (where I keep conversations) is not "
    "responding. Nothing was run. Please ask again in a few minutes."
)
INTERRUPTED = (
    ":warning: Sorry — I was restarted while answering this and could not finish it in time. "
    "Please ask it again."
)

ClientFor = Callable[[str], WebClient | None]  # a team's client (None: the workspace is gone)


def message_key(team: str, channel: str, ts: str) -> str:
    """One claim per Slack message, whichever event (app_mention, message, a retry) brings it."""
    return f"msg:{team}:{channel}:{ts}"


def payload_of(ask: Ask) -> dict[str, Any]:
    """What is stored with a claim to answer it after a crash. An oversize question is refused and
    dropped: only a preview is kept, and it is marked so recovery does not answer the preview."""
    oversize = len(ask.question) > MAX_QUESTION_CHARS
    return {
        "question": preview(ask.question) if oversize else ask.question,
        "oversize": oversize,
        "team": ask.team,
        "channel": ask.channel,
        "user": ask.user,
        "thread_ts": ask.thread_ts,
        "message_ts": ask.message_ts,
        "announce": ask.announce,
        "transcript": ask.transcript.to_json() if ask.transcript else None,
        "database": ask.database,
    }


def ask_of(payload: Mapping[str, Any] | None, key: str) -> Ask | None:
    if not payload or not payload.get("channel") or payload.get("oversize"):
        return None
    transcript = payload.get("transcript")
    return Ask(
        question=str(payload.get("question") or ""),
        team=str(payload.get("team") or ""),
        channel=str(payload["channel"]),
        user=payload.get("user"),
        thread_ts=payload.get("thread_ts"),
        message_ts=payload.get("message_ts"),
        announce=bool(payload.get("announce")),
        transcript=Transcript.from_json(transcript) if transcript else None,
        database=payload.get("database"),
        claim=key,
    )


def _in_thread(ask: Ask, thread_ref: str | None) -> Ask:
    """The ask in the thread its first process recorded (`channel:ts`: /ask made a thread of its own,
    possibly in a DM channel), so the answer lands where the question's progress was."""
    if not thread_ref or ":" not in thread_ref:
        return ask
    channel, thread_ts = thread_ref.split(":", 1)
    return replace(ask, channel=channel or ask.channel, thread_ts=ask.thread_ts or thread_ts)


def close_stale(client: WebClient, channel: str, status_ref: str | None) -> None:
    """Close what a dead process left showing: delete its status message, stop its streamed plan.
    (An assistant status needs nothing: the answer posted in the thread clears it.)"""
    if not status_ref or ":" not in status_ref:
        return
    kind, ts = status_ref.split(":", 1)
    try:
        if kind == "message":
            client.chat_delete(channel=channel, ts=ts)
        elif kind == "stream":
            client.chat_stopStream(channel=channel, ts=ts)
    except SlackApiError as exc:  # gone already, or not ours to change: the answer still comes
        log.info("could not close the stale progress %s: %s", status_ref, exc.response.get("error"))


def claim_question(
    ctx: BotContext, client: WebClient, ask: Ask, key: str, *, delivery: str | None = None
) -> Ask | None:
    """`ask` holding its claim (with the stale status message to replace after a takeover), or
    None when it must not be answered here: answered, held by a live process, or no state DB."""
    try:
        claim = ctx.claims.take(key, payload=payload_of(ask), delivery=delivery)
    except StateUnavailable as exc:
        log.warning("question %s not taken: %s", key, exc)
        tell_state_trouble(client, ask)
        return None
    if claim is None:
        log.info("question %s is answered or being answered; this delivery is only acknowledged", key)
        return None
    if claim.taken_over:
        log.info("taking over question %s (attempt %d) from a process that stopped", key, claim.attempts)
        ask = _in_thread(ask, claim.thread_ref)
        close_stale(client, ask.channel, claim.status_ref)
    return replace(ask, claim=key)


def tell_state_trouble(client: WebClient, ask: Ask) -> None:
    """The one message the asker gets when the state database is down: only to them."""
    thread = ask.thread_ts or ask.message_ts
    try:
        if ask.user:
            client.chat_postEphemeral(
                channel=ask.channel,
                user=ask.user,
                text=STATE_TROUBLE,
                thread_ts=thread,
            )
        else:
            client.chat_postMessage(channel=ask.channel, text=STATE_TROUBLE, thread_ts=thread)
    except SlackApiError as exc:
        log.warning("could not tell %s about the state database: %s", ask.channel, exc.response.get("error"))


# ---------------------------------------------------------------- recovery

PREFIXES = ("msg:", "cmd:")  # Slack's claim keys (message_key; slash commands in listeners/questions.py)


def recover(ctx: BotContext, client_for: ClientFor, *, now: dt.datetime | None = None) -> int:
    """Finish or apologise for Slack questions whose process stopped answering (core/conversation/claims.py
    `recover`); how many were handled."""

    def resume(claim: Claim, apologise: bool) -> bool:
        ask = ask_of(claim.payload, claim.key)
        client = client_for(ask.team) if ask is not None else None
        if ask is None or client is None:
            log.warning("question %s cannot be answered again (nothing to answer with); dropped", claim.key)
            return False
        ask = _in_thread(ask, claim.thread_ref)
        close_stale(client, ask.channel, claim.status_ref)
        if apologise:
            _apologise(client, ask)
            return False
        return start(ctx, client, ask)

    return claims.recover(ctx.claims, PREFIXES, ctx.settings.slack.recover_within_s, resume, now=now)


def recovery(ctx: BotContext, client_for: ClientFor) -> claims.Recovery:
    """The sweep at start and then every half lease, on a daemon thread."""
    return claims.Recovery(lambda: recover(ctx, client_for), ctx.claims.lease_s)


def _apologise(client: WebClient, ask: Ask) -> None:
    """A new message in the question's thread (or, with no thread yet, in the channel to the asker)."""
    message = render.plain(INTERRUPTED)
    try:
        if ask.thread_ts or not ask.user:
            client.chat_postMessage(
                channel=ask.channel, thread_ts=ask.thread_ts, text=message.text, blocks=message.blocks
            )
        else:
            client.chat_postMessage(channel=ask.channel, text=f"<@{ask.user}> {INTERRUPTED}")
        if ask.message_ts:
            client.reactions_remove(channel=ask.channel, timestamp=ask.message_ts, name=THINKING)
    except SlackApiError as exc:
        log.warning("could not apologise in %s: %s", ask.channel, exc.response.get("error"))
