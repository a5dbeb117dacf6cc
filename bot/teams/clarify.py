"""What a Teams clarifying question's card says once the question is closed, wherever that happens.

A card shows its question's fate: answered (by whom, with what), expired, or replaced by a newer
question. Three moments close a question, and each updates the card:

- a press or a typed answer (actions.py): in that turn, on the card pressed or on the one noted;
- the card's own posting: its activity id is known only once Teams has it, and an answer or an
  expiry may come first. The poster notes the id and reads the question's status in the same
  transaction (the conversation service's `clarification_shown`, as Slack does): still open, whoever
  closes it later finds the id; closed already, the poster shows the outcome now;
- the expiry sweep (`sweep`), run after every new clarifying question and every half lease
  (server.py), like Slack's: the Teams questions whose time is up are expired once across all web
  processes (`expire_due`), and each card is updated through the conversation reference stored
  with its question, in a proactive turn of its own conversation.
"""

from __future__ import annotations

import asyncio
import logging

from microsoft_agents.hosting.core import TurnContext

from bot.answer_view import choice_label, question_in_words
from bot.teams import cards
from bot.teams.incoming import CONVERSATION_PREFIX
from bot.teams.proactive import card_activity, reference_from
from bot.teams.runtime import TeamsRuntime
from core.clarify.transcript import Exchange
from core.conversation import claims
from core.conversation.service import ANSWERED, EXPIRED, REPLACED, Pending

log = logging.getLogger("askbase.teams")

REPLACED_NOTE = "⬇️ Replaced by a newer question in this conversation."


def expired_note(runtime: TeamsRuntime) -> str:
    after = runtime.conversations.expired_after("teams")
    return f"⏰ This question expired after {after} without an answer. Ask your question again to start over."


def answered_note(answer: str, own_words: bool, who: str | None) -> str:
    """'✅ Alice chose **suppliers**' (an option) or '✅ Alice answered: “…”' (own words); without
    a name, '✅ Answered: …'."""
    said = f"“{cards.escape(answer)}”" if own_words else f"**{cards.escape(answer)}**"
    if not who:
        return f"✅ Answered: {said}"
    return f"✅ {cards.escape(who)} {'answered:' if own_words else 'chose'} {said}"


def chosen(pending: Pending, exchange: Exchange) -> str:
    """What was answered: an option pressed as it was offered (a reading in words), typed words
    as they were typed."""
    if exchange.answer not in {o.label for o in pending.clarification.options}:
        return exchange.answer
    return choice_label(pending.clarification, exchange.value, exchange.answer)


def closed_note(runtime: TeamsRuntime, pending: Pending) -> str | None:
    """What the card of a closed question says (None while it is open). The answerer's name is
    known only in the turn they answered in; later, the card says what was answered."""
    exchange = pending.exchange()
    if pending.status == ANSWERED and pending.answer is not None and exchange is not None:
        return answered_note(chosen(pending, exchange), not pending.answer_value, None)
    if pending.status == EXPIRED:
        return expired_note(runtime)
    if pending.status == REPLACED:
        return REPLACED_NOTE
    return None


async def close_card(
    context: TurnContext, pending: Pending, result: str, activity_id: str | None = None
) -> None:
    """Replace the question's card with what became of it (its buttons go)."""
    target = pending.message_ts or activity_id
    if not target:
        return
    activity = card_activity(cards.closed_question_card(question_in_words(pending.clarification), result))
    activity.id = target
    try:
        await context.update_activity(activity)
    except Exception as exc:  # the answer still goes out; the old buttons just stay
        log.info("could not update clarification %s: %s", pending.id, exc)


async def shown(runtime: TeamsRuntime, context: TurnContext, clarification_id: str, activity_id: str) -> None:
    """The card is posted: note its id; if the question closed while it was being posted (nobody
    could update a card without an id then), show that on it now."""
    try:
        pending = await runtime.run(runtime.conversations.clarification_shown, clarification_id, activity_id)
    except Exception:
        log.exception("could not note the card of clarifying question %s", clarification_id)
        return
    note = closed_note(runtime, pending) if pending is not None else None
    if pending is not None and note is not None:
        await close_card(context, pending, note)


async def close_elsewhere(runtime: TeamsRuntime, pending: Pending, result: str) -> bool:
    """Update the card of `pending` from outside its conversation's turn (the sweep): a proactive
    turn through the reference stored with it; False when it has none or Teams refused."""
    if not pending.address or not pending.message_ts:
        return False

    async def work(context: TurnContext) -> None:
        await close_card(context, pending, result)

    try:
        await runtime.sender.within(reference_from(pending.address), work)
    except Exception as exc:
        log.info("could not reach the card of clarification %s: %s", pending.id, exc)
        return False
    return True


async def sweep(runtime: TeamsRuntime) -> int:
    """Expire the Teams questions whose time is up and say so on their cards; how many expired."""
    try:
        expired = await runtime.run(runtime.conversations.expire_due, CONVERSATION_PREFIX)
    except Exception:  # a sweep is housekeeping; it never stops an answer
        log.exception("sweeping expired clarifications failed")
        return 0
    note = expired_note(runtime)
    for pending in expired:
        await close_elsewhere(runtime, pending, note)
    return len(expired)


def sweeper(runtime: TeamsRuntime, loop: asyncio.AbstractEventLoop) -> claims.Recovery:
    """The sweep at start and every half lease, on a daemon thread, its turns on `loop`: a
    question nobody comes back to still shows it expired."""

    def run() -> None:
        asyncio.run_coroutine_threadsafe(sweep(runtime), loop).result(
            timeout=max(30.0, runtime.claims.lease_s)
        )

    return claims.Recovery(run, runtime.claims.lease_s, name="askbase-teams-expiry")
