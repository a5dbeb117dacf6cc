"""A question as Slack brings it (`Ask`), and the events that are questions read into one.

An @mention, a DM, or — with `slack.thread_followups` — a reply in one of our channel threads by
the person who asked there, is a question; an edit, a join, a bot's post (ours included), a
thank-you closing a thread, or someone else talking in a thread is not (`incoming_ask`). Text is
read with bot/slack/text.py `incoming` (one function for every entry point). The conversation of
a question is its thread (`conversation_key`), or, for a private `/ask`, one of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bot.slack.context import BotContext
from bot.slack.progress import Place
from bot.slack.text import incoming, mentions
from core.clarify.transcript import Transcript

CONVERSATION_PREFIX = "slack:"  # every Slack conversation key starts so (a chat's clarifications sweep)
# Replies in a thread that close it rather than ask something: never answered.
THANKS = {"thanks", "thank you", "thx", "ty", "ok", "okay", "great", "cool", "nice", "perfect", "got it"}


def conversation_key(team: str, channel: str, thread_ts: str) -> str:
    return f"{CONVERSATION_PREFIX}{team}:{channel}:{thread_ts}"


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
    claim: str | None = None  # its claim (inflight.py): status recorded once posted, answered at the end
    private: bool = False  # only the asker sees the replies (bot/slack/private_results.py)
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


def question_text(text: str, bot_user_id: str | None, *, addressed: bool = False) -> str:
    """The question as typed, without the bot's mention (see bot/slack/text.py `incoming`)."""
    return incoming(text, bot_user_id=bot_user_id, addressed=addressed)


def team_of(body: dict[str, Any], event: dict[str, Any]) -> str:
    return body.get("team_id") or event.get("team") or ""


def incoming_ask(ctx: BotContext, body: dict[str, Any], bot_user_id: str | None) -> Ask | None:
    """The question an `app_mention` or `message` event asks, or None when it asks none."""
    event = body.get("event") or {}
    if event.get("bot_id") or not event.get("user"):
        return None  # bot posts (ours included) are not questions
    team, channel, ts, user = team_of(body, event), event["channel"], event["ts"], event["user"]
    thread_ts = event.get("thread_ts")
    text = event.get("text") or ""
    if event.get("type") == "app_mention":
        question = question_text(text, bot_user_id, addressed=True)
        return Ask(question, team, channel, user, thread_ts=thread_ts or ts, message_ts=ts)
    if event.get("subtype"):
        return None  # edits, joins
    if event.get("channel_type") != "im":
        if not ctx.settings.slack.thread_followups:
            return None  # follow-ups in channels mention the bot (app_mention answers them)
        if not thread_ts or mentions(text, bot_user_id):
            return None  # a plain channel message, or an @mention (app_mention answers it)
        if not ctx.conversations.started_by(conversation_key(team, channel, thread_ts), user):
            return None  # not our thread, or someone else talking in it: mention the bot to ask
    ask = Ask(question_text(text, bot_user_id), team, channel, user, thread_ts=thread_ts or ts, message_ts=ts)
    return None if ask.question.strip(" !.").lower() in THANKS else ask
