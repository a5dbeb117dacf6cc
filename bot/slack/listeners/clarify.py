"""Clarifying questions in Slack: the option buttons, "Other…" (a modal), free-text replies, 👎.

A clarifying question is stored in the state database before it is shown (core/state/
clarifications.py), so a click after a restart or on another web process still works, and its
id — carried by its buttons — keeps two threads' questions apart. Answering it (a button, the
modal, or a plain reply in the thread, which counts as "Other…") updates the message to show
what was chosen and by whom, then asks the question again in the thread with the transcript.
Only the asker may answer (`slack.only_asker_answers`); others get a note only they see. A
question expires after `slack.clarification_ttl_s`: a late click says so, and every new question
sweeps the expired ones so their buttons go away. A 👎 starts one more round about the rejected
answer (Sphinteract's loop: reject → ask → answer again).
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

from slack_bolt import App
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot.answer_view import choice_label, question_in_words
from bot.failures import failure_of
from bot.slack import render
from bot.slack.answering import start
from bot.slack.ask import CONVERSATION_PREFIX, Ask
from bot.slack.asker import asker_at
from bot.slack.context import BotContext
from bot.slack.ephemeral import clicking_user, tell
from bot.slack.private_results import is_private, post_ephemeral
from bot.slack.text import incoming
from core.answer import Outcome
from core.clarify.policy import exchange_for, exchange_for_reply
from core.clarify.transcript import Exchange
from core.conversation.service import ANSWERED, EXPIRED, REPLACED, Asked, Pending, Place, StoredTurn

log = logging.getLogger(__name__)

OPTION = re.compile(r"^clarify_option_(\d+)$")
OTHER = "clarify_other"
MAX_OWN_WORDS = 500


# ---------------------------------------------------------------- messages


def question_blocks(pending: Pending) -> list[dict[str, Any]]:
    return [render.section(f":thinking_face: {render.escape(question_in_words(pending.clarification))}")]


def chosen(pending: Pending, exchange: Exchange) -> str:
    """What was answered: an option pressed as it was offered (a reading in words), typed words
    as they were typed."""
    if exchange.answer not in {o.label for o in pending.clarification.options}:
        return exchange.answer
    return choice_label(pending.clarification, exchange.value, exchange.answer)


def answered_message(pending: Pending, user: str | None, exchange: Exchange) -> render.Message:
    who = f"<@{user}>" if user else "Someone"
    answer = chosen(pending, exchange)
    if exchange.own_words:
        note = f":white_check_mark: {who} answered: “{render.escape(answer)}”"
    else:
        note = f":white_check_mark: {who} chose *{render.escape(answer)}*"
    return render.Message(
        text=render.escape(f"{question_in_words(pending.clarification)} — {answer}"),
        blocks=[*question_blocks(pending), render.context(note)],
    )


def closed_message(pending: Pending, note: str) -> render.Message:
    return render.Message(
        text=render.escape(question_in_words(pending.clarification)),
        blocks=[*question_blocks(pending), render.context(note)],
    )


def expired_note(ctx: BotContext) -> str:
    after = ctx.conversations.expired_after("slack")
    return (
        f":alarm_clock: This question expired after {after} without an answer. "
        "Ask your question again to start over."
    )


REPLACED_NOTE = ":arrow_down: Replaced by a newer question in this thread."


def other_modal(pending: Pending) -> dict[str, Any]:
    return {
        "type": "modal",
        "callback_id": OTHER,
        "private_metadata": json.dumps({"c": pending.id}),
        "title": {"type": "plain_text", "text": "Your answer"},
        "submit": {"type": "plain_text", "text": "Send"},
        "close": {"type": "plain_text", "text": "Cancel"},
        "blocks": [
            render.section(render.escape(question_in_words(pending.clarification))),
            {
                "type": "input",
                "block_id": "answer",
                "label": {"type": "plain_text", "text": "In your own words"},
                "element": {
                    "type": "plain_text_input",
                    "action_id": "answer",
                    "multiline": True,
                    "max_length": MAX_OWN_WORDS,
                },
            },
        ],
    }


# ---------------------------------------------------------------- small helpers


def _update(client: WebClient, pending: Pending, message: render.Message, ts: str | None = None) -> None:
    ts = pending.message_ts or ts
    if not pending.channel or not ts:
        return
    try:
        client.chat_update(channel=pending.channel, ts=ts, text=message.text, blocks=message.blocks)
    except SlackApiError as exc:  # the answer still goes out; the old buttons just stay
        log.info("could not update clarification %s: %s", pending.id, exc.response.get("error"))


def parse_conversation(key: str) -> tuple[str, str, str] | None:
    """(team, channel, thread_ts) of a Slack conversation key (bot.slack.ask.conversation_key)."""
    parts = key.split(":")
    if len(parts) != 4 or parts[0] != "slack" or not parts[2] or not parts[3]:
        return None
    return parts[1], parts[2], parts[3]


def sweep(ctx: BotContext, client: WebClient) -> int:
    """Expire the open questions of Slack's threads whose time is up and say so on their messages
    (Teams sweeps its own: bot/teams/clarify.py)."""
    count = 0
    try:
        for pending in ctx.conversations.expire_due(CONVERSATION_PREFIX):
            count += 1
            _update(client, pending, closed_message(pending, expired_note(ctx)))
    except Exception:  # a sweep is housekeeping; it never stops an answer
        log.exception("sweeping expired clarifications failed")
    return count


# ---------------------------------------------------------------- asking


def replaced(ctx: BotContext, client: WebClient, ask: Ask, asked: Asked) -> None:
    """Hook of bot/slack/answering.py: a clarifying question was stored (the conversation service
    did, before it is shown); the older ones of the thread it replaced say so, and the expired
    ones of every thread are swept."""
    if asked.outcome.status != "clarify":
        return
    for old in asked.replaced:
        _update(client, old, closed_message(old, REPLACED_NOTE))
    sweep(ctx, client)


def shown(ctx: BotContext, client: WebClient, outcome: Outcome, message_ts: str) -> None:
    """Hook of bot.slack.answering: the clarifying question is posted; its message shows the answer later."""
    if outcome.clarification is not None:
        note_message(ctx, client, outcome.clarification.id, message_ts)


def note_message(ctx: BotContext, client: WebClient, clarification_id: str, message_ts: str) -> None:
    """Note the question's message; if it was answered, expired or replaced while being posted
    (no ts to update then), show that on it now (core/state/clarifications.py `set_message`)."""
    try:
        pending = ctx.conversations.clarification_shown(clarification_id, message_ts)
    except Exception:
        log.exception("could not note the message of clarifying question %s", clarification_id)
        return
    closed = settled_message(ctx, pending) if pending is not None else None
    if pending is not None and closed is not None:
        _update(client, pending, closed)


def settled_message(ctx: BotContext, pending: Pending) -> render.Message | None:
    """How a closed question's message reads (None while it is open)."""
    exchange = pending.exchange()
    if pending.status == ANSWERED and exchange is not None:
        return answered_message(pending, pending.answered_by, exchange)
    if pending.status == EXPIRED:
        return closed_message(pending, expired_note(ctx))
    if pending.status == REPLACED:
        return closed_message(pending, REPLACED_NOTE)
    return None


