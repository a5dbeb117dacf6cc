"""Where questions come in: an @mention, a DM, `/ask`, or (with `slack.thread_followups`) a reply
in one of our channel threads without a mention. In the agent view each DM message starts its own
thread; the agent view's and the assistant panel's own events are in bot/listeners/assistant.py.

Every path acks at once (Bolt acks events before the listener body runs; commands ack first
thing) and hands the question to `bot.answering.start`. Slack may deliver one message twice —
as `app_mention` and as `message`, or again after a retry — so each message is claimed by its
(team, channel, ts) in the state database after the ack (bot/inflight.py): a delivery of a
question answered, or being answered by a live process, is dropped; one whose process died is
taken over. `/ask` questions are claimed by their trigger id. Text is read with
`bot.slack_text.incoming` (one function for every entry point). Help goes only to the person who
asked for it.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient

from bot import render
from bot.answering import Ask, conversation_key, start, usergroup_directory
from bot.ephemeral import tell_message
from bot.inflight import claim_question, message_key
from bot.slack_context import BotContext
from bot.slack_text import incoming
from bot.slack_text import mentions as mentions
from bot.usergroups import slack_principal
from core.access import usable_databases
from core.state import conversations
from core.state.channel_settings import channel_database, set_channel_database

log = logging.getLogger(__name__)

COMMAND = "/ask"
HELP_WORDS = {"", "help", "hi", "hello"}
# Replies in a thread that close it rather than ask something: never answered.
THANKS = {"thanks", "thank you", "thx", "ty", "ok", "okay", "great", "cool", "nice", "perfect", "got it"}


def question_text(text: str, bot_user_id: str | None, *, addressed: bool = False) -> str:
    """The question as typed, without the bot's mention (see bot.slack_text.incoming)."""
    return incoming(text, bot_user_id=bot_user_id, addressed=addressed)


def _team(body: dict[str, Any], event: dict[str, Any]) -> str:
    return body.get("team_id") or event.get("team") or ""


def _usable(ctx: BotContext, client: WebClient, team: str, channel: str, user: str | None) -> list[str]:
    """The databases this person may query in this channel (core/access.py decides)."""
    who = slack_principal(
        ctx.settings, client, usergroup_directory(ctx), team=team, channel=channel, user=user
    )
    return usable_databases(ctx.settings, who, ctx.askbase.databases.names())


def _help(ctx: BotContext, client: WebClient, team: str, channel: str, user: str | None) -> render.Message:
    usable = _usable(ctx, client, team, channel, user)
    current = channel_database(ctx.state, team, channel) or ctx.settings.default_db
    return render.help_message(usable, current, COMMAND)


def reply_help(ctx: BotContext, client: WebClient, ask: Ask) -> None:
    """Help for an empty mention or "help": only the person who asked sees it."""
    message = _help(ctx, client, ask.team, ask.channel, ask.user)
    tell_message(client, ask.channel, ask.user, message.text, message.blocks, thread_ts=ask.thread_ts)


def wants_help(question: str) -> bool:
    return question.strip(" ?!.").lower() in HELP_WORDS


def on_message_event(
    ctx: BotContext, client: WebClient, body: dict[str, Any], bot_user_id: str | None
) -> None:
    """A DM, or a reply in one of our threads by the person who asked there."""
    event = body.get("event") or {}
    if event.get("subtype") or event.get("bot_id") or not event.get("user"):
        return  # edits, joins, bot posts (ours included) are not questions
    team, channel, ts = _team(body, event), event["channel"], event["ts"]
    thread_ts = event.get("thread_ts")
    text = event.get("text") or ""
    if event.get("channel_type") != "im":
        if not ctx.settings.slack.thread_followups:
            return  # follow-ups in channels mention the bot (app_mention answers them)
        if not thread_ts or mentions(text, bot_user_id):
            return  # a plain channel message, or an @mention (app_mention answers it)
        info = conversations.conversation_info(ctx.state, conversation_key(team, channel, thread_ts))
        if info is None or info.user != event["user"]:
            return  # not our thread, or someone else talking in it: mention the bot to ask
    ask = Ask(
        question=question_text(text, bot_user_id),
        team=team,
        channel=channel,
        user=event["user"],
        thread_ts=thread_ts or ts,
        message_ts=ts,
    )
    if ask.question.strip(" !.").lower() in THANKS:
        return
    claimed = claim_question(ctx, client, ask, message_key(team, channel, ts), delivery=body.get("event_id"))
    if claimed is None:
        return
    if thread_ts and any(hook(ctx, client, ask) for hook in ctx.reply_hooks):
        ctx.claims.finished(message_key(team, channel, ts))
        return
    if event.get("channel_type") == "im":  # agent view: the database in view, the thread's title
        for dm_hook in ctx.extras.get("dm_hooks", ()):
            claimed = dm_hook(ctx, client, event, claimed)
    _answer(ctx, client, claimed)


