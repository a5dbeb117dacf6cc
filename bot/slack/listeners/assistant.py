"""Slack's agent experience (`features.agent_view`, the default) and the older assistant panel
(`features.assistant_view`, for apps installed with it): `slack.experience` says which.

**Agent view.** A person opening their DM with Askbase is `app_home_opened` with `tab ==
"messages"`: Askbase sets 3–4 suggested prompts for the DM — real questions from the catalog of
the database they would ask about (core/suggestions.py) — and greets them when they have asked
nothing yet (at most once in two days). Each message they send there is the root of its own
thread, answered in it (bot/slack/listeners/questions.py) and titled with the question. What they are
looking at comes as `app_context_changed` (and as `app_context` on their messages): when it is a
channel whose `/ask db` choice they may query, their DM asks about that database until they look
elsewhere, and the suggested prompts follow it.

**Assistant view.** Bolt's `Assistant` middleware: a thread opened in the panel gets a greeting
and suggested prompts for the database of the channel in view (else the default, among those the
person may query, core/access.py), the first question titles the thread, and moving to another
channel before asking points the thread at that channel's database.

Either way a question is answered exactly as a DM is — progress as the assistant status, the
answer as a new message, clarifying questions, schedules, feedback — by the same code
(bot/slack/listeners/questions.py, bot/slack/answering.py). Workspaces without these features never send the
events; nothing else depends on them.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from slack_bolt import App, BoltContext
from slack_bolt.middleware.assistant import Assistant
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import catalog_of
from bot.slack import render
from bot.slack.ask import Ask, conversation_key
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.listeners.questions import on_question
from bot.slack.text import incoming
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
    ctx: BotContext,
    client: WebClient,
    *,
    team: str,
    channel: str,
    user: str | None,
    looking_at: str | None,
    prefer: str | None = None,
) -> str | None:
    """The database of the channel in view if the person may query it here (else `prefer`, else
    `channel`'s own `/ask db` choice), else the default, else the first they may query; None when
    they may query none."""
    usable = asker_at(ctx, client, team, channel, user).usable
    chosen = ctx.conversations.place_database(team, looking_at)
    own = ctx.conversations.place_database(team, channel)
    for candidate in (chosen, prefer, own, ctx.settings.default_db, *usable):
        if candidate and candidate in usable:
            return candidate
    return None


def suggestions(ctx: BotContext, database: str) -> list[str]:
    catalog = catalog_of(ctx.askbase, database)
    if catalog is None:
        return []
    confirmed = ctx.conversations.examples(database)
    return example_questions(catalog, confirmed)


def suggest(
    ctx: BotContext, client: WebClient, channel: str, thread_ts: str | None, database: str
) -> list[str]:
    """Suggested prompts from `database`'s catalog: for a panel thread, or (agent view, no
    `thread_ts`, which Slack would ignore the call over) for the DM itself."""
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
        ctx.conversations.begin(
            conversation_key(team, channel, thread_ts), database, channel=channel, user=user
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
    if database is not None and ctx.conversations.rebind(key, database):
        suggest(ctx, client, channel, thread_ts, database)


def on_user_message(ctx: BotContext, client: WebClient, body: dict[str, Any], context: BoltContext) -> None:
    """A message in an assistant thread (or any DM thread): the first one titles the thread; it is
    answered as any question (claimed already: bot/slack/middleware.py)."""
    bot_user_id = context.bot_user_id
    event = body.get("event") or {}
    team = body.get("team_id") or event.get("team") or ""
    thread_ts = event.get("thread_ts")
    if thread_ts and not event.get("subtype") and event.get("user"):
        key = conversation_key(team, event.get("channel", ""), thread_ts)
        if ctx.conversations.untouched(key):
            title = render.clip(incoming(event.get("text") or "", bot_user_id=bot_user_id), MAX_TITLE)
            try:
                client.assistant_threads_setTitle(
                    channel_id=event["channel"], thread_ts=thread_ts, title=title
                )
            except SlackApiError as exc:  # a plain DM thread has no title to set
                log.debug("no title for %s: %s", thread_ts, exc.response.get("error"))
    on_question(ctx, client, body, context)


# ---------------------------------------------------------------- agent view

CHANNEL_ENTITY = "slack#/types/channel_id"
MESSAGE_ENTITY = "slack#/types/message_context"


def dm_place(user: str) -> str:
    """The key a person's DM follows a database under (core/askbase.py `point_place`)."""
    return f"dm:{user}"


