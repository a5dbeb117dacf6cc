"""The buttons under an answer: Show SQL, Details, CSV, 👍 / 👎 (Slack's feedback buttons, or
plain buttons where a workspace lacks them; 👎 opens a modal), Retry.

Every button carries the answer's trace id; what it needs (question, SQL, database, trace) is read
back from the state database, so a click works after a restart and on any web process. A 👍
teaches (the answer becomes an example) only when an analyst gives it; anyone else's is feedback
the analysts review (core/conversation/votes.py). A vote is acknowledged on the answer itself ("👍 @ana
(analyst) confirmed this answer", "👍 @bob found this answer right"), so everyone in the thread
sees it, and the voter also gets a note only they see.
"""

from __future__ import annotations

import json
import logging
import tempfile
from pathlib import Path
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import catalog_of, slug
from bot.slack import render
from bot.slack.answering import start
from bot.slack.ask import Ask
from bot.slack.asker import Asker, asker_at, asker_of
from bot.slack.context import BotContext
from bot.slack.ephemeral import clicking_user, tell
from bot.slack.private_results import direct_thread, is_private
from core.conversation.votes import vote_note
from core.result_shape import result_shape
from core.summary import round_csv_file

log = logging.getLogger(__name__)


def _where(body: dict[str, Any]) -> tuple[str, str | None, str | None]:
    """(channel, message ts, thread ts) of the message whose button was clicked."""
    container = body.get("container") or {}
    message = body.get("message") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id", "")
    message_ts = container.get("message_ts") or message.get("ts")
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    return channel, message_ts, thread_ts


def on_thumbs_down(
    ctx: BotContext, trace_id: str, user: str | None, comment: str = "", client: WebClient | None = None
) -> None:
    """Record a 👎 (with what was wrong, when given); then ask back about the rejected answer
    (Sphinteract asks after a rejected answer; bot/slack/listeners/clarify.py)."""
    ctx.conversations.vote_down(trace_id, user, comment)
    for hook in ctx.extras.get("thumbs_down_hooks", ()):
        if client is not None:
            hook(ctx, client, trace_id, user, comment.strip())


def send_csv(
    ctx: BotContext,
    client: WebClient,
    trace_id: str,
    channel: str,
    thread_ts: str | None,
    user: str | None,
    team: str = "",
) -> None:
    """Worker: run the stored, guarded query again straight into a CSV file and upload it."""
    turn = ctx.conversations.turn(trace_id)
    if turn is None or not turn.answered:
        tell(client, channel, user, thread_ts=thread_ts, text="There is no result to export on this message.")
        return
    who = asker_at(ctx, client, team, channel, user).principal
    with tempfile.TemporaryDirectory(prefix="askbase-csv-") as tmp:
        path = Path(tmp) / f"{slug(turn.question)}-{trace_id}.csv"
        export = ctx.askbase.rerun(
            turn.sql,
            database=turn.database,
            principal=who,
            purpose="csv",
            question=turn.question,
            csv_path=path,
        )
        if export.status != "answer" or export.exported_rows is None:
            log.warning("trace %s: export failed (%s): %s", trace_id, export.error_kind, export.error)
            if export.error_kind == "access":  # whoever clicks must be allowed too
                text = f"You may not query '{render.escape(turn.database)}' here."
            elif export.error_kind in ("guard", "database", "unknown_database"):
                text = "I can't export this result any more; ask the question again."
            else:
                text = "The database did not answer the export. Try again in a minute."
            tell(client, channel, user, thread_ts=thread_ts, text=text)
            return
        try:  # rounded as the answer's table is (core/summary.py)
            round_csv_file(path, result_shape(turn.sql, turn.columns, catalog_of(ctx.askbase, turn.database)))
        except Exception:  # the file as the database wrote it is still right, only less tidy
            log.exception("trace %s: could not round the CSV", trace_id)
        count, truncated = export.exported_rows, export.truncated
        cut = " (cut at the row cap)" if truncated else ""
        if user and is_private(ctx.settings, ctx.conversations, team, channel):  # files cannot be ephemeral
            channel, thread_ts = direct_thread(client, user, channel, turn.question)
        client.files_upload_v2(
            channel=channel,
            thread_ts=thread_ts,
            file=str(path),
            filename=path.name,
            title=f"{turn.question[:200]} ({count:,} rows{cut})",
        )


def acknowledge_vote(client: WebClient, body: dict[str, Any], trace_id: str, note: str) -> bool:
    """Show who voted what on the answer itself (the blocks come with the click); False when the
    message cannot be changed (an ephemeral one, or no blocks in the payload)."""
    channel, message_ts, _ = _where(body)
    message = body.get("message") or {}
    blocks = message.get("blocks")
    if not channel or not message_ts or not blocks or (body.get("container") or {}).get("is_ephemeral"):
        return False
    try:
        client.chat_update(
            channel=channel,
            ts=message_ts,
            text=message.get("text") or note,
            blocks=render.with_vote(blocks, note, trace_id),
        )
        return True
    except SlackApiError as exc:
        log.info("could not show the vote on %s: %s", message_ts, exc.response.get("error"))
        return False


