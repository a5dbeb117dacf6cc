"""The buttons of Askbase's cards in Teams, and typed answers to a clarifying question.

A card's Action.Submit comes back as a message activity whose `value` is the button's data
(`{"askbase": verb, "trace": …}`) plus the card's inputs. Everything a button needs — question,
SQL, database, trace, the clarifying question and its options — is read back from the state
database by the id it carries, so a press works after a restart and on any web process.

Clarifying questions follow the Slack adapter's rules: only the asker answers
(`teams.only_asker_answers`), a question expires after `teams.clarification_ttl_s`, a newer one
replaces an older one, answering is a compare-and-set (a double press answers once), and the
answer is shown on the question's card (clarify.py) before the question is asked again with it. A 👎 starts
one more round about the rejected answer (Sphinteract's reject → ask → answer again).
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.hosting.core import TurnContext

from bot.failures import failure_of
from bot.teams import cards, clarify, links, teaching
from bot.teams.answering import Question, start
from bot.teams.incoming import CONVERSATION_PREFIX, Incoming
from bot.teams.outcome_cards import TEAMS
from bot.teams.proactive import card_activity, reference_json
from bot.teams.runtime import TeamsRuntime
from core.clarify.policy import exchange_for, exchange_for_reply
from core.clarify.transcript import Exchange
from core.conversation.service import ANSWERED, EXPIRED, REPLACED, Pending, Place, Rejected, StoredTurn
from core.teaching import stated_rule

log = logging.getLogger("askbase.teams")

MAX_OWN_WORDS = 500


async def say(context: TurnContext, text: str, subtle: str = "") -> None:
    await context.send_activity(card_activity(cards.message_card(text, subtle=subtle), text))


# ---------------------------------------------------------------- answers' buttons


async def details_items(
    runtime: TeamsRuntime, trace_id: str, room: int = cards.MAX_CARD_BYTES
) -> list[dict[str, Any]]:
    """Details of an answer (every stage of its trace), within `room` bytes of card."""
    trace = await runtime.run(runtime.conversations.trace, trace_id)
    if trace is None:
        return [cards.text_block("I no longer have the details of this answer.")]
    return cards.details_items(trace, room)


async def csv_items(
    runtime: TeamsRuntime, incoming: Incoming, trace_id: str, base_url: str | None
) -> list[dict[str, Any]]:
    """A fresh download link for the presser; the CSV is made when it is opened (files.py)."""
    turn = await runtime.run(runtime.conversations.turn, trace_id)
    if turn is None or not turn.answered:
        return [cards.text_block("There is no result to export on this message.")]
    if not runtime.askbase.may_query(incoming.principal, turn.database):
        return [cards.text_block(f"You may not query '{cards.escape(turn.database)}' here.")]
    if not base_url:
        return [
            cards.text_block(
                "I don't know my own address, so I can't make a download link. Set teams.public_url."
            )
        ]
    token, link = links.issue(
        runtime.link_key,
        "csv",
        trace_id,
        incoming.principal,
        runtime.settings.teams.link_ttl_s,
        now=runtime.now(),
    )
    expires = link.expires_at.strftime("%Y-%m-%d %H:%M UTC")
    return [
        cards.text_block(f"The CSV of “{cards.escape(turn.question)}”, for you"),
        {
            "type": "ActionSet",
            "actions": [
                {"type": "Action.OpenUrl", "title": "Download CSV", "url": links.url(base_url, token)}
            ],
        },
        cards.note(f"The link works until {expires}."),
    ]


async def on_details(runtime: TeamsRuntime, context: TurnContext, trace_id: str) -> None:
    """Details pressed on a card posted before they were answered privately (an Action.Submit)."""
    await context.send_activity(card_activity(cards.card(await details_items(runtime, trace_id)), "Details"))


async def on_csv(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, trace_id: str, base_url: str | None
) -> None:
    """CSV pressed on a card posted before it was answered privately (an Action.Submit)."""
    items = await csv_items(runtime, incoming, trace_id, base_url)
    await context.send_activity(card_activity(cards.card(items), "CSV"))


async def on_thumbs_down(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    trace_id: str,
    comment: str,
    base_url: str | None,
) -> None:
    """👎 pressed on a card posted before it was answered privately (an Action.Submit)."""
    await say(context, await record_down(runtime, context, incoming, trace_id, comment, base_url))


async def record_down(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    trace_id: str,
    comment: str,
    base_url: str | None,
) -> str:
    """Record the 👎 (and what was wrong); a comment stating a rule is proposed (queued); then, for
    the asker, one more clarification round, posted in the conversation. Returns the note for the
    person who voted."""
    noted = "Thanks — noted that this answer is wrong."
    comment = " ".join(comment.split())[:MAX_OWN_WORDS]
    await runtime.run(runtime.conversations.vote_down, trace_id, incoming.user, comment)
    rule = stated_rule(comment)
    reference, identity = context.activity.get_conversation_reference(), context.identity
    if rule is not None:  # "X means Y": proposed (drafting takes a while: in a turn of its own)

        async def propose(turn_context: TurnContext) -> None:
            await teaching.propose_stated_rule(runtime, turn_context, incoming, trace_id, rule)

        runtime.spawn(runtime.sender.within(reference, propose, identity))
    only_asker = runtime.settings.teams.only_asker_answers
    checked = await runtime.run(
        lambda: runtime.conversations.rejection(trace_id, incoming.principal, only_asker=only_asker)
    )
    if checked.why == "one open already":
        return "Thanks — noted. Please answer the open question above first."
    if checked.why != "ready" or checked.turn is None or not _teams(checked.turn):
        return noted
    where = Place(
        team=incoming.place.settings_team, channel=incoming.place.channel, address=reference_json(reference)
    )
    runtime.spawn(_ask_after_rejection(runtime, incoming, where, reference, identity, trace_id, comment))
    return "Thanks — noted. I'll ask what should change, in the conversation."


def _teams(turn: StoredTurn) -> bool:
    return turn.conversation_id.startswith(CONVERSATION_PREFIX)


async def _ask_after_rejection(
    runtime: TeamsRuntime,
    incoming: Incoming,
    where: Place,
    reference: Any,
    identity: Any,
    trace_id: str,
    comment: str,
) -> None:
    def ask() -> Rejected:
        return runtime.conversations.ask_after_rejection(
            trace_id,
            incoming.principal,
            comment,
            source="teams",
            place=lambda turn: where if _teams(turn) else None,
            only_asker=runtime.settings.teams.only_asker_answers,
        )

    async def post(context: TurnContext) -> None:
        rejected = await runtime.answer_in_turn(ask)
        if rejected.asked is None:
            return
        outcome = rejected.asked.outcome
        if outcome.status != "clarify" or outcome.clarification is None:
            said = failure_of(outcome, TEAMS).text if outcome.status == "error" else "Thanks — noted."
            await say(context, said)
            return
        response = await context.send_activity(
            card_activity(cards.clarification_card(outcome), outcome.clarification.question)
        )
        if response and response.id:
            await clarify.shown(runtime, context, outcome.clarification.id, response.id)
        await clarify.sweep(runtime)

    try:
        await runtime.sender.within(reference, post, identity)
    except Exception:
        log.exception("asking back after a 👎 on %s failed", trace_id)


# ---------------------------------------------------------------- clarifying questions


def refusal(runtime: TeamsRuntime, pending: Pending | None, user: str) -> str | None:
    """Why `user` cannot answer this question now (None: they can)."""
    if pending is None:
        return "I no longer have this question. Please ask again."
    if pending.status == ANSWERED:
        return f"This question was answered already: {pending.answer}."
    if pending.status == REPLACED:
        return "A newer question replaced this one; please answer that one."
    if pending.status == EXPIRED or pending.expired():
        return clarify.expired_note(runtime)
    if runtime.settings.teams.only_asker_answers and pending.asker and user != pending.asker:
        return "Only the person who asked can answer this. Mention me to ask your own question."
    return None


async def on_clarification(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    value: dict[str, Any],
    base_url: str | None,
    *,
    own_words: str | None = None,
) -> None:
    """A press on a reading (or "Other…" with one's own words)."""
    pending = await runtime.run(runtime.conversations.clarification, str(value.get("c") or ""))
    if pending is not None and pending.channel and pending.channel != incoming.place.channel:
        pending = None  # a card of another conversation: never mix them
    if pending is not None and await runtime.run(runtime.conversations.expire_clarification, pending):
        await clarify.close_card(context, pending, clarify.expired_note(runtime), incoming.reply_to)
    why = refusal(runtime, pending, incoming.user)
    index = -1
    if own_words is None:
        try:
            index = int(value.get("i", -1))
        except (TypeError, ValueError):
            index = -1
        if why is None and pending is not None and not 0 <= index < len(pending.clarification.options):
            why = "That option is not part of this question any more. Please ask again."
    elif not own_words.strip():
        why = why or "Type your answer in the box, then press Send."
    if why is not None or pending is None:
        await say(context, why or "")
        return
    if own_words is None:
        exchange = exchange_for(pending.clarification, option=index)
    else:
        exchange = exchange_for(
            pending.clarification,
            own_words=own_words.strip()[:MAX_OWN_WORDS],
            match_options=runtime.askbase.llm is None,
        )
    await settle(runtime, context, incoming, pending, exchange, base_url)


async def settle(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    pending: Pending,
    exchange: Exchange,
    base_url: str | None,
) -> bool:
    """Record the answer (once), show it on the question's card, and answer the question again."""
    answered = await runtime.run(
        runtime.conversations.answer_clarification, pending.id, exchange, incoming.user
    )
    if answered is None:
        again = await runtime.run(runtime.conversations.clarification, pending.id)
        await say(context, refusal(runtime, again, incoming.user) or "This question was answered already.")
        return False
    result = clarify.answered_note(
        clarify.chosen(answered, exchange), bool(exchange.own_words), incoming.user_name
    )
    await clarify.close_card(context, answered, result, incoming.reply_to)
    if not exchange.own_words:  # "Always read …?" (teaching.py)
        await teaching.offer_to_remember(
            runtime, context, answered.clarification, exchange.value, answered.database
        )
    await start(
        runtime,
        context,
        Question(
            text=answered.question,
            incoming=incoming,
            reference=context.activity.get_conversation_reference(),
            identity=context.identity,
            base_url=base_url,
            transcript=answered.transcript_after(),
            conversation=(answered.conversation_id, answered.database),
        ),
    )
    return True


async def on_typed_reply(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, key: str, base_url: str | None
) -> bool:
    """A message in a conversation with an open question answers it, when the asker writes it."""
    pending = await runtime.run(runtime.conversations.open_clarification, key)
    if pending is None:
        return False
    if pending.expired():
        if await runtime.run(runtime.conversations.expire_clarification, pending):
            await clarify.close_card(context, pending, clarify.expired_note(runtime))
        return False
    if runtime.settings.teams.only_asker_answers and pending.asker and incoming.user != pending.asker:
        return False
    exchange = exchange_for_reply(  # an option's number or words, else own words
        pending.clarification, incoming.text, match_options=runtime.askbase.llm is None, limit=MAX_OWN_WORDS
    )
    return await settle(runtime, context, incoming, pending, exchange, base_url)
