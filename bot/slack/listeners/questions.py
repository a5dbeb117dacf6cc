"""Where questions come in: an @mention, a DM, `/ask`, or (with `slack.thread_followups`) a reply
in one of our channel threads without a mention. In the agent view each DM message starts its own
thread; the agent view's and the assistant panel's own events are in bot/slack/listeners/assistant.py.

Every path acks at once (Bolt acks events before the listener body runs; commands ack first
thing) and hands the question to `bot.slack.answering.start`. Slack may deliver one message twice —
as `app_mention` and as `message`, or again after a retry — so each message is read into an `Ask`
and claimed by its (team, channel, ts) before a listener sees it (bot/slack/middleware.py): the
listener gets the claimed ask as `context["ask"]`, and a delivery of a question answered, or
being answered by a live process, never reaches it. `/ask` questions are claimed here, by their
trigger id, after the ack. Help goes only to the person who asked for it.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt import App, BoltContext
from slack_sdk import WebClient

from bot.slack import render
from bot.slack.answering import start
from bot.slack.ask import Ask
from bot.slack.ask import question_text as question_text
from bot.slack.asker import Asker, asker_of
from bot.slack.context import BotContext
from bot.slack.ephemeral import tell_message
from bot.slack.inflight import claim_question
from bot.slack.text import incoming

log = logging.getLogger(__name__)

COMMAND = "/ask"
HELP_WORDS = {"", "help", "hi", "hello"}


def _help(ctx: BotContext, asker: Asker) -> render.Message:
    current = ctx.conversations.place_database(asker.team, asker.channel) or ctx.settings.default_db
    return render.help_message(asker.usable, current, COMMAND)


def reply_help(ctx: BotContext, asker: Asker, client: WebClient, ask: Ask) -> None:
    """Help for an empty mention or "help": only the person who asked sees it."""
    message = _help(ctx, asker)
    tell_message(client, ask.channel, ask.user, message.text, message.blocks, thread_ts=ask.thread_ts)


def wants_help(question: str) -> bool:
    return question.strip(" ?!.").lower() in HELP_WORDS


def on_question(ctx: BotContext, client: WebClient, body: dict[str, Any], context: BoltContext) -> None:
    """A mention, a DM or a follow-up, claimed by the middleware (`context["ask"]`)."""
    ask = context.get("ask")
    if not isinstance(ask, Ask):
        return  # not claimed here: answered, or being answered, elsewhere
    event = body.get("event") or {}
    if event.get("thread_ts") and any(hook(ctx, client, ask) for hook in ctx.reply_hooks):
        if ask.claim:  # e.g. "@Askbase the city" answers the open clarifying question in this thread
            ctx.claims.finished(ask.claim)
        return
    if event.get("type") == "message" and event.get("channel_type") == "im":
        for dm_hook in ctx.extras.get("dm_hooks", ()):  # agent view: the database in view, the title
            ask = dm_hook(ctx, client, event, ask)
    _answer(ctx, asker_of(context), client, ask)


def _answer(ctx: BotContext, asker: Asker, client: WebClient, ask: Ask) -> None:
    """Help, or the question answered; either way the claim ends with the one reply."""
    if wants_help(ask.question):
        reply_help(ctx, asker, client, ask)
    elif any(hook(ctx, client, ask) for hook in ctx.extras.get("ask_hooks", ())):
        return  # e.g. "define X as Y" (bot/slack/listeners/teaching.py), which ends the claim itself
    elif start(ctx, client, ask):
        return  # the answer ends the claim (bot/slack/answering.py)
    if ask.claim:
        ctx.claims.finished(ask.claim)


def db_command(
    ctx: BotContext, *, ack: Any, command: dict[str, Any], rest: str, asker: Asker, **_: Any
) -> None:
    """`/ask db` lists the databases this channel may use; `/ask db NAME` picks one for the channel."""
    team, channel, user = command.get("team_id", ""), command["channel_id"], command.get("user_id")
    names = ctx.askbase.databases.names()
    usable = asker.usable
    current = ctx.conversations.place_database(team, channel) or ctx.settings.default_db
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
        ctx.conversations.point_place(team, channel, name, user)
        ack(
            response_type="in_channel",
            text=f"<@{user}> set this channel to ask about `{render.escape(name)}`.",
        )


def help_command(ctx: BotContext, *, ack: Any, asker: Asker, **_: Any) -> None:
    message = _help(ctx, asker)
    ack(response_type="ephemeral", text=message.text, blocks=message.blocks)


def on_ask_command(
    ctx: BotContext, ack: Any, command: dict[str, Any], client: WebClient, respond: Any, asker: Asker
) -> None:
    text = incoming(command.get("text") or "")
    word, _, rest = text.partition(" ")
    word = word.lower()
    kwargs = {
        "ack": ack,
        "command": command,
        "rest": rest,
        "client": client,
        "respond": respond,
        "asker": asker,
    }
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
    def app_mention(body: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        on_question(ctx, client, body, context)

    @app.event("message")
    def message(body: dict[str, Any], client: WebClient, context: BoltContext) -> None:
        on_question(ctx, client, body, context)

    @app.command(COMMAND)
    def ask_command(
        ack: Any, command: dict[str, Any], client: WebClient, respond: Any, context: BoltContext
    ) -> None:
        on_ask_command(ctx, ack, command, client, respond, asker_of(context))