def vote_up(ctx: BotContext, client: WebClient, body: dict[str, Any], trace_id: str, asker: Asker) -> str:
    """👍: an analyst's teaches (an example); anyone else's is feedback the analysts review.
    Returns what it did (for logs and tests)."""
    channel, _, thread_ts = _where(body)
    user = clicking_user(body)
    vote, note = ctx.conversations.vote_up(trace_id, asker.principal)
    if vote.status != "nothing":
        acknowledge_vote(client, body, trace_id, vote_note(vote, f"<@{user}>"))  # no data in it
    tell(client, channel, user, thread_ts=thread_ts, text=note)
    return vote.status


def vote_down(ctx: BotContext, client: WebClient, body: dict[str, Any], trace_id: str) -> None:
    """👎: the modal asks what was wrong; without one the vote counts as it is."""
    channel, message_ts, thread_ts = _where(body)
    user = clicking_user(body)
    acknowledge_vote(client, body, trace_id, f":thumbsdown: <@{user}> said this answer is wrong.")
    metadata = {"t": trace_id, "c": channel, "th": thread_ts or message_ts or ""}
    if not _open(client, body.get("trigger_id"), render.feedback_modal(metadata)):
        on_thumbs_down(ctx, trace_id, user, client=client)
        tell(client, channel, user, thread_ts=thread_ts, text="Thanks — noted that this answer is wrong.")


def _open(client: WebClient, trigger_id: str | None, view: dict[str, Any]) -> bool:
    if not trigger_id:
        return False
    try:
        client.views_open(trigger_id=trigger_id, view=view)
        return True
    except SlackApiError as exc:
        log.info("views.open failed: %s", exc.response.get("error"))
        return False


def register(app: App, ctx: BotContext) -> None:
    @app.action("show_sql")
    def show_sql(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        trace_id = action.get("value", "")
        turn = ctx.conversations.turn(trace_id)
        _open(client, body.get("trigger_id"), render.sql_modal(turn.sql if turn else "", trace_id))

    @app.action("show_details")
    def show_details(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        trace = ctx.conversations.trace(action.get("value", ""))
        if trace is None:
            channel, _, thread_ts = _where(body)
            tell(
                client,
                channel,
                clicking_user(body),
                thread_ts=thread_ts,
                text="I no longer have the details of this answer.",
            )
            return
        _open(client, body.get("trigger_id"), render.trace_modal(trace))

    @app.action("get_csv")
    def get_csv(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        channel, message_ts, thread_ts = _where(body)
        team = (body.get("team") or {}).get("id") or ""
        ctx.queue.put(
            send_csv,
            ctx,
            client,
            action.get("value", ""),
            channel,
            thread_ts or message_ts,
            clicking_user(body),
            team,
        )

    @app.action("feedback")
    def feedback_buttons(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        """Slack's feedback buttons: the value is "up:TRACE" or "down:TRACE"."""
        ack()
        verdict, _, trace_id = (action.get("value") or "").partition(":")
        if verdict == "up":
            vote_up(ctx, client, body, trace_id, asker_of(context))
        elif verdict == "down":
            vote_down(ctx, client, body, trace_id)

    @app.action("feedback_up")
    def feedback_up(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        ack()
        vote_up(ctx, client, body, action.get("value", ""), asker_of(context))

    @app.action("feedback_down")
    def feedback_down(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        vote_down(ctx, client, body, action.get("value", ""))

    @app.view("feedback_down")
    def feedback_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        ack()
        meta = json.loads(view.get("private_metadata") or "{}")
        values = (view.get("state") or {}).get("values") or {}
        comment = ((values.get("comment") or {}).get("comment") or {}).get("value") or ""
        on_thumbs_down(ctx, meta.get("t", ""), clicking_user(body), comment, client=client)
        tell(
            client,
            meta.get("c"),
            clicking_user(body),
            thread_ts=meta.get("th") or None,
            text="Thanks — noted what was wrong.",
        )

    @app.view_closed("feedback_down")
    def feedback_closed(ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        ack()
        meta = json.loads(view.get("private_metadata") or "{}")
        on_thumbs_down(ctx, meta.get("t", ""), clicking_user(body), client=client)

    @app.action("retry")
    def retry(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        channel, message_ts, thread_ts = _where(body)
        turn = ctx.conversations.turn(action.get("value", ""))
        if turn is None or not message_ts:
            tell(
                client,
                channel,
                clicking_user(body),
                thread_ts=thread_ts,
                text="I no longer have this question. Please ask it again.",
            )
            return
        team = (body.get("team") or {}).get("id") or ""
        message = body.get("message") or {}
        closed = render.retried_message(
            message.get("blocks") or [], message.get("text") or "", clicking_user(body)
        )
        try:  # the failed message keeps its words and loses its buttons
            client.chat_update(channel=channel, ts=message_ts, text=closed.text, blocks=closed.blocks)
        except SlackApiError as exc:
            log.info("could not close error message %s: %s", message_ts, exc.response.get("error"))
        start(  # the new answer comes as a new message in the thread
            ctx,
            client,
            Ask(
                question=turn.question,
                team=team,
                channel=channel,
                user=clicking_user(body),
                thread_ts=thread_ts or message_ts,
            ),
        )
