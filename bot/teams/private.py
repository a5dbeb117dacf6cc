"""Presses answered to the person who pressed, and nobody else: Details, CSV, 👍 and 👎.

In a channel every message the bot posts is everyone's: a Details card, a CSV link signed for
one person, "thanks for your vote" would all land in the conversation. So these buttons are
`Action.Execute` (cards.py): Teams sends an `adaptiveCard/action` invoke, and the card the bot
answers that invoke with replaces the answer's card *for the presser only* (Universal Actions'
user-specific view) — the answer as it was posted (kept when it was posted, answering.py), with
their part below it: the trace's stages, their download link, their vote noted. The request is
answered once that card is ready (server.py), which takes a few reads of the state database.

Teams' own feedback buttons (the activity's feedback loop, in chats) come as a
`message/submitAction` invoke naming the message: which answer that was is kept too. A like is
a 👍, a dislike a 👎 with what the person typed: the same as the card's buttons (core/conversation/votes.py:
only an analyst's 👍 teaches).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from microsoft_agents.hosting.core import TurnContext

from bot.teams import actions, cards
from bot.teams.incoming import Incoming
from bot.teams.outcome_cards import CARD_KIND, MESSAGE_KIND, message_key
from bot.teams.runtime import TeamsRuntime
from bot.teams.verified import principal_for

log = logging.getLogger("askbase.teams")

CARD_RESPONSE = "application/vnd.microsoft.card.adaptive"
NOTED_TRIES, NOTED_WAIT_S = 10, 0.2


async def view(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    verb: str,
    value: dict[str, Any],
    base_url: str | None,
) -> dict[str, Any]:
    """The card the presser sees after pressing `verb` (details, csv, up, down) on an answer."""
    trace_id = str(value.get("trace") or "")
    kept = await runtime.run(runtime.askbase.kept, CARD_KIND, trace_id) if trace_id else None
    content = kept.get("card") if kept is not None and isinstance(kept.get("card"), dict) else None
    if verb == "details":
        room = cards.MAX_CARD_BYTES - (cards.size_of(content) if content is not None else 0) - 1000
        items = await actions.details_items(runtime, trace_id, max(6000, room))
    elif verb == "csv":
        items = await actions.csv_items(runtime, incoming, trace_id, base_url)
    elif verb == "up":
        who = await principal_for(runtime, context, incoming)
        _, note = await runtime.run(runtime.conversations.vote_up, trace_id, who)
        items = [cards.text_block(f"👍 {note}")]
    else:
        comment = str(value.get("comment") or "")
        note = await actions.record_down(runtime, context, incoming, trace_id, comment, base_url)
        items = [cards.text_block(f"👎 {note}")]
    return cards.for_presser(content, items)


def card_response(content: dict[str, Any]) -> dict[str, Any]:
    """An `adaptiveCard/action` invoke's answer that shows `content` to the presser."""
    return {"statusCode": 200, "type": CARD_RESPONSE, "value": content}


async def on_feedback(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    value: dict[str, Any],
    base_url: str | None,
) -> str:
    """Teams' own 👍 / 👎 under an answer (`message/submitAction`, actionName "feedback"); returns
    what it did (for logs and tests)."""
    if value.get("actionName") != "feedback" or not incoming.reply_to:
        return "ignored"
    found = value.get("actionValue")
    action: dict[str, Any] = found if isinstance(found, dict) else {}
    message = message_key(incoming.place.conversation_id, incoming.reply_to)
    kept = await runtime.run(runtime.askbase.kept, MESSAGE_KIND, message)
    for _ in range(NOTED_TRIES):  # pressed as it appeared: its id is noted just after it is posted
        if kept is not None:
            break
        await asyncio.sleep(NOTED_WAIT_S)
        kept = await runtime.run(runtime.askbase.kept, MESSAGE_KIND, message)
    trace_id = str(kept.get("trace") or "") if kept is not None else ""
    if not trace_id:
        log.info("feedback on a message that is no answer I kept (%s)", incoming.reply_to)
        return "unknown message"
    if action.get("reaction") == "like":
        who = await principal_for(runtime, context, incoming)
        vote, _ = await runtime.run(runtime.conversations.vote_up, trace_id, who)
        return f"up: {vote.status}"
    said = action.get("feedback")
    if isinstance(said, str):
        try:
            said = json.loads(said)
        except ValueError:
            said = {"feedbackText": said}
    comment = str(said.get("feedbackText") or "") if isinstance(said, dict) else ""
    await actions.record_down(runtime, context, incoming, trace_id, comment, base_url)
    return "down"
