"""Trusted answers in Teams (issue 19): ✅ Verify on an answer card, the message `verified` that
lists the verified queries, and Unverify for analysts.

What a press does is decided once for every chat (core/conversation/verifying.py); this module finds out who
presses and words what happened. Analysts are the Entra ID object ids in `verified.analysts.users`
and the members of the Teams teams in `verified.analysts.teams_teams` (asked of the Bot Connector,
members.py), as the Slack side asks Slack for user groups. The verifier's display name is stored
with the query, so an answer reused from it says "✅ Verified by Ana on 2026-11-25".
"""

from __future__ import annotations

import logging

from microsoft_agents.hosting.core import TurnContext

from bot.teams import cards
from bot.teams.incoming import Incoming
from bot.teams.proactive import card_activity
from bot.teams.runtime import TeamsRuntime
from core.access import Principal
from core.conversation.verifying import verified_sentence
from core.verified.analysts import is_analyst
from core.verified.query import VerifiedQuery

log = logging.getLogger("askbase.teams")

LIST_LIMIT = 12  # verified queries in one card
NOT_ANALYST = (
    "Only analysts can verify or unverify answers. The bot's admins name them in "
    "verified.analysts (Entra ID object ids, or Teams teams whose members are analysts)."
)


ASKER = "askbase.asker"  # the turn's resolved principal, kept in its turn state


async def principal_for(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming) -> Principal:
    """Who presses, with the analyst teams they belong to: resolved once per turn (the membership
    of each analyst team is a Bot Connector call), whichever handler asks first."""
    kept = context.turn_state.get(ASKER)
    if isinstance(kept, Principal) and kept.user == incoming.principal.user:
        return kept
    who = await _principal(runtime, context, incoming)
    context.turn_state[ASKER] = who
    return who


async def _principal(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming) -> Principal:
    base = incoming.principal
    teams = runtime.settings.verified.analysts.teams_teams
    if not incoming.user or not teams or incoming.user in runtime.settings.verified.analysts.users:
        return base
    groups = [t for t in teams if await runtime.members.member(context, t, incoming.user)]
    return Principal.teams(user=base.user, channel=base.channel, team=base.team, groups=groups)


def verifier_of(q: VerifiedQuery) -> str:
    return cards.escape(q.verifier_name or q.verified_by or "someone")


def _date(q: VerifiedQuery) -> str:
    return f"{q.verified_at:%Y-%m-%d}"


async def say(context: TurnContext, text: str) -> None:
    """`text` is in the card's Markdown already (escaped where it carries people's words)."""
    await context.send_activity(card_activity(cards.card([cards.text_block(text)]), text))


async def on_verify(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, trace_id: str) -> str:
    """✅ Verify pressed on the answer `trace_id`; returns what happened (for logs and tests)."""
    who = await principal_for(runtime, context, incoming)
    place = incoming.place
    done = await runtime.run(
        lambda: runtime.conversations.verify(
            who,
            trace_id,
            verifier_name=incoming.user_name,
            team=place.settings_team,
            channel=place.channel,
        )
    )
    result = done.verification
    if done.status in ("new", "replaced") and result is not None:
        name = cards.escape(incoming.user_name or "Someone")
        await say(context, verified_sentence(result, name, cards.escape))
    elif done.status == "already" and result is not None:
        q = result.query
        await say(context, f"This is verified query #{q.id} already (by {verifier_of(q)} on {_date(q)}).")
    else:
        database = cards.escape(done.database)
        await say(
            context,
            {
                "not an analyst": NOT_ANALYST,
                "access": f"You may not query '{database}' here.",
                "database": f"The database '{database}' is not configured any more.",
            }.get(done.status, "There is no query to verify on this message."),
        )
    log.info("verify %s by %s: %s", trace_id, incoming.user, done.status)
    return done.status


async def on_unverify(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, query_id: int | None
) -> None:
    who = await principal_for(runtime, context, incoming)
    done = await runtime.run(runtime.conversations.unverify, who, query_id)
    if done.status == "not an analyst":
        await say(context, NOT_ANALYST)
    elif done.query is None:
        await say(context, "That verified query no longer exists.")
    else:
        q = done.query
        await say(
            context,
            f"Unverified #{q.id} “{cards.escape(q.question)}”: questions like it get newly written SQL again.",
        )


def query_items(q: VerifiedQuery, *, analyst: bool) -> list[dict[str, object]]:
    items: list[dict[str, object]] = [
        cards.text_block(f"**#{q.id}** {cards.escape(q.question)}"),
        cards.note(
            f"{cards.escape(q.database)} · verified by {verifier_of(q)} on {_date(q)} · values that may "
            f"change: {cards.escape(q.describe_params())}"
        ),
    ]
    if q.stale:
        items.append(
            cards.note(
                f"⚠️ **Stale** since {q.stale_at:%Y-%m-%d}: {cards.escape(q.stale_reason)} — not reused "
                "until it runs again or a correct answer to it is verified."
                if q.stale_at
                else f"⚠️ **Stale**: {cards.escape(q.stale_reason)}"
            )
        )
    elif not q.reusable:
        items.append(cards.note(f"Only an example for the SQL writer: {cards.escape(q.note)}."))
    if analyst:
        items.append({"type": "ActionSet", "actions": [cards.submit("Unverify", "unverify", q=q.id)]})
    return items


def list_card(queries: list[VerifiedQuery], *, analyst: bool) -> dict[str, object]:
    if not queries:
        body = [
            cards.text_block(
                "No verified queries yet. An analyst presses **✅ Verify** on a right answer; questions "
                "like it are then answered from that SQL, marked ✅."
            )
        ]
        return cards.card(body)
    stale = sum(1 for q in queries if q.stale)
    extra = f", {stale} stale" if stale else ""
    body = [cards.text_block(f"**Verified queries** ({len(queries)}{extra})", size="Medium")]
    for q in queries[:LIST_LIMIT]:
        body.append({"type": "Container", "separator": True, "items": query_items(q, analyst=analyst)})
    if len(queries) > LIST_LIMIT:
        body.append(cards.note(f"… and {len(queries) - LIST_LIMIT} more."))
    return cards.card(body)


async def on_list(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming) -> None:
    """The message `verified`: the verified queries this person may see (analysts: all, with
    Unverify)."""
    who = await principal_for(runtime, context, incoming)
    queries = await runtime.run(runtime.conversations.visible_queries, who)
    content = list_card(queries, analyst=is_analyst(runtime.settings, who))
    await context.send_activity(card_activity(content, f"{len(queries)} verified queries"))