def viewed_channel(event: dict[str, Any]) -> str | None:
    """The channel the person is looking at, from Slack's context entities (ordered by
    relevance): an app_context_changed's `context`, or the `app_context` a message carries."""
    context = event.get("context") if event.get("type") == "app_context_changed" else event.get("app_context")
    for entity in (context or {}).get("entities") or []:
        if not isinstance(entity, dict):
            continue
        value = entity.get("value")
        if entity.get("type") == CHANNEL_ENTITY and isinstance(value, str) and value[:1] in "CG":
            return value
        if entity.get("type") == MESSAGE_ENTITY and isinstance(value, dict):
            channel = value.get("channel_id")
            if isinstance(channel, str) and channel[:1] in "CG":
                return channel
    return None


def viewed_database(
    ctx: BotContext, client: WebClient, *, team: str, channel: str, user: str | None, looking_at: str | None
) -> str | None:
    """The `/ask db` choice of the channel in view when the person may query it there; else None."""
    if not looking_at:
        return None
    chosen = ctx.conversations.place_database(team, looking_at)
    if chosen is None:
        return None
    return chosen if chosen in asker_at(ctx, client, team, channel, user).usable else None


def dm_database(ctx: BotContext, client: WebClient, *, team: str, channel: str, user: str) -> str | None:
    """What the person's DM asks about: the database of the channel they last looked at, else the
    DM's own `/ask db` choice, else the default — among those they may query."""
    followed = ctx.conversations.place_database(team, dm_place(user))
    return pick_database(ctx, client, team=team, channel=channel, user=user, looking_at=None, prefer=followed)


def agent_greeting(database: str | None) -> render.Message:
    if database is None:
        return greeting(None, None)
    text = (
        f"Hi! Ask me about `{render.escape(database)}` in plain English — each message you send here "
        "gets its own thread with the answer, the SQL I ran, a table and a CSV. Looking at a channel "
        "that asks about other data? I follow it."
    )
    return render.Message(text=f"Hi! Ask me about {render.escape(database)}.", blocks=[render.section(text)])


def on_messages_tab(ctx: BotContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]) -> None:
    """The person opened their DM with Askbase: suggested prompts for the database the DM asks
    about, and a greeting for someone who has asked nothing yet (at most once in two days)."""
    user, channel = event.get("user") or "", event.get("channel") or ""
    if not user or not channel:
        return
    team = body.get("team_id") or ""
    looking_at = viewed_channel(event)
    if looking_at:
        follow_view(ctx, client, team=team, channel=channel, user=user, looking_at=looking_at)
    database = dm_database(ctx, client, team=team, channel=channel, user=user)
    asked = ctx.conversations.recent_questions(user, prefix=f"slack:{team}:", limit=1)
    if not asked and ctx.askbase.once(f"greeting:{team}:{user}"):
        hello = agent_greeting(database)
        try:
            client.chat_postMessage(channel=channel, text=hello.text, blocks=hello.blocks)
        except SlackApiError as exc:
            log.info("could not greet %s: %s", user, exc.response.get("error"))
    if database is not None:
        suggest(ctx, client, channel, None, database)