def continue_session(
    ctx: BotContext, client: WebClient, pending: Pending, message_ts: str | None = None
) -> None:
    """Ask the question again in its thread, with the answer just given added to the transcript."""
    if not pending.channel:
        return
    start(
        ctx,
        client,
        Ask(
            question=pending.question,
            team=pending.team or "",
            channel=pending.channel,
            user=pending.asker or pending.answered_by,
            thread_ts=pending.thread_ts,
            message_ts=message_ts,
            transcript=pending.transcript_after(),
        ),
    )


# ---------------------------------------------------------------- answering


def refusal(ctx: BotContext, pending: Pending | None, user: str | None) -> str | None:
    """Why `user` cannot answer this question now (None: they can); expires it when due."""
    if pending is None:
        return "I no longer have this question. Please ask again."
    if pending.status == ANSWERED:
        who = f"<@{pending.answered_by}>" if pending.answered_by else "Someone"
        exchange = pending.exchange()
        said = chosen(pending, exchange) if exchange is not None else pending.answer or ""
        return f"{who} already answered this question: {render.escape(said)}."
    if pending.status == REPLACED:
        return "A newer question in this thread replaced this one; please answer that one."
    if pending.status == EXPIRED or pending.expired():
        return expired_note(ctx)
    if ctx.settings.slack.only_asker_answers and pending.asker and user != pending.asker:
        return (
            f"Only <@{pending.asker}> can answer this — they asked the question. Mention me to ask your own."
        )
    return None


def settle_answer(
    ctx: BotContext,
    client: WebClient,
    pending: Pending,
    user: str | None,
    exchange: Exchange,
    message_ts: str | None = None,
    reply_ts: str | None = None,
) -> bool:
    """Record the answer (once), show it on the question, and answer the question again."""
    answered = ctx.conversations.answer_clarification(pending.id, exchange, user)
    if answered is None:
        return False
    _update(client, answered, answered_message(answered, user, exchange), message_ts)
    continue_session(ctx, client, answered, reply_ts)
    for hook in ctx.extras.get("clarified_hooks", ()):  # e.g. "Always read …?" (listeners/teaching.py)
        try:
            hook(
                ctx,
                client,
                clarification=answered.clarification,
                database=answered.database,
                channel=answered.channel,
                thread_ts=answered.thread_ts,
                user=user,
                exchange=exchange,
            )
        except Exception:  # an offer must never stop the answer
            log.exception("a clarification hook failed on %s", answered.id)
    return True


