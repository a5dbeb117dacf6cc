"""Trusted answers in Slack (issue 19): Verify under an answer, `/ask verified` and the Home tab with
Unverify and Recheck, Refresh under a cached answer, and a DM to a verifier whose query went stale.

Only analysts (`verified.analysts`: Slack user ids and user groups) may verify or unverify; anyone
may list. What a press does is decided once for every chat (core/conversation/verifying.py); what a verified
query is, how questions are matched to it and when it goes stale is the engine's business
(core/trusted.py, core/verified/); this module only reads clicks and says what happened. Stale flags are an outbox in the state database: after every answer this process posts
the notes nobody has posted yet, so a flag raised by the CLI or another web process reaches the
verifier too.
"""

from __future__ import annotations

import datetime as dt
import logging
from functools import partial
from typing import Any

import sqlalchemy as sa
from slack_bolt import App, BoltContext
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.slack import render
from bot.slack.answering import start
from bot.slack.ask import Ask
from bot.slack.asker import Asker, asker_at, asker_of
from bot.slack.context import BotContext
from bot.slack.ephemeral import clicking_user, tell
from bot.slack.listeners.schedules import publish_home
from core.answer import Outcome
from core.conversation.verifying import verified_sentence
from core.database import UnknownDatabase
from core.trusted import Verification
from core.verified.analysts import is_analyst
from core.verified.query import VerifiedQuery

log = logging.getLogger(__name__)

LIST_LIMIT = 12  # verified queries in one message (at most 4 blocks each, 50 blocks per message)
HOME_LIMIT = 8  # on the Home tab, below the schedules
NOT_ANALYST = (
    "Only analysts can verify or unverify answers. The bot's admins name them in "
    "`verified.analysts` (Slack user ids or user groups)."
)


def _clicked(body: dict[str, Any]) -> tuple[str, str, str, str | None, str | None, bool, bool]:
    """(user, team, channel, message ts, thread ts, in an ephemeral message, on the Home tab)."""
    container = body.get("container") or {}
    message = body.get("message") or {}
    user = clicking_user(body) or ""
    team = (body.get("team") or {}).get("id") or (body.get("user") or {}).get("team_id") or ""
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id") or ""
    message_ts = container.get("message_ts") or message.get("ts")
    thread_ts = container.get("thread_ts") or message.get("thread_ts")
    home = container.get("type") == "view" or (body.get("view") or {}).get("type") == "home"
    return user, team, channel, message_ts, thread_ts, bool(container.get("is_ephemeral")), home


def _date(when: dt.datetime | None) -> str:
    return render.slack_date(when, "{date_short}", "%Y-%m-%d") if when else "?"


# ---------------------------------------------------------------- Verify


def on_verify(ctx: BotContext, client: WebClient, body: dict[str, Any], trace_id: str, asker: Asker) -> str:
    """Verify the answer `trace_id` for an analyst; returns what happened (for logs and tests)."""
    user, team, channel, message_ts, thread_ts, _, _ = _clicked(body)
    thread = thread_ts or message_ts
    done = ctx.conversations.verify(asker.principal, trace_id, team=team, channel=channel)
    refused = {
        "not an analyst": NOT_ANALYST,
        "no query": "There is no query to verify on this message.",
        "access": f"You may not query `{render.escape(done.database)}` here.",
        "database": f"The database `{render.escape(done.database)}` is not configured any more.",
    }.get(done.status)
    if refused is not None or done.verification is None:
        tell(
            client,
            channel,
            user,
            refused or "There is no query to verify on this message.",
            thread_ts=thread_ts,
        )
        return done.status
    result = done.verification
    if result.status == "already":
        q = result.query
        tell(
            client,
            channel,
            user,
            f"This is verified query #{q.id} already (by {verifier_of(q)} on {_date(q.verified_at)}).",
            thread_ts=thread_ts,
        )
        return "already"
    note = verified_note(result, user)
    try:
        kwargs: dict[str, Any] = {"thread_ts": thread} if thread else {}
        client.chat_postMessage(channel=channel, text=note.text, blocks=note.blocks, **kwargs)
    except SlackApiError as exc:
        log.info("could not post the verification in %s: %s", channel, exc.response.get("error"))
        tell(client, channel, user, note.text, thread_ts=thread_ts)
    return result.status


