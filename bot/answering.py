"""Answering one question in a Slack thread, from the 👀 reaction to the table, CSV and chart.

`start` runs on the listener thread right after the ack: it reacts, starts a thread when the
question has none (a root message saying who asked what, for `/ask` and "Ask again"), shows
progress (bot/slack_progress.py: the assistant status, else a streamed plan, else a status
message) and queues the work. `answer` runs on a worker: it resolves the database (the
conversation's, else the channel's `/ask db` choice, else the default), reads the thread's earlier
turns, asks the engine while progress names the current step, stores the turn, and posts the
outcome as a NEW message in the thread — edits do not notify, so the answer is never an edit of a
placeholder — then closes the progress (no "working…" message is left behind). Failures are
logged in full under the trace id; the person sees what went wrong in their terms
(bot/failures.py), with Retry only when trying again can help; configuration advice goes to the
admins (bot/admin_notes.py).
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass, replace
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import render
from bot.admin_notes import tell_admins
from bot.answer_view import example_question, presented
from bot.failures import INTERNAL, Failure, failure_of, setup_problem
from bot.private_results import direct_files_note, is_private, post_ephemeral, upload_to_asker
from bot.slack_context import BotContext
from bot.slack_files import result_files
from bot.slack_progress import Features, NoProgress, Place, Progress, open_progress, progress_ref
from bot.usergroups import UsergroupDirectory, slack_principal
from core.access import Principal
from core.answer import ErrorKind, Outcome
from core.clarify.transcript import Transcript
from core.database import UnknownDatabase, not_configured
from core.state import conversations
from core.state.channel_settings import channel_database
from core.summary import Presentation
from core.trace import Trace
from core.verified.analysts import configured as analysts_configured
from core.verified.analysts import is_analyst, needs_groups

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
    thread_ts: str | None  # the conversation's thread; None: a root message announcing it starts one
    message_ts: str | None = None  # the person's message, which gets the 👀 reaction
    announce: bool = False  # nobody sees the question otherwise (/ask): say who asked, broadcast the answer
    transcript: Transcript | None = None  # answers to clarifying questions so far (listeners/clarify.py)
    database: str | None = None  # asked about this database (e.g. "Ask again" from App Home)
    refresh: bool = False  # the Refresh button under a cached answer: ask anew, past the cache
    claim: str | None = None  # its claim (bot/claims.py): status recorded once posted, answered at the end
    private: bool = False  # only the asker sees the replies (bot/private_results.py)
    conversation_id: str | None = None  # a private /ask has no thread: a conversation of its own

    @property
    def conversation(self) -> str:
        return self.conversation_id or conversation_key(self.team, self.channel, self.thread_ts or "")

    @property
    def asked_by(self) -> str | None:
        return self.user if self.announce else None

    @property
    def place(self) -> Place:
        return Place(self.team, self.channel, self.thread_ts or "", self.user, self.question)


CONVERSATION_PREFIX = "slack:"  # every Slack conversation key starts so (a chat's clarifications sweep)


def conversation_key(team: str, channel: str, thread_ts: str) -> str:
    return f"{CONVERSATION_PREFIX}{team}:{channel}:{thread_ts}"


def features(ctx: BotContext) -> Features:
    """What each workspace refused (progress kinds, blocks), shared by every answer of this app."""
    found = ctx.extras.setdefault("features", Features())
    assert isinstance(found, Features)
    return found


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


def privately(ctx: BotContext, ask: Ask) -> Ask:
    """The ask as its channel wants it answered: in a private channel only the asker sees the
    replies; `/ask` there gets no root, and its conversation is its own (never another person's)."""
    if ask.private or not ask.user or not is_private(ctx.settings, ctx.state, ask.team, ask.channel):
        return ask
    own = (
        None
        if ask.thread_ts
        else f"{conversation_key(ask.team, ask.channel, '')}private:{uuid.uuid4().hex[:12]}"
    )
    return replace(ask, private=True, announce=False, conversation_id=ask.conversation_id or own)


def begin(ctx: BotContext, client: WebClient, ask: Ask) -> Ask | None:
    """React, and give the question a thread (a root saying who asked what, when it has none);
    the ask with its thread, or None when nothing could be posted there."""
    _react(client, True, ask.channel, ask.message_ts)
    if ask.thread_ts or ask.private:
        return ask
    root = render.announcement(ask.question, ask.user)
    try:
        posted = client.chat_postMessage(channel=ask.channel, text=root.text, blocks=root.blocks)
    except SlackApiError as exc:
        log.warning("could not post in %s: %s", ask.channel, exc.response.get("error"))
        _react(client, False, ask.channel, ask.message_ts)
        return None
    # posting to a user id lands in the app's DM with them: the thread lives in that D-channel
    return replace(ask, thread_ts=posted["ts"], channel=posted.get("channel") or ask.channel)


def start(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """Start answering `ask` in the background; False when nothing could be posted."""
    job = begin(ctx, client, privately(ctx, ask))
    if job is None:
        return False
    progress: Progress = NoProgress()  # in a private channel the 👀 alone says it is working
    if not job.private:
        stage = "understand" if ctx.pool.idle else "queued"
        progress = open_progress(client, job.place, features(ctx), stage, job.asked_by)
    if job.claim:  # a process that takes it over after a crash closes this progress first
        thread = f"{job.channel}:{job.thread_ts}" if job.thread_ts else None
        ctx.claims.answering(job.claim, status_ref=progress_ref(progress), thread_ref=thread)
    if not ctx.pool.submit(answer, ctx, client, job, progress):
        _fail(ctx, client, job, Failure(render.BUSY, retry=True, kind="busy"), "busy", progress=progress)
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


def asker_is_analyst(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """Whether the asker is one of `verified.analysts` (they may read table and column names)."""
    if not ask.user or not analysts_configured(ctx.settings):
        return False
    directory = usergroup_directory(ctx)
    groups = directory.groups_of(client, ask.team, ask.user) if needs_groups(ctx.settings) else frozenset()
    return is_analyst(ctx.settings, Principal.of(user=ask.user, channel=ask.channel, usergroups=groups))


def database_for(ctx: BotContext, ask: Ask) -> str:
    """The conversation's database, else the one asked about, else the channel's `/ask db` choice,
    else the default."""
    return (
        conversations.conversation_database(ctx.state, ask.conversation)
        or ask.database
        or channel_database(ctx.state, ask.team, ask.channel)
        or ctx.settings.default_db
    )


def answer(ctx: BotContext, client: WebClient, ask: Ask, progress: Progress | None = None) -> Outcome:
    """Worker thread: answer `ask` as a new message in its thread. Never raises."""
    progress = progress or NoProgress()
    engine_outcomes: list[Outcome] = []  # the engine audits what it answered; we audit the rest
    try:
        outcome = _answer(ctx, client, ask, engine_outcomes, progress)
    except Exception:
        trace = Trace(question=ask.question)
        log.exception("trace %s: answering in %s failed", trace.id, ask.channel)
        outcome = Outcome.failed(ask.question, "internal", INTERNAL, trace=trace)
        _record(ctx, ask, outcome, database=None)
        if not engine_outcomes:
            _audit(ctx, ask, outcome)
        _post_quietly(client, ask, render.outcome_message(outcome, asked_by=ask.asked_by))
        progress.done(ok=False)
    finally:
        progress.done(ok=True)  # already closed after the post; this only covers the unexpected
        _react(client, False, ask.channel, ask.message_ts)
        if ask.claim:
            ctx.claims.finished(ask.claim)
    return outcome


def _answer(
    ctx: BotContext, client: WebClient, ask: Ask, engine_outcomes: list[Outcome], progress: Progress
) -> Outcome:
    name = database_for(ctx, ask)
    try:
        db = ctx.askbase.database(name)
    except UnknownDatabase:
        gone = Outcome.failed(ask.question, "unknown_database", not_configured(name), database=name)
        return _fail(ctx, client, ask, failure_of(gone), "unknown_database", name, progress)
    conversations.ensure_conversation(
        ctx.state, ask.conversation, db.name, channel=ask.channel, user=ask.user
    )
    # Refresh repeats a question that was answered on its own (only those are cached): no history
    history = [] if ask.refresh else conversations.history(ctx.state, ask.conversation)
    outcome = ctx.askbase.ask(
        ask.question,
        db=db,
        history=history,
        on_stage=progress.show,
        source="slack",
        principal=principal_of(ctx, client, ask),  # the engine refuses (and audits) what it may not query
        transcript=ask.transcript,
        refresh=ask.refresh,
    )
    engine_outcomes.append(outcome)
    if outcome.status == "error":
        log.warning("trace %s: %s error: %s", outcome.trace.id, outcome.error_kind, outcome.error)
    conversations.record_turn(ctx.state, ask.conversation, outcome, user=ask.user)
    if outcome.status == "clarify":  # stored before it is shown, so the first click finds it
        for hook in ctx.extras.get("clarify_hooks", ()):
            hook(ctx, client, ask, outcome)
    deliver(ctx, client, ask, outcome, progress=progress)
    problem = setup_problem(outcome)
    if problem is not None:
        tell_admins(ctx, client, ask.team, problem, outcome.trace.id)
    for after in ctx.extras.get("answer_hooks", ()):  # e.g. tell verifiers of stale queries (verified.py)
        after(ctx, client, ask, outcome)
    return outcome


def styles_for(ctx: BotContext, team: str) -> list[render.Style]:
    """The message styles this workspace has not refused, richest first."""
    known = features(ctx)
    return [
        s
        for s in render.STYLES
        if known.works(team, f"table:{s.table}") and known.works(team, f"feedback:{s.feedback}")
    ] or [render.STYLES[-1]]


def _learn(ctx: BotContext, team: str, refused: list[render.Style], worked: render.Style) -> None:
    """A message went through in `worked` after the `refused` styles were rejected: a refused style
    that differs from it in one feature only tells that feature is what the workspace refuses."""
    known = features(ctx)
    for style in refused:
        differ = [
            name
            for name, mine, good in (
                ("table", style.table, worked.table),
                ("feedback", style.feedback, worked.feedback),
            )
            if mine != good
        ]
        if len(differ) == 1:
            known.refuse(team, f"{differ[0]}:{getattr(style, differ[0])}", "invalid_blocks")


def _post(client: WebClient, ask: Ask, message: render.Message, *, broadcast: bool = False) -> str | None:
    if ask.private and ask.user:
        return post_ephemeral(client, ask.channel, ask.user, message, ask.thread_ts)
    kwargs: dict[str, Any] = {"thread_ts": ask.thread_ts} if ask.thread_ts else {}
    if broadcast and ask.thread_ts:
        kwargs["reply_broadcast"] = True
    posted = client.chat_postMessage(channel=ask.channel, text=message.text, blocks=message.blocks, **kwargs)
    return posted.get("ts")


def deliver(
    ctx: BotContext,
    client: WebClient,
    ask: Ask,
    outcome: Outcome,
    *,
    failure: Failure | None = None,
    progress: Progress | None = None,
) -> str | None:
    """Post the outcome as a new message in the thread (broadcast to the channel for /ask), then
    close the progress; attach the CSV and chart of an answer. Returns the message's ts."""
    presentation: Presentation | None = None
    if outcome.status == "answer":
        presentation = presented(ctx.askbase, outcome)
    if outcome.status == "error":
        if failure is None:
            failure = failure_of(
                outcome,
                analyst=asker_is_analyst(ctx, client, ask),
                example=example_question(ctx.askbase, outcome.database),
            )
        message = render.error_message(
            failure,
            outcome.trace.id,
            question=outcome.question,
            asked_by=ask.asked_by,
            notes=outcome.notes,
        )
        ts = _post(client, ask, message, broadcast=ask.announce)
        message_with_csv = False
    else:
        styles = styles_for(ctx, ask.team)
        can_verify = analysts_configured(ctx.settings)  # ✅ Verify under answers (listeners/verified.py)
        ts, message_with_csv = None, False
        for i, style in enumerate(styles):
            message = render.outcome_message(
                outcome,
                table_rows=ctx.table_rows,
                asked_by=ask.asked_by,
                style=style,
                presentation=presentation,
                can_verify=can_verify,
            )
            try:
                ts = _post(client, ask, message, broadcast=ask.announce)
            except SlackApiError as exc:
                if exc.response.get("error") not in BLOCK_ERRORS or i == len(styles) - 1:
                    raise
                log.info(
                    "trace %s: %s refused (%s); trying %s",
                    outcome.trace.id,
                    style,
                    exc.response.get("error"),
                    styles[i + 1],
                )
                continue
            if i:
                _learn(ctx, ask.team, styles[:i], style)
            message_with_csv = message.wants_csv
            break
    if outcome.status == "clarify" and ts:  # the question's message shows its answer later
        for hook in ctx.extras.get("clarify_posted_hooks", ()):
            hook(ctx, client, outcome, ts)
    if progress is not None:
        progress.done(ok=outcome.status != "error")
    if outcome.status != "answer" or not outcome.rows:
        return ts
    files = result_files(outcome, with_csv=message_with_csv, presentation=presentation)
    if not files:
        return ts
    try:
        if ask.private and ask.user:  # files cannot be ephemeral: they go to the asker's DM
            upload_to_asker(client, ask.user, ask.channel, ask.question, files)
            direct_files_note(client, ask.channel, ask.user, ask.thread_ts)
        else:
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
    return ts


def _fail(
    ctx: BotContext,
    client: WebClient,
    ask: Ask,
    failure: Failure,
    kind: ErrorKind,
    database: str | None = None,
    progress: Progress | None = None,
) -> Outcome:
    """An error a person can act on, stored as a turn so Retry can find the question again."""
    outcome = Outcome.failed(ask.question, kind, failure.text, database=database or "")
    log.info("trace %s: %s: %s", outcome.trace.id, kind, failure.text)
    _record(ctx, ask, outcome, database)
    _audit(ctx, ask, outcome)
    try:
        deliver(ctx, client, ask, outcome, failure=failure, progress=progress)
    except Exception:
        log.exception("could not post an error in %s", ask.channel)
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


def _post_quietly(client: WebClient, ask: Ask, message: render.Message) -> None:
    try:
        _post(client, ask, message)
    except Exception:
        log.exception("could not post in %s", ask.channel)