def _expire_if_due(ctx: BotContext, client: WebClient, pending: Pending | None, ts: str | None) -> None:
    if pending is not None and ctx.conversations.expire_clarification(pending):
        _update(client, pending, closed_message(pending, expired_note(ctx)), ts)


def on_option(ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any]) -> None:
    user = clicking_user(body)
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    message_ts = container.get("message_ts") or (body.get("message") or {}).get("ts")
    thread_ts = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
    try:
        data = json.loads(action.get("value") or "{}")
        clarification_id, index = str(data["c"]), int(data["i"])
    except (ValueError, KeyError, TypeError):
        match = OPTION.match(action.get("action_id", ""))
        clarification_id, index = "", int(match.group(1)) if match else -1
    pending = ctx.conversations.clarification(clarification_id) if clarification_id else None
    if pending is not None and channel and pending.channel and channel != pending.channel:
        pending = None  # a button of another conversation: never mix them
    _expire_if_due(ctx, client, pending, message_ts)
    why = refusal(ctx, pending, user)
    if why is None and pending is not None and not 0 <= index < len(pending.clarification.options):
        why = "That option is not part of this question any more. Please ask again."
    if why is not None or pending is None:
        tell(
            client,
            channel or (pending.channel if pending else None),
            user,
            thread_ts=thread_ts,
            text=why or "",
        )
        return
    exchange = exchange_for(pending.clarification, option=index)
    if not settle_answer(ctx, client, pending, user, exchange, message_ts):
        tell(
            client,
            channel,
            user,
            thread_ts=thread_ts,
            text=refusal(ctx, ctx.conversations.clarification(pending.id), user) or "",
        )


def on_other(ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any]) -> None:
    user = clicking_user(body)
    container = body.get("container") or {}
    channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
    thread_ts = container.get("thread_ts") or (body.get("message") or {}).get("thread_ts")
    try:
        clarification_id = str(json.loads(action.get("value") or "{}")["c"])
    except (ValueError, KeyError, TypeError):
        clarification_id = ""
    pending = ctx.conversations.clarification(clarification_id) if clarification_id else None
    _expire_if_due(ctx, client, pending, container.get("message_ts"))
    why = refusal(ctx, pending, user)
    if why is not None or pending is None:
        tell(client, channel, user, thread_ts=thread_ts, text=why or "")
        return
    trigger = body.get("trigger_id")
    try:
        if not trigger:
            raise ValueError("no trigger_id")
        client.views_open(trigger_id=trigger, view=other_modal(pending))
    except (SlackApiError, ValueError) as exc:
        log.info("could not open the answer modal: %s", exc)
        tell(
            client,
            channel,
            user,
            thread_ts=thread_ts,
            text="Reply in this thread with your answer, in your own words.",
        )


def on_details(ctx: BotContext, client: WebClient, body: dict[str, Any], action: dict[str, Any]) -> None:
    """Details of a clarifying question: what each reading means to the database."""
    pending = ctx.conversations.clarification(str(action.get("value") or ""))
    trigger = body.get("trigger_id")
    if pending is None or not trigger:
        container = body.get("container") or {}
        channel = (body.get("channel") or {}).get("id") or container.get("channel_id")
        tell(client, channel, clicking_user(body), "I no longer have this question.")
        return
    try:
        client.views_open(trigger_id=trigger, view=render.readings_modal(pending.clarification))
    except SlackApiError as exc:
        log.info("views.open failed: %s", exc.response.get("error"))


def own_words(view: dict[str, Any]) -> str:
    """The modal's answer as typed (modal inputs come unescaped: bot.slack.text.incoming)."""
    values = (view.get("state") or {}).get("values") or {}
    return incoming(((values.get("answer") or {}).get("answer") or {}).get("value") or "", escaped=False)


def on_other_submitted(
    ctx: BotContext, client: WebClient, body: dict[str, Any], view: dict[str, Any]
) -> None:
    """The modal's answer (already acknowledged): taken as the person's own words."""
    user = clicking_user(body)
    try:
        clarification_id = str(json.loads(view.get("private_metadata") or "{}")["c"])
    except (ValueError, KeyError, TypeError):
        clarification_id = ""
    text = own_words(view)
    pending = ctx.conversations.clarification(clarification_id) if clarification_id else None
    _expire_if_due(ctx, client, pending, None)
    why = refusal(ctx, pending, user)
    if why is not None or pending is None:
        if pending is not None:
            tell(client, pending.channel, user, thread_ts=pending.thread_ts, text=why or "")
        return
    exchange = exchange_for(
        pending.clarification, own_words=text[:MAX_OWN_WORDS], match_options=ctx.askbase.llm is None
    )
    if not settle_answer(ctx, client, pending, user, exchange):
        again = refusal(ctx, ctx.conversations.clarification(pending.id), user)
        tell(client, pending.channel, user, thread_ts=pending.thread_ts, text=again or "")