def verifier_of(q: VerifiedQuery) -> str:
    """The verifier as Slack shows them: a mention, or the name a chat without mentions stored."""
    return render.escape(q.verifier_name) if q.verifier_name else f"<@{q.verified_by}>"


def verified_note(result: Verification, user: str) -> render.Message:
    text = verified_sentence(result, f"<@{user}>", render.escape)
    return render.Message(text=render.clip(text, render.MAX_TEXT), blocks=[render.section(text)])


# ---------------------------------------------------------------- listing


def query_blocks(q: VerifiedQuery, *, analyst: bool) -> list[dict[str, Any]]:
    head = (
        f"*#{q.id}* {render.escape(q.question)}\n`{render.escape(q.database)}` · verified by "
        f"{verifier_of(q)} on {_date(q.verified_at)} · values that may change: "
        f"{render.escape(q.describe_params())}"
    )
    blocks: list[dict[str, Any]] = [render.section(head)]
    if q.stale:
        blocks.append(
            render.context(
                f":warning: *Stale* since {_date(q.stale_at)}: {render.escape(q.stale_reason)} — not "
                "reused until it runs again (Recheck) or a correct answer to it is verified."
            )
        )
    elif not q.reusable:
        blocks.append(render.context(f"Only an example for the SQL writer: {render.escape(q.note)}."))
    if analyst:
        unverify = render.button("Unverify", "verified_unverify", str(q.id), style="danger")
        unverify["confirm"] = {
            "title": {"type": "plain_text", "text": "Unverify this query?"},
            "text": {
                "type": "mrkdwn",
                "text": render.clip(
                    f"*{render.escape(q.question)}* will be answered with new SQL again.", 300
                ),
            },
            "confirm": {"type": "plain_text", "text": "Unverify"},
            "deny": {"type": "plain_text", "text": "Keep it"},
            "style": "danger",
        }
        blocks.append(
            render.actions(
                f"verified:{q.id}", render.button("Recheck", "verified_recheck", str(q.id)), unverify
            )
        )
    return blocks


def list_message(queries: list[VerifiedQuery], *, analyst: bool, note: str = "") -> render.Message:
    blocks: list[dict[str, Any]] = []
    if note:
        blocks.append(render.context(note))
    if not queries:
        blocks.append(
            render.section(
                "No verified queries yet. An analyst presses *✅ Verify* under a right answer; questions "
                "like it are then answered from that SQL, marked ✅."
            )
        )
    else:
        stale = sum(1 for q in queries if q.stale)
        extra = f", {stale} stale" if stale else ""
        blocks.append(render.section(f"*Verified queries* ({len(queries)}{extra})"))
        for q in queries[:LIST_LIMIT]:
            blocks.extend(query_blocks(q, analyst=analyst))
        if len(queries) > LIST_LIMIT:
            blocks.append(render.context(f"… and {len(queries) - LIST_LIMIT} more."))
    return render.Message(
        text=f"{len(queries)} verified quer{'y' if len(queries) == 1 else 'ies'}",
        blocks=blocks[: render.MAX_BLOCKS],
    )


def list_command(
    ctx: BotContext, *, ack: Any, command: dict[str, Any], client: WebClient, asker: Asker, **_: Any
) -> None:
    team, who = command.get("team_id", ""), asker.principal
    message = list_message(ctx.conversations.visible_queries(who), analyst=is_analyst(ctx.settings, who))
    ack(response_type="ephemeral", text=message.text, blocks=message.blocks)
    tell_verifiers(ctx, client, team)


