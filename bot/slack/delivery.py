"""An outcome posted in Slack: a NEW message in the question's thread, never an edit of a
placeholder (edits do not notify), then the progress closed and the CSV and chart attached.

A workspace that refuses a block style (table blocks, feedback buttons) is remembered per team
(`features`, bot/slack/progress.py), so the next answer starts at a style that works there; a
refused style that differs from the accepted one in one feature tells which feature it was. In a
private channel every reply is ephemeral and the files go to the asker's DM
(bot/slack/private_results.py).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import example_question, presented
from bot.failures import Failure, failure_of
from bot.slack import render
from bot.slack.ask import Ask
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.files import result_files
from bot.slack.private_results import direct_files_note, post_ephemeral, upload_to_asker
from bot.slack.progress import Features, Progress
from core.answer import Outcome
from core.summary import Presentation
from core.verified.analysts import configured as analysts_configured

log = logging.getLogger(__name__)

# Errors Slack gives when it will not take a block (e.g. a workspace without table blocks).
BLOCK_ERRORS = {"invalid_blocks", "invalid_blocks_format", "invalid_attachments", "invalid_arguments"}
NOT_EDITABLE = {"message_not_found", "cant_update_message", "edit_window_closed", "msg_too_long"}


def features(ctx: BotContext) -> Features:
    """What each workspace refused (progress kinds, blocks), shared by every answer of this app."""
    found = ctx.extras.setdefault("features", Features())
    assert isinstance(found, Features)
    return found


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


def post(client: WebClient, ask: Ask, message: render.Message, *, broadcast: bool = False) -> str | None:
    if ask.private and ask.user:
        return post_ephemeral(client, ask.channel, ask.user, message, ask.thread_ts)
    kwargs: dict[str, Any] = {"thread_ts": ask.thread_ts} if ask.thread_ts else {}
    if broadcast and ask.thread_ts:
        kwargs["reply_broadcast"] = True
    posted = client.chat_postMessage(channel=ask.channel, text=message.text, blocks=message.blocks, **kwargs)
    return posted.get("ts")


def post_quietly(client: WebClient, ask: Ask, message: render.Message) -> None:
    try:
        post(client, ask, message)
    except Exception:
        log.exception("could not post in %s", ask.channel)


def _post_answer(
    ctx: BotContext, client: WebClient, ask: Ask, outcome: Outcome, presentation: Presentation | None
) -> tuple[str | None, bool]:
    """Post an answer or a clarifying question in the richest style the workspace takes;
    (its ts, whether the message asks for the CSV file)."""
    styles = styles_for(ctx, ask.team)
    can_verify = analysts_configured(ctx.settings)  # ✅ Verify under answers (listeners/verified.py)
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
            ts = post(client, ask, message, broadcast=ask.announce)
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
        return ts, message.wants_csv
    return None, False


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
    presentation = presented(ctx.askbase, outcome) if outcome.status == "answer" else None
    with_csv = False
    if outcome.status == "error":
        if failure is None:
            failure = failure_of(
                outcome,
                analyst=asker_at(ctx, client, ask.team, ask.channel, ask.user).analyst,
                example=example_question(ctx.askbase, outcome.database),
            )
        message = render.error_message(
            failure, outcome.trace.id, question=outcome.question, asked_by=ask.asked_by, notes=outcome.notes
        )
        ts = post(client, ask, message, broadcast=ask.announce)
    else:
        ts, with_csv = _post_answer(ctx, client, ask, outcome, presentation)
    if outcome.status == "clarify" and ts:  # the question's message shows its answer later
        for hook in ctx.extras.get("clarify_posted_hooks", ()):
            hook(ctx, client, outcome, ts)
    if progress is not None:
        progress.done(ok=outcome.status != "error")
    if outcome.status == "answer" and outcome.rows:
        _attach(client, ask, outcome, with_csv, presentation)
    return ts


def _attach(
    client: WebClient, ask: Ask, outcome: Outcome, with_csv: bool, presentation: Presentation | None
) -> None:
    """The CSV and chart of an answer, under it (in a private channel: in the asker's DM)."""
    files = result_files(outcome, with_csv=with_csv, presentation=presentation)
    if not files:
        return
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
        post_quietly(
            client,
            ask,
            render.plain("I could not attach the files for this answer. Press CSV under it to try again."),
        )