def on_thread_reply(ctx: BotContext, client: WebClient, ask: Ask) -> bool:
    """Reply hook: a message in a thread with an open question answers it ("Other…")."""
    pending = ctx.conversations.open_clarification(ask.conversation)
    if pending is None:
        return False
    if pending.expired():
        _expire_if_due(ctx, client, pending, None)
        return False  # answered as a new question instead
    if ctx.settings.slack.only_asker_answers and pending.asker and ask.user != pending.asker:
        return False
    exchange = exchange_for_reply(  # an option's number or words, else own words
        pending.clarification, ask.question, match_options=ctx.askbase.llm is None, limit=MAX_OWN_WORDS
    )
    return settle_answer(ctx, client, pending, ask.user, exchange, reply_ts=ask.message_ts)


# ---------------------------------------------------------------- after 👎


def after_thumbs_down(
    ctx: BotContext, client: WebClient, trace_id: str, user: str | None, comment: str
) -> None:
    """Hook of bot/slack/listeners/actions.py: a 👎 starts one more clarification round, on a worker."""
    if ctx.settings.engine.clarify != "off":
        ctx.queue.put(ask_after_rejection, ctx, client, trace_id, user, comment)


def ask_after_rejection(
    ctx: BotContext, client: WebClient, trace_id: str, user: str | None, comment: str
) -> None:
    """Worker: one Summarize–Review–Ask round about the rejected answer, posted in its thread."""
    try:
        _ask_after_rejection(ctx, client, trace_id, user, comment)
    except Exception:
        log.exception("asking back after the 👎 on trace %s failed", trace_id)


def _place(turn: StoredTurn) -> Place | None:
    found = parse_conversation(turn.conversation_id)
    return Place(team=found[0], channel=found[1], thread=found[2]) if found else None


def _ask_after_rejection(
    ctx: BotContext, client: WebClient, trace_id: str, user: str | None, comment: str
) -> None:
    turn = ctx.conversations.turn(trace_id)
    place = _place(turn) if turn is not None else None
    if place is None or place.channel is None:
        return
    team, channel, thread_ts = place.team, place.channel, place.thread
    rejected = ctx.conversations.ask_after_rejection(
        trace_id,
        asker_at(ctx, client, team, channel, user).principal,
        comment,
        source="slack",
        place=_place,
        only_asker=ctx.settings.slack.only_asker_answers,
    )
    if rejected.why == "not a question" and rejected.asked is not None:
        outcome = rejected.asked.outcome
        said = failure_of(outcome).text if outcome.status == "error" else "Thanks — noted."
        tell(client, channel, user, thread_ts=thread_ts, text=render.escape(said))
        return
    if rejected.asked is None or rejected.asked.pending is None:
        return  # the vote is recorded; nothing more to ask (see `Rejected.why`)
    outcome, pending = rejected.asked.outcome, rejected.asked.pending
    message = render.clarification_message(outcome)
    if user and is_private(ctx.settings, ctx.conversations, team, channel):
        ts = post_ephemeral(client, channel, user, message, thread_ts)
    else:
        posted = client.chat_postMessage(
            channel=channel, thread_ts=thread_ts, text=message.text, blocks=message.blocks
        )
        ts = posted.get("ts")
    if ts:
        note_message(ctx, client, pending.id, ts)
    for old in rejected.asked.replaced:
        _update(client, old, closed_message(old, REPLACED_NOTE))


# ---------------------------------------------------------------- wiring


def register(app: App, ctx: BotContext) -> None:
    ctx.extras.setdefault("clarify_hooks", []).append(replaced)
    ctx.extras.setdefault("clarify_posted_hooks", []).append(shown)
    ctx.extras.setdefault("thumbs_down_hooks", []).append(after_thumbs_down)
    ctx.reply_hooks.append(on_thread_reply)

    @app.action(OPTION)
    def option(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        on_option(ctx, client, body, action)

    @app.action(OTHER)
    def other(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        on_other(ctx, client, body, action)

    @app.action(render.CLARIFY_DETAILS)
    def details(ack: Any, body: dict[str, Any], action: dict[str, Any], client: WebClient) -> None:
        ack()
        on_details(ctx, client, body, action)

    @app.view(OTHER)
    def other_submitted(ack: Any, body: dict[str, Any], view: dict[str, Any], client: WebClient) -> None:
        if not own_words(view):
            ack(response_action="errors", errors={"answer": "Type your answer, or press Cancel."})
            return
        ack()
        on_other_submitted(ctx, client, body, view)