def home_section(ctx: BotContext, client: WebClient, user: str, team: str) -> list[dict[str, Any]]:
    who = asker_at(ctx, client, team, None, user).principal
    analyst = is_analyst(ctx.settings, who)
    queries = ctx.conversations.visible_queries(who)
    if not queries and not analyst:
        return []
    blocks: list[dict[str, Any]] = [{"type": "divider"}]
    if not queries:
        blocks.append(render.section("*Verified queries*\nNone yet: press *✅ Verify* under a right answer."))
        return blocks
    blocks.append(render.section(f"*Verified queries* ({len(queries)})"))
    for q in queries[:HOME_LIMIT]:
        blocks.extend(query_blocks(q, analyst=analyst))
    if len(queries) > HOME_LIMIT:
        blocks.append(
            render.context(f"… and {len(queries) - HOME_LIMIT} more: `/ask verified` lists them all.")
        )
    return blocks


# ---------------------------------------------------------------- Unverify, Recheck, Refresh


def on_unverify(
    ctx: BotContext,
    client: WebClient,
    body: dict[str, Any],
    action: dict[str, Any],
    respond: Any,
    asker: Asker,
) -> str:
    user, team, channel, _, thread_ts, ephemeral, home = _clicked(body)
    done = ctx.conversations.unverify(asker.principal, _id(action))
    if done.status == "not an analyst":
        note = NOT_ANALYST
    elif done.query is None:
        note = "That verified query no longer exists."
    else:
        q = done.query
        note = f"Unverified #{q.id} “{render.escape(q.question)}”: questions like it get newly written SQL again."
    _show_note(ctx, client, note, user, team, channel, thread_ts, ephemeral, home, respond, asker)
    return note


def _id(action: dict[str, Any]) -> int | None:
    try:
        return int(action.get("value") or "")
    except ValueError:
        return None


def recheck(
    ctx: BotContext, client: WebClient, query_id: int, user: str, team: str, channel: str, home: bool
) -> str:
    """Worker: run a verified query again; clear its stale flag, or keep (and explain) it."""
    q = ctx.conversations.verified_query(query_id)
    if q is None or not q.active:
        note = "That verified query no longer exists."
    else:
        who = asker_at(ctx, client, team, channel, user).principal
        try:
            db = ctx.askbase.database(q.database)
        except UnknownDatabase:
            db = None
        result = ctx.askbase.trusted.check(q, who, db)
        if result.ok:
            note = f"Verified query #{q.id} passes the guard and runs: it is answered from again."
        else:
            note = f"Verified query #{q.id} still does not work: {render.escape(result.reason)}"
    if home:
        publish_home(ctx, client, user, team, note)
    else:
        tell(client, channel, user, note)
    return note


def on_recheck(
    ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any], asker: Asker
) -> None:
    user, team, channel, _, thread_ts, _, home = _clicked(body)
    query_id = _id(action)
    if not is_analyst(ctx.settings, asker.principal):
        tell(client, channel, user, NOT_ANALYST, thread_ts=thread_ts)
    elif query_id is None:
        tell(client, channel, user, "That verified query no longer exists.", thread_ts=thread_ts)
    else:
        ctx.queue.put(recheck, ctx, client, query_id, user, team, channel, home)


def on_refresh(ctx: BotContext, client: WebClient, body: dict[str, Any], trace_id: str) -> None:
    """Ask a cached answer's question again, past the cache. The fresh answer is a new message in
    the same thread (bot/slack/answering.py never edits an answer in place: edits do not notify), so the
    cached one stays above it for comparison."""
    user, team, channel, message_ts, thread_ts, _, _ = _clicked(body)
    turn = ctx.conversations.turn(trace_id)
    if turn is None or not message_ts:
        tell(
            client, channel, user, "I no longer have this question. Please ask it again.", thread_ts=thread_ts
        )
        return
    start(
        ctx,
        client,
        Ask(
            question=turn.question,
            team=team,
            channel=channel,
            user=user or None,
            thread_ts=thread_ts or message_ts,
            refresh=True,
        ),
    )