def _answer(ctx: BotContext, client: WebClient, ask: Ask) -> None:
    """Help, or the question answered; either way the claim ends with the one reply."""
    if wants_help(ask.question):
        reply_help(ctx, client, ask)
    elif any(hook(ctx, client, ask) for hook in ctx.extras.get("ask_hooks", ())):
        return  # e.g. "define X as Y" (bot/listeners/teaching.py), which ends the claim itself
    elif start(ctx, client, ask):
        return  # the answer ends the claim (bot/answering.py)
    if ask.claim:
        ctx.claims.finished(ask.claim)


def on_mention_event(
    ctx: BotContext, client: WebClient, body: dict[str, Any], bot_user_id: str | None
) -> None:
    event = body.get("event") or {}
    if event.get("bot_id") or not event.get("user"):
        return
    team, channel, ts = _team(body, event), event["channel"], event["ts"]
    thread_ts = event.get("thread_ts") or ts
    question = question_text(event.get("text") or "", bot_user_id, addressed=True)
    ask = Ask(question, team, channel, event["user"], thread_ts=thread_ts, message_ts=ts)
    claimed = claim_question(ctx, client, ask, message_key(team, channel, ts), delivery=body.get("event_id"))
    if claimed is None:
        return
    if event.get("thread_ts") and any(hook(ctx, client, ask) for hook in ctx.reply_hooks):
        ctx.claims.finished(message_key(team, channel, ts))
        return  # e.g. "@Askbase the city" answers the open clarifying question in this thread
    _answer(ctx, client, claimed)


def db_command(
    ctx: BotContext, *, ack: Any, command: dict[str, Any], rest: str, client: WebClient, **_: Any
) -> None:
    """`/ask db` lists the databases this channel may use; `/ask db NAME` picks one for the channel."""
    team, channel, user = command.get("team_id", ""), command["channel_id"], command.get("user_id")
    names = ctx.askbase.databases.names()
    usable = _usable(ctx, client, team, channel, user)
    current = channel_database(ctx.state, team, channel) or ctx.settings.default_db
    name = rest.strip().strip("`")
    if not name:
        message = render.database_list_message(usable, current, COMMAND)
        ack(response_type="ephemeral", text=message.text, blocks=message.blocks)
    elif name not in names:
        known = render.escape(", ".join(usable))
        ack(
            response_type="ephemeral",
            text=f"There is no database named '{render.escape(name)}'. Known here: {known}.",
        )
    elif name not in usable:
        known = render.escape(", ".join(usable))
        ack(
            response_type="ephemeral",
            text=f"This channel may not use '{render.escape(name)}'. It may use: {known}.",
        )
    else:
        set_channel_database(ctx.state, team, channel, name, user)
        ack(
            response_type="in_channel",
            text=f"<@{user}> set this channel to ask about `{render.escape(name)}`.",
        )


def help_command(ctx: BotContext, *, ack: Any, command: dict[str, Any], client: WebClient, **_: Any) -> None:
    message = _help(ctx, client, command.get("team_id", ""), command["channel_id"], command.get("user_id"))
    ack(response_type="ephemeral", text=message.text, blocks=message.blocks)


def on_ask_command(
    ctx: BotContext, ack: Any, command: dict[str, Any], client: WebClient, respond: Any
) -> None:
    text = incoming(command.get("text") or "")
    word, _, rest = text.partition(" ")
    word = word.lower()
    kwargs = {"ack": ack, "command": command, "rest": rest, "client": client, "respond": respond}
    if not text or (word == "help" and not rest):
        help_command(ctx, **kwargs)
        return
    if word == "db" and len(rest.split()) <= 1:  # "/ask db sizes by month?" is a question
        db_command(ctx, **kwargs)
        return
    if word in ctx.subcommands:
        ctx.subcommands[word](**kwargs)
        return
    ack()
    ask = Ask(
        question=text,
        team=command.get("team_id", ""),
        channel=command["channel_id"],
        user=command.get("user_id"),
        thread_ts=None,
        announce=True,
    )
    key = f"cmd:{ask.team}:{command.get('trigger_id') or command.get('response_url') or ''}"
    claimed = claim_question(ctx, client, ask, key)
    if claimed is None:
        return
    if not start(ctx, client, claimed):
        ctx.claims.finished(key)
        respond(
            response_type="ephemeral",
            text="I can't post in this channel. Invite me with `/invite @Askbase` (or DM me) and ask again.",
        )


def register(app: App, ctx: BotContext) -> None:
    @app.event("app_mention")
    def app_mention(body: dict[str, Any], client: WebClient, context: Any) -> None:
        on_mention_event(ctx, client, body, context.bot_user_id)

    @app.event("message")
    def message(body: dict[str, Any], client: WebClient, context: Any) -> None:
        on_message_event(ctx, client, body, context.bot_user_id)

    @app.command(COMMAND)
    def ask_command(ack: Any, command: dict[str, Any], client: WebClient, respond: Any) -> None:
        on_ask_command(ctx, ack, command, client, respond)
