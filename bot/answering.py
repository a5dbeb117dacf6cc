"""Answering one question in a Slack thread, from the 👀 reaction to the table, CSV and chart.

`start` runs on the listener thread right after the ack: it reacts, posts a status message and
queues the work. `answer` runs on a worker: it resolves the database (the conversation's, else
the channel's `/ask db` choice, else the default), reads the thread's earlier turns, asks the
engine while the status message names the current stage, stores the turn, and replaces the status
message with the answer (or a clarifying question, or an error with a Retry button). Failures
are logged in full under the trace id; the person sees what failed and what to try.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import render
from bot.slack_context import BotContext
from bot.slack_files import result_files
from bot.usergroups import UsergroupDirectory, slack_principal
from core.access import Principal
from core.answer import ErrorKind, Outcome
from core.clarify.transcript import Transcript
from core.database import UnknownDatabase
from core.state import conversations
from core.state.channel_settings import channel_database
from core.trace import Trace

log = logging.getLogger(__name__)

THINKING = "eyes"
# Errors Slack gives when it will not take a block (e.g. a workspace without table blocks).
BLOCK_ERRORS = {"invalid_blocks", "invalid_blocks_format", "invalid_attachments", "invalid_arguments"}
NOT_EDITABLE = {"message_not_found", "cant_update_message", "edit_window_closed", "msg_too_long"}


@dataclass(frozen=True)
class Ask:
    question: str
    team: str
    channel: str
    user: str | None
    thread_ts: str | None  # the conversation's thread; None: our status message starts one (/ask)
    message_ts: str | None = None  # the person's message, which gets the 👀 reaction
    status_ts: str | None = None  # a message of ours to replace (Retry), instead of posting one
    announce: bool = False  # repeat "<@user> asked: …" (the question is not visible otherwise)
    transcript: Transcript | None = None  # answers to clarifying questions so far (listeners/clarify.py)
    claim: str | None = None  # its claim (bot/claims.py): status recorded once posted, answered at the end

    @property
    def conversation(self) -> str:
        return conversation_key(self.team, self.channel, self.thread_ts or "")

    @property
    def asked_by(self) -> str | None:
        return self.user if self.announce else None


def conversation_key(team: str, channel: str, thread_ts: str) -> str:
    return f"slack:{team}:{channel}:{thread_ts}"


def _react(client: WebClient, add: bool, channel: str, ts: str | None) -> None:
    if not ts:
        return
    try:
        if add:
            client.reactions_add(channel=channel, timestamp=ts, name=THINKING)
        else:
            client.reactions_remove(channel=channel, timestamp=ts, name=THINKING)
    except SlackApiError as exc:  # already_reacted, no_reaction, missing scope: cosmetic only
        log.debug("reaction %s on %s failed: %s", THINKING, ts, exc.response.get("error"))


def _show(client: WebClient, ask: Ask, message: render.Message) -> None:
    """Replace our status message; post in the thread instead when it cannot be edited."""
    if ask.status_ts:
        try:
            client.chat_update(
                channel=ask.channel, ts=ask.status_ts, text=message.text, blocks=message.blocks
            )
            return
        except SlackApiError as exc:
            if exc.response.get("error") not in NOT_EDITABLE:
                raise
            log.info("could not edit %s (%s); posting instead", ask.status_ts, exc.response.get("error"))
    kwargs: dict[str, Any] = {"thread_ts": ask.thread_ts} if ask.thread_ts else {}
    client.chat_postMessage(channel=ask.channel, text=message.text, blocks=message.blocks, **kwargs)


def _progress(client: WebClient, ask: Ask, message: render.Message) -> None:
    """Stage updates only edit the status message; they never add messages to the thread."""
    if ask.status_ts:
        client.chat_update(channel=ask.channel, ts=ask.status_ts, text=message.text, blocks=message.blocks)


def start(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """React, post the status message and queue the question; False when nothing could be posted."""
    _react(client, True, ask.channel, ask.message_ts)
    stage = "understand" if ctx.pool.idle else "queued"
    status = render.status_message(ask.question, stage, ask.asked_by)
    try:
        if ask.status_ts:
            _show(client, ask, status)
            job = ask
        else:
            kwargs: dict[str, Any] = {"thread_ts": ask.thread_ts} if ask.thread_ts else {}
            posted = client.chat_postMessage(
                channel=ask.channel, text=status.text, blocks=status.blocks, **kwargs
            )
            ts = posted.get("ts")
            job = replace(ask, status_ts=ts, thread_ts=ask.thread_ts or ts)
    except SlackApiError as exc:
        log.warning("could not post in %s: %s", ask.channel, exc.response.get("error"))
        _react(client, False, ask.channel, ask.message_ts)
        return False
    if job.claim:
        ctx.claims.answering(job.claim, job.status_ts, job.thread_ts)
    if not ctx.pool.submit(answer, ctx, client, job):
        _fail(ctx, client, job, render.BUSY, "busy")
        _react(client, False, job.channel, job.message_ts)
        if job.claim:
            ctx.claims.finished(job.claim)
    return True


def usergroup_directory(ctx: BotContext) -> UsergroupDirectory:
    """One cache of Slack user groups per app (see bot/usergroups.py)."""
    directory = ctx.extras.setdefault("usergroups", UsergroupDirectory())
    assert isinstance(directory, UsergroupDirectory)
    return directory


def principal_of(ctx: BotContext, client: WebClient, ask: Ask) -> Principal:
    """Who asks and where, with the user groups the access rules may name."""
    return slack_principal(
        ctx.settings,
        client,
        usergroup_directory(ctx),
        team=ask.team,
        channel=ask.channel,
        user=ask.user,
    )


def database_for(ctx: BotContext, ask: Ask) -> str:
    """The conversation's database, else the channel's `/ask db` choice, else the default."""
    return (
        conversations.conversation_database(ctx.state, ask.conversation)
        or channel_database(ctx.state, ask.team, ask.channel)
        or ctx.settings.default_db
    )


def answer(ctx: BotContext, client: WebClient, ask: Ask) -> Outcome:
    """Worker thread: answer `ask` into its status message. Never raises."""
    engine_outcomes: list[Outcome] = []  # the engine audits what it answered; we audit the rest
    try:
        outcome = _answer(ctx, client, ask, engine_outcomes)
    except Exception:
        trace = Trace(question=ask.question)
        log.exception("trace %s: answering in %s failed", trace.id, ask.channel)
        outcome = Outcome(
            status="error",
            question=ask.question,
            error=render.INTERNAL_ERROR,
            error_kind="internal",
            trace=trace,
        )
        _record(ctx, ask, outcome, database=None)
        if not engine_outcomes:
            _audit(ctx, ask, outcome)
        _show_quietly(client, ask, render.outcome_message(outcome, asked_by=ask.asked_by))
    finally:
        _react(client, False, ask.channel, ask.message_ts)
        if ask.claim:
            ctx.claims.finished(ask.claim)
    return outcome


def _answer(ctx: BotContext, client: WebClient, ask: Ask, engine_outcomes: list[Outcome]) -> Outcome:
    name = database_for(ctx, ask)
    try:
        db = ctx.askbase.database(name)
    except UnknownDatabase:
        return _fail(
            ctx,
            client,
            ask,
            f"The database '{name}' is not configured any more. Pick another one with `/ask db NAME`.",
            "database",
            database=name,
        )
    conversations.ensure_conversation(
        ctx.state, ask.conversation, db.name, channel=ask.channel, user=ask.user
    )
    history = conversations.history(ctx.state, ask.conversation)
    shown: list[str] = []

    def progress(stage: str) -> None:
        label = render.STAGE_LABELS.get(stage)
        if label is None or (shown and shown[-1] == label):
            return
        shown.append(label)
        try:
            _progress(client, ask, render.status_message(ask.question, stage, ask.asked_by))
        except SlackApiError as exc:  # progress is a courtesy; the answer still goes out
            log.info("status update failed: %s", exc.response.get("error"))

    outcome = ctx.askbase.ask(
        ask.question,
        db=db,
        history=history,
        on_stage=progress,
        source="slack",
        principal=principal_of(ctx, client, ask),  # the engine refuses (and audits) what it may not query
        transcript=ask.transcript,
    )
    engine_outcomes.append(outcome)
    if outcome.status == "error":
        log.warning("trace %s: %s error: %s", outcome.trace.id, outcome.error_kind, outcome.error)
    conversations.record_turn(ctx.state, ask.conversation, outcome, user=ask.user)
    if outcome.status == "clarify":  # stored before it is shown, so the first click finds it
        for hook in ctx.extras.get("clarify_hooks", ()):
            hook(ctx, client, ask, outcome)
    deliver(ctx, client, ask, outcome)
    return outcome


def deliver(ctx: BotContext, client: WebClient, ask: Ask, outcome: Outcome) -> None:
    """Replace the status message with the outcome; attach the CSV and chart of an answer."""
    message = render.outcome_message(outcome, table_rows=ctx.table_rows, asked_by=ask.asked_by)
    try:
        _show(client, ask, message)
    except SlackApiError as exc:
        if exc.response.get("error") not in BLOCK_ERRORS or outcome.status != "answer":
            raise
        log.info(
            "trace %s: table block refused (%s); sending monospace",
            outcome.trace.id,
            exc.response.get("error"),
        )
        message = render.answer_message(
            outcome, table_rows=ctx.table_rows, use_table=False, asked_by=ask.asked_by
        )
        _show(client, ask, message)
    if outcome.status != "answer" or not outcome.rows:
        return
    files = result_files(outcome, with_csv=message.wants_csv)
    if not files:
        return
    try:
        client.files_upload_v2(channel=ask.channel, thread_ts=ask.thread_ts, file_uploads=files)
    except Exception as exc:  # the answer is out already: never replace it with an error over files
        log.warning(
            "trace %s: file upload failed: %s",
            outcome.trace.id,
            exc,
            exc_info=not isinstance(exc, SlackApiError),
        )
        _post_quietly(
            client,
            ask,
            render.plain("I could not attach the files for this answer. Press CSV under it to try again."),
        )


def _fail(
    ctx: BotContext,
    client: WebClient,
    ask: Ask,
    error: str,
    kind: ErrorKind,
    database: str | None = None,
) -> Outcome:
    """An error a person can act on, stored as a turn so Retry can find the question again."""
    outcome = Outcome(
        status="error", question=ask.question, database=database or "", error=error, error_kind=kind
    )
    log.info("trace %s: %s: %s", outcome.trace.id, kind, error)
    _record(ctx, ask, outcome, database)
    _audit(ctx, ask, outcome)
    _show_quietly(client, ask, render.outcome_message(outcome, asked_by=ask.asked_by))
    return outcome


def _record(ctx: BotContext, ask: Ask, outcome: Outcome, database: str | None) -> None:
    try:
        conversations.ensure_conversation(
            ctx.state,
            ask.conversation,
            database or ctx.settings.default_db,
            channel=ask.channel,
            user=ask.user,
        )
        conversations.record_turn(ctx.state, ask.conversation, outcome, user=ask.user)
    except Exception:
        log.exception("trace %s: could not store the turn", outcome.trace.id)


def _audit(ctx: BotContext, ask: Ask, outcome: Outcome) -> None:
    """Questions the engine never saw (busy, unknown database, a crash) are audited too."""
    try:
        ctx.askbase.audit(outcome, source="slack", principal=Principal.of(ask.user, ask.channel))
    except Exception:
        log.exception("trace %s: could not audit", outcome.trace.id)


def _show_quietly(client: WebClient, ask: Ask, message: render.Message) -> None:
    try:
        _show(client, ask, message)
    except Exception:
        log.exception("could not show a message in %s", ask.channel)


def _post_quietly(client: WebClient, ask: Ask, message: render.Message) -> None:
    try:
        client.chat_postMessage(
            channel=ask.channel, thread_ts=ask.thread_ts, text=message.text, blocks=message.blocks
        )
    except Exception:
        log.exception("could not post in %s", ask.channel)