def _show_note(
    ctx: BotContext,
    client: WebClient,
    note: str,
    user: str,
    team: str,
    channel: str,
    thread_ts: str | None,
    ephemeral: bool,
    home: bool,
    respond: Any,
    asker: Asker,
) -> None:
    if home:
        publish_home(ctx, client, user, team, note)
        return
    if ephemeral:
        who = asker.principal
        message = list_message(
            ctx.conversations.visible_queries(who), analyst=is_analyst(ctx.settings, who), note=note
        )
        try:
            respond(
                replace_original=True, response_type="ephemeral", text=message.text, blocks=message.blocks
            )
            return
        except Exception:  # the response_url expired: say it in a fresh note instead
            log.info("could not refresh the verified list", exc_info=True)
    tell(client, channel, user, note, thread_ts=thread_ts)


# ---------------------------------------------------------------- stale queries


def stale_message(q: VerifiedQuery) -> render.Message:
    text = (
        f":warning: Your verified query #{q.id} “{render.escape(q.question)}” on `{render.escape(q.database)}` "
        f"stopped working: {render.escape(q.stale_reason)}\nUntil it is fixed, questions like it are answered "
        "with newly written SQL. Verify a correct answer to the same question to replace it, press "
        "*Recheck* once the database is right again, or *Unverify* it."
    )
    blocks = [render.section(text), *query_blocks(q, analyst=True)[-1:]]
    return render.Message(text=render.clip(text, render.MAX_TEXT), blocks=blocks)


def tell_verifiers(ctx: BotContext, client: WebClient, team: str) -> int:
    """DM each verifier whose query went stale and who has not been told; how many were told."""
    try:
        untold = ctx.conversations.stale_untold(team)
    except sa.exc.SQLAlchemyError:
        log.exception("could not read stale verified queries")
        return 0
    sent = 0
    for q in untold:
        if not ctx.conversations.tell_once(q):
            continue  # another process got there first
        message = stale_message(q)
        try:
            client.chat_postMessage(channel=q.verified_by, text=message.text, blocks=message.blocks)
            sent += 1
        except SlackApiError as exc:
            log.warning(
                "could not tell %s that #%s is stale: %s", q.verified_by, q.id, exc.response.get("error")
            )
    return sent


def after_answer(ctx: BotContext, client: WebClient, ask: Ask, outcome: Outcome) -> None:
    """Runs after every answer in Slack (bot/slack/answering.py): deliver the stale notes."""
    try:
        tell_verifiers(ctx, client, ask.team)
    except Exception:  # a note must never disturb the answer that is already out
        log.exception("telling verifiers of stale queries failed")


# ---------------------------------------------------------------- registration


def register(app: App, ctx: BotContext) -> None:
    ctx.subcommands["verified"] = partial(list_command, ctx)
    ctx.extras.setdefault("answer_hooks", []).append(after_answer)
    ctx.extras.setdefault("home_sections", []).append(home_section)

    @app.action("verified_verify")
    def verify(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        ack()
        on_verify(ctx, client, body, action.get("value", ""), asker_of(context))

    @app.action("verified_unverify")
    def unverify(
        ack: Any,
        body: dict[str, Any],
        action: dict[str, Any],
        client: WebClient,
        respond: Any,
        context: BoltContext,
    ) -> None:
        ack()
        on_unverify(ctx, client, body, action, respond, asker_of(context))

    @app.action("verified_recheck")
    def recheck_clicked(
        ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient, context: BoltContext
    ) -> None:
        ack()
        on_recheck(ctx, client, body, action, asker_of(context))

    @app.action("answer_refresh")
    def refresh(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        on_refresh(ctx, client, body, action.get("value", ""))
