"""Slack's assistant panel (Agents & AI Apps), through Bolt's `Assistant` middleware.

When someone opens a thread in the panel, Askbase picks the database from where they are: the
channel they are looking at (its `/ask db` choice), else the default, among the databases they may
query (core/access.py); it greets them and suggests 3–4 real questions from that database's catalog
(core/suggestions.py) as suggested prompts. Their first question becomes the thread's title. A
question in the panel is answered exactly as a DM is — progress as the assistant status, the
answer as a new message, clarifying questions, schedules, feedback — by the same code
(bot/listeners/questions.py, bot/answering.py). Moving to another channel before asking points the
thread at that channel's database. Workspaces without the panel never send these events; nothing
else depends on them.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App
from slack_bolt.middleware.assistant import Assistant
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import render
from bot.answer_view import catalog_of
from bot.answering import conversation_key, usergroup_directory
from bot.listeners.questions import on_message_event
from bot.slack_context import BotContext
from bot.slack_text import incoming
from bot.usergroups import slack_principal
from core.access import usable_databases
from core.state import conversations, feedback
from core.state.channel_settings import channel_database
from core.suggestions import example_questions

log = logging.getLogger(__name__)

MAX_TITLE = 80
MAX_PROMPT_TITLE = 60


def _thread(payload: dict[str, Any]) -> tuple[str, str, str | None, str | None]:
    """(channel, thread_ts, user, the channel the person is looking at) of an assistant thread event."""
    thread = payload.get("assistant_thread") or {}
    context = thread.get("context") or {}
    return (
        thread.get("channel_id", ""),
        thread.get("thread_ts", ""),
        thread.get("user_id"),
        context.get("channel_id"),
    )


def pick_database(
    ctx: BotContext, client: WebClient, *, team: str, channel: str, user: str | None, looking_at: str | None
) -> str | None:
    """The database of the channel in view if the person may query it here, else the default, else
    the first they may query; None when they may query none."""
    who = slack_principal(
        ctx.settings, client, usergroup_directory(ctx), team=team, channel=channel, user=user
    )
    usable = usable_databases(ctx.settings, who, ctx.askbase.databases.names())
    chosen = channel_database(ctx.state, team, looking_at) if looking_at else None
    for candidate in (chosen, ctx.settings.default_db, *usable):
        if candidate and candidate in usable:
            return candidate
    return None


def suggestions(ctx: BotContext, database: str) -> list[str]:
    catalog = catalog_of(ctx.askbase, database)
    if catalog is None:
        return []
    confirmed = [e.question for e in feedback.examples_for(ctx.state, database)]
    return example_questions(catalog, confirmed)


def suggest(ctx: BotContext, client: WebClient, channel: str, thread_ts: str, database: str) -> list[str]:
    questions = suggestions(ctx, database)
    if not questions:
        return []
    prompts = [{"title": render.clip(q, MAX_PROMPT_TITLE), "message": q} for q in questions]
    try:
        client.assistant_threads_setSuggestedPrompts(
            channel_id=channel, thread_ts=thread_ts, prompts=prompts, title=f"Ask about {database}"
        )
    except SlackApiError as exc:
        log.info("suggested prompts refused in %s: %s", channel, exc.response.get("error"))
    return questions


def greeting(database: str | None, looking_at: str | None) -> render.Message:
    if database is None:
        text = "Hi! There is no database you may ask about here yet. Ask the bot's admins for access."
        return render.Message(text=text, blocks=[render.section(text)])
    where = f" (the one <#{looking_at}> uses)" if looking_at else ""
    text = (
        f"Hi! Ask me about `{render.escape(database)}`{where} in plain English. I answer with the SQL I "
        "ran, a table and a CSV; :thumbsup: teaches me a query is right."
    )
    return render.Message(text=f"Hi! Ask me about {render.escape(database)}.", blocks=[render.section(text)])


def on_thread_started(
    ctx: BotContext, client: WebClient, body: dict[str, Any], payload: dict[str, Any]
) -> None:
    channel, thread_ts, user, looking_at = _thread(payload)
    if not channel or not thread_ts:
        return
    team = body.get("team_id") or ""
    database = pick_database(ctx, client, team=team, channel=channel, user=user, looking_at=looking_at)
    if database is not None:
        conversations.ensure_conversation(
            ctx.state, conversation_key(team, channel, thread_ts), database, channel=channel, user=user
        )
    hello = greeting(database, looking_at)
    try:
        client.chat_postMessage(channel=channel, thread_ts=thread_ts, text=hello.text, blocks=hello.blocks)
    except SlackApiError as exc:
        log.info("could not greet in %s: %s", channel, exc.response.get("error"))
    if database is not None:
        suggest(ctx, client, channel, thread_ts, database)


def on_context_changed(
    ctx: BotContext, client: WebClient, body: dict[str, Any], payload: dict[str, Any]
) -> None:
    """The person moved to another channel with the panel open: before the first question, the thread
    follows that channel's database (and its suggestions); after it, the thread keeps its data."""
    channel, thread_ts, user, looking_at = _thread(payload)
    team = body.get("team_id") or ""
    database = pick_database(ctx, client, team=team, channel=channel, user=user, looking_at=looking_at)
    key = conversation_key(team, channel, thread_ts)
    if database is None or database == conversations.conversation_database(ctx.state, key):
        return
    if conversations.rebind_database(ctx.state, key, database):
        suggest(ctx, client, channel, thread_ts, database)


def on_user_message(
    ctx: BotContext, client: WebClient, body: dict[str, Any], bot_user_id: str | None
) -> None:
    """A message in an assistant thread (or any DM thread): the first one titles the thread."""
    event = body.get("event") or {}
    team = body.get("team_id") or event.get("team") or ""
    thread_ts = event.get("thread_ts")
    if thread_ts and not event.get("subtype") and event.get("user"):
        key = conversation_key(team, event.get("channel", ""), thread_ts)
        info = conversations.conversation_info(ctx.state, key)
        if info is not None and not conversations.has_turns(ctx.state, key):
            title = render.clip(incoming(event.get("text") or "", bot_user_id=bot_user_id), MAX_TITLE)
            try:
                client.assistant_threads_setTitle(
                    channel_id=event["channel"], thread_ts=thread_ts, title=title
                )
            except SlackApiError as exc:  # a plain DM thread has no title to set
                log.debug("no title for %s: %s", thread_ts, exc.response.get("error"))
    on_message_event(ctx, client, body, bot_user_id)


def register(app: App, ctx: BotContext) -> None:
    assistant = Assistant(logger=logging.getLogger("askbase.bolt.assistant"))

    @assistant.thread_started
    def thread_started(body: dict[str, Any], payload: dict[str, Any], client: WebClient) -> None:
        on_thread_started(ctx, client, body, payload)

    @assistant.thread_context_changed
    def context_changed(body: dict[str, Any], payload: dict[str, Any], client: WebClient) -> None:
        on_context_changed(ctx, client, body, payload)

    @assistant.user_message
    def user_message(body: dict[str, Any], client: WebClient, context: Any) -> None:
        on_user_message(ctx, client, body, context.bot_user_id)

    app.assistant(assistant)