def follow_view(
    ctx: BotContext, client: WebClient, *, team: str, channel: str, user: str, looking_at: str | None
) -> str | None:
    """Point the person's DM at the database of the channel in view (or back at its own choice
    when that channel has none they may query); the database it asks about now."""
    viewed = viewed_database(ctx, client, team=team, channel=channel, user=user, looking_at=looking_at)
    ctx.conversations.point_place(team, dm_place(user), viewed, user)
    return viewed


def on_app_context_changed(
    ctx: BotContext, client: WebClient, body: dict[str, Any], event: dict[str, Any]
) -> None:
    """The person looks at something else: their DM follows its database, prompts included."""
    team = body.get("team_id") or ""
    authorized = [a for a in body.get("authorizations") or [] if isinstance(a, dict) and not a.get("is_bot")]
    user = event.get("user") or (authorized[0].get("user_id") if authorized else None)
    if not user:
        return
    dm = event.get("channel") or ""
    before = dm_database(ctx, client, team=team, channel=dm or user, user=user)
    follow_view(ctx, client, team=team, channel=dm or user, user=user, looking_at=viewed_channel(event))
    now = dm_database(ctx, client, team=team, channel=dm or user, user=user)
    if dm and now is not None and now != before:
        suggest(ctx, client, dm, None, now)


def dm_question(ctx: BotContext, client: WebClient, event: dict[str, Any], ask: Ask) -> Ask:
    """Hook of bot/slack/listeners/questions.py for a DM message (agent view): a top-level message asks
    about the database of the channel in view (its `app_context`, else the last one followed) and
    titles the thread it starts."""
    if event.get("thread_ts") or not ask.user:
        return ask
    looking_at = viewed_channel(event)
    if looking_at:
        follow_view(ctx, client, team=ask.team, channel=ask.channel, user=ask.user, looking_at=looking_at)
    database = dm_database(ctx, client, team=ask.team, channel=ask.channel, user=ask.user)
    try:
        client.assistant_threads_setTitle(
            channel_id=ask.channel, thread_ts=ask.thread_ts or "", title=render.clip(ask.question, MAX_TITLE)
        )
    except SlackApiError as exc:  # no Agents & AI apps on this plan: the thread just has no title
        log.debug("no title for %s: %s", ask.thread_ts, exc.response.get("error"))
    return replace(ask, database=database or ask.database)


def register(app: App, ctx: BotContext) -> None:
    if ctx.settings.slack.experience == "agent_view":
        register_agent_view(app, ctx)
    else:
        register_assistant_view(app, ctx)


def register_agent_view(app: App, ctx: BotContext) -> None:
    ctx.extras.setdefault("dm_hooks", []).append(dm_question)

    def messages_tab(event: dict[str, Any]) -> bool:
        return bool(event.get("tab") == "messages")

    @app.event("app_home_opened", matchers=[messages_tab])
    def dm_opened(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        on_messages_tab(ctx, client, body, event)

    @app.event("app_context_changed")
    def context_changed(event: dict[str, Any], body: dict[str, Any], client: WebClient) -> None:
        on_app_context_changed(ctx, client, body, event)


def register_assistant_view(app: App, ctx: BotContext) -> None:
    def messages_tab(event: dict[str, Any]) -> bool:
        return bool(event.get("tab") == "messages")

    @app.event("app_home_opened", matchers=[messages_tab])
    def dm_opened() -> None:
        """The classic Messages tab: nothing to do (the panel greets in its own threads)."""

    assistant = Assistant(logger=logging.getLogger("askbase.bolt.assistant"))

    @assistant.thread_started
    def thread_started(body: dict[str, Any], payload: dict[str, Any], client: WebClient) -> None:
        on_thread_started(ctx, client, body, payload)

    @assistant.thread_context_changed
    def context_changed(body: dict[str, Any], payload: dict[str, Any], client: WebClient) -> None:
        on_context_changed(ctx, client, body, payload)

    @assistant.user_message
    def user_message(body: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        on_user_message(ctx, client, body, context)

    app.assistant(assistant)
