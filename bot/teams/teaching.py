"""Teaching Askbase what words mean, in Teams (issue 32) — the same rules as in Slack.

- "@Askbase define loss ratio as total loss divided by premium" drafts a definition
  (core/teaching.py `Teacher.propose`) and posts a card where it was proposed: the definition in
  words, its SQL, a preview figure, and **Approve** / **Reject** that only analysts can use
  (others get a polite refusal). An analyst's approval makes it active at once; anyone else's
  proposal is not used until an analyst approves it. What cannot be drafted is answered with why
  and a `define …` that works on this database.
- Approving posts a note with **Undo** (analysts): the version before comes back.
- **Correct this** under an assumption on an answer card is a form (the word, what it should mean)
  that proposes the same way.
- After someone picks a reading in a clarifying question: "Always read 'existing' as …?" with
  **For me** / **For this channel**; only the person who picked it can press them.
- A 👎 whose comment states a rule ("X means Y", "define X as Y") proposes it, queued like any.
- `definitions` lists the proposals waiting for an analyst (analysts: with Approve / Reject, and
  the answers people voted on, with **Use as example** — only an analyst's 👍 teaches) and the
  readings the person remembered, with Remove.

Only the engine's teaching service changes definitions; this module reads presses and words what
happened. Names, descriptions and SQL are data: escaped for the card's Markdown.
"""

from __future__ import annotations

import logging
from typing import Any

from microsoft_agents.hosting.core import TurnContext

from bot.answer_view import choices, short_date
from bot.teams import cards
from bot.teams.answering import database_for
from bot.teams.incoming import Incoming
from bot.teams.proactive import card_activity
from bot.teams.runtime import TeamsRuntime
from bot.teams.verified import principal_for
from core.answer import Clarification
from core.definitions.model import Definition
from core.teaching import Proposal, Review, Teacher, Teaching, Where

log = logging.getLogger("askbase.teams")

NOT_ANALYST = (
    "Only analysts can approve, reject or undo definitions. The bot's admins name them in "
    "verified.analysts (Entra ID object ids, or Teams teams whose members are analysts)."
)
USAGE = "Write it as define <words> as <what they mean>, e.g. {example}"
LIST_LIMIT = 8
EXAMPLE = "teach_example"  # Use as example: an analyst confirms an answer someone else voted 👍
_KINDS = {"filter": "a condition", "metric": "a metric", "entity": "a business thing"}


def teacher(runtime: TeamsRuntime) -> Teacher:
    """The engine's teaching service (it keeps nothing of its own between calls)."""
    return runtime.conversations.teacher


async def send(context: TurnContext, content: dict[str, Any], text: str) -> str | None:
    response = await context.send_activity(card_activity(content, text))
    return response.id if response is not None else None


async def say(context: TurnContext, text: str) -> None:
    """`text` in the card's Markdown already (escaped where it carries data or people's words)."""
    await send(context, cards.card([cards.text_block(text)]), text)


# ---------------------------------------------------------------- cards


def definition_items(d: Definition, sql: str, preview: str) -> list[dict[str, Any]]:
    words = d.description or d.text
    kind = _KINDS.get(d.kind, d.kind)
    items = [
        cards.text_block(
            f"**{cards.escape(d.name)}** — {kind}" + (f": {cards.escape(words)}" if words else "")
        )
    ]
    if sql:
        items.append(cards.text_block(cards.escape(cards.clip(sql, cards.MAX_SQL)), fontType="Monospace"))
    if preview:
        items.append(cards.note(f"📊 Preview: {cards.escape(preview)}"))
    return items


def decision_actions(id_: int) -> list[dict[str, Any]]:
    return [cards.submit("Approve", "teach_approve", d=id_), cards.submit("Reject", "teach_reject", d=id_)]


def proposal_card(p: Proposal, who: str, example: str, *, lead: str = "") -> dict[str, Any]:
    if p.definition is None or not p.stored:
        why = p.problem or "That cannot be defined over this database's data."
        body = [cards.text_block(f"⚠️ I could not draft that definition: {cards.escape(why)}")]
        if example:
            body.append(cards.note(cards.escape(USAGE.format(example=example))))
        return cards.card(body)
    head = lead or f"{cards.escape(who or 'Someone')} proposed a definition on {cards.escape(p.database)}:"
    body = [cards.note(head), *definition_items(p.definition, p.sql, p.preview)]
    if p.may_approve:
        body.append(
            cards.note("You are an analyst: Approve makes it active at once, for every question after.")
        )
    else:
        body.append(
            cards.note(
                "📥 Sent to the analysts for review: it is not used until one approves it "
                "(here, or from their definitions list)."
            )
        )
    return cards.card(body, decision_actions(p.id or 0))


def offer_card(word: str, reading: str, clarification_id: str, index: int) -> dict[str, Any]:
    def remember(title: str, where: Where) -> dict[str, Any]:
        return cards.submit(title, "teach_remember", c=clarification_id, i=index, w=where)

    return cards.card(
        [cards.text_block(f"💡 Always read '{cards.escape(word)}' as {cards.escape(reading)}?")],
        [remember("For me", "me"), remember("For this channel", "channel")],
    )


def review_items(reviews: list[Review]) -> list[dict[str, Any]]:
    """For analysts: answers people voted on (not analysts: nothing was learned), with Use as
    example on a 👍 and what was wrong on a 👎."""
    if not reviews:
        return []
    body: list[dict[str, Any]] = [
        cards.text_block(
            "**Votes to review** — a 👍 teaches me only once an analyst makes it an example", size="Medium"
        )
    ]
    for r in reviews:
        when = f", {short_date(r.at.isoformat())}" if r.at else ""
        items: list[dict[str, Any]] = [
            cards.text_block(f"{'👍' if r.verdict == 'up' else '👎'} **{cards.escape(r.question)}**"),
            cards.note(
                f"{cards.escape(r.database)}{when}" + (f" · “{cards.escape(r.comment)}”" if r.comment else "")
            ),
        ]
        if r.verdict == "up":
            items.append(
                {"type": "ActionSet", "actions": [cards.submit("Use as example", EXAMPLE, trace=r.trace_id)]}
            )
        body.append({"type": "Container", "separator": True, "items": items})
    return body


def list_card(
    pending: list[Definition],
    remembered: list[tuple[str, Definition]],
    t: Teacher,
    *,
    analyst: bool,
    reviews: list[Review] | None = None,
) -> dict[str, Any]:
    body: list[dict[str, Any]] = []
    if analyst:
        body.append(
            cards.text_block(
                f"**Proposed definitions** ({len(pending)} waiting for an analyst)", size="Medium"
            )
        )
        if not pending:
            body.append(cards.note("None waiting. People propose with: define X as Y"))
        for d in pending[:LIST_LIMIT]:
            when = short_date(d.provenance.date)
            items: list[dict[str, Any]] = [
                cards.note(
                    f"On {cards.escape(t.database_of(d.id or 0) or '?')}"
                    + (f", proposed {when}" if when else "")
                ),
                *definition_items(d, "", ""),
                {"type": "ActionSet", "actions": decision_actions(d.id or 0)},
            ]
            body.append({"type": "Container", "separator": True, "items": items})
        if len(pending) > LIST_LIMIT:
            body.append(cards.note(f"… and {len(pending) - LIST_LIMIT} more."))
        body.extend(review_items(reviews or []))
    elif pending:
        body.append(cards.note(f"{len(pending)} proposed definition(s) wait for an analyst."))
    body.append(cards.text_block(f"**Readings you remembered** ({len(remembered)})", size="Medium"))
    if not remembered:
        body.append(
            cards.note("None. After you pick a reading in a question I ask back, I offer to remember it.")
        )
    for database, d in remembered[:LIST_LIMIT]:
        where = "for you" if d.scope.user else "in this place" if d.scope.channel else "everywhere"
        when = short_date(d.provenance.date)
        body.append(
            {
                "type": "Container",
                "separator": True,
                "items": [
                    cards.text_block(
                        f"**{cards.escape(d.name)}** — {cards.escape(d.description or d.text or d.sql)}"
                    ),
                    cards.note(f"{cards.escape(database)} · {where}" + (f" · {when}" if when else "")),
                    {"type": "ActionSet", "actions": [cards.submit("Remove", "teach_remove", d=d.id or 0)]},
                ],
            }
        )
    return cards.card(body)


# ---------------------------------------------------------------- proposing


async def propose(
    runtime: TeamsRuntime,
    context: TurnContext,
    incoming: Incoming,
    teaching: Teaching,
    *,
    database: str | None = None,
    trace_id: str | None = None,
    lead: str = "",
) -> Proposal:
    """Draft `teaching`, keep it proposed, and post the proposal card here."""
    who = await principal_for(runtime, context, incoming)
    name: str = database if database else await runtime.run(database_for, runtime, incoming.place)
    t = teacher(runtime)

    def draft() -> tuple[Proposal, str]:
        proposal = t.propose_teaching(name, teaching, who, trace_id=trace_id)
        return proposal, (t.example(name) if not proposal.stored else "")

    proposal, example = await runtime.run(draft)
    content = proposal_card(proposal, incoming.user_name, example, lead=lead)
    await send(context, content, f"Proposed definition: {teaching.name}")
    log.info("definition of %r proposed by %s on %s: %s", teaching.name, incoming.user, name, proposal.id)
    return proposal


async def on_define(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, teaching: Teaching
) -> None:
    try:
        await propose(runtime, context, incoming, teaching)
    except Exception:
        log.exception("proposing a definition of %r failed", teaching.name)
        await say(context, "Something went wrong while drafting that definition.")


async def on_list(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming) -> None:
    """The message `definitions`: what waits for analysts, and what this person remembered."""
    who = await principal_for(runtime, context, incoming)
    t = teacher(runtime)
    analyst = t.may_decide(who)
    pending = await runtime.run(t.pending)
    remembered = await runtime.run(t.remembered_by, incoming.user)
    reviews = await runtime.run(t.votes_to_review, LIST_LIMIT) if analyst else []
    await send(context, list_card(pending, remembered, t, analyst=analyst, reviews=reviews), "Definitions")


# ---------------------------------------------------------------- presses


def _number(value: Any) -> int:
    try:
        return int(str(value))
    except ValueError:
        return 0


async def _close(context: TurnContext, incoming: Incoming, note: str, d: Definition) -> None:
    """The card pressed (a proposal) keeps its words, loses its buttons and says what became of it."""
    if not incoming.reply_to:
        return
    activity = card_activity(cards.card([*definition_items(d, "", ""), cards.text_block(note)]), note)
    activity.id = incoming.reply_to
    try:
        await context.update_activity(activity)
    except Exception as exc:  # the note below says it anyway
        log.info("could not update the proposal card %s: %s", incoming.reply_to, exc)


async def on_press(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, verb: str, value: dict[str, Any]
) -> str:
    """A teaching button (teach_approve, teach_reject, teach_undo, teach_remove, teach_remember,
    teach_correct); returns what happened (for logs and tests)."""
    who = await principal_for(runtime, context, incoming)
    t = teacher(runtime)
    name = cards.escape(incoming.user_name or "Someone")
    if verb in ("teach_approve", "teach_reject", "teach_undo", EXAMPLE) and not t.may_decide(who):
        await say(context, NOT_ANALYST)
        return "not an analyst"
    if verb == EXAMPLE:
        vote = await runtime.run(t.use_as_example, str(value.get("trace") or ""), who)
        if vote.status != "example":
            await say(context, "I no longer have that answer.")
            return "gone"
        await say(
            context,
            f"✅ **{cards.escape(vote.question)}** is an example now: I learn from its SQL on {cards.escape(vote.database)}.",
        )
        return "example"
    id_ = _number(value.get("d"))
    if verb == "teach_approve":
        d = await runtime.run(t.approve, id_, who)
        if d is None:
            await say(context, "That proposal is no longer waiting: it was approved or rejected already.")
            return "gone"
        note = (
            f"✅ {name} approved **{cards.escape(d.name)}**: it is active at once, for every question after."
        )
        await _close(context, incoming, note, d)
        await send(
            context, cards.card([cards.text_block(note)], [cards.submit("Undo", "teach_undo", d=d.id)]), note
        )
        return "approved"
    if verb == "teach_reject":
        d = await runtime.run(t.get, id_)
        if d is None or not await runtime.run(t.reject, id_, who):
            await say(context, "That proposal is no longer waiting: it was approved or rejected already.")
            return "gone"
        note = f"❌ {name} rejected **{cards.escape(d.name)}**: it is not used."
        await _close(context, incoming, note, d)
        await say(context, note)
        return "rejected"
    if verb == "teach_undo":
        d = await runtime.run(t.get, id_)
        done, restored = await runtime.run(t.undo, id_, who)
        if not done or d is None:
            await say(context, "There is nothing to undo: that definition is not active any more.")
            return "gone"
        back = "the version before is active again" if restored is not None else "it is no longer defined"
        note = f"↩️ {name} undid **{cards.escape(d.name)}**: {back}."
        await _close(context, incoming, note, d)
        await say(context, note)
        return "undone"
    if verb == "teach_remove":
        d = await runtime.run(t.get, id_)
        if d is None or not await runtime.run(t.remove, id_, who):
            await say(context, "You can remove only the readings you remembered.")
            return "refused"
        await say(context, f"Removed **{cards.escape(d.name)}**: it is read as before.")
        return "removed"
    if verb == "teach_remember":
        return await on_remember(runtime, context, incoming, value)
    if verb == cards.CORRECT:
        return await on_correct(runtime, context, incoming, value)
    log.info("unknown teaching action %r", verb)
    return "unknown"


async def on_correct(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, value: dict[str, Any]
) -> str:
    """The Correct this form under an assumption: propose what the word should mean."""
    i = _number(value.get("i"))
    word = " ".join(str(value.get(f"word_{i}") or "").split()).strip(" '\"“”‘’")
    meaning = " ".join(str(value.get(f"meaning_{i}") or "").split())
    if not word or not meaning:
        await say(context, "Fill in the word and what it should mean, then press Propose.")
        return "empty"
    trace_id = str(value.get("trace") or "")
    database = await runtime.run(teacher(runtime).answer_database, trace_id) if trace_id else None
    await propose(
        runtime,
        context,
        incoming,
        Teaching(word[:80], meaning[:500]),
        database=database,
        trace_id=trace_id or None,
    )
    return "proposed"


async def on_remember(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, value: dict[str, Any]
) -> str:
    who = await principal_for(runtime, context, incoming)
    where: Where = "channel" if value.get("w") == "channel" else "me"
    done = await runtime.run(
        teacher(runtime).remember_choice, str(value.get("c") or ""), _number(value.get("i")), who, where
    )
    if done.status == "remembered" and done.offer is not None:
        scope = "for you" if where == "me" else "for this place"
        await say(
            context,
            f"🧠 Remembered {scope}: '{cards.escape(done.offer.word)}' is read as {cards.escape(done.offer.reading)}. "
            "Type definitions to see or remove it.",
        )
    else:
        await say(
            context,
            {
                "gone": "I no longer have that question.",
                "not yours": "Only the person who chose that reading can remember it.",
                "no word": "That choice names no word I could remember.",
                "no channel": "There is no place to remember it for here.",
                "does not fit": "That reading no longer fits the data, so I did not remember it.",
            }.get(done.status, "I could not remember that."),
        )
    return done.status


# ---------------------------------------------------------------- learned from clarifications and 👎


async def offer_to_remember(
    runtime: TeamsRuntime, context: TurnContext, clarification: Clarification, value: str, database: str
) -> None:
    """After a reading was picked in a clarifying question: "Always read …?" (For me / For this channel)."""
    index = next((i for i, o in enumerate(clarification.options) if o.value == value), -1)
    offer = teacher(runtime).offer(clarification, index, database) if value else None
    if offer is None:
        return
    reading = offer.reading
    if index >= 0:  # in words, as it was offered (less the figure on its button)
        reading = choices(clarification)[index].label.split(" → ")[0].strip()
    try:
        await send(
            context,
            offer_card(offer.word, reading, clarification.id, index),
            f"Always read '{offer.word}' as {reading}?",
        )
    except Exception:  # an offer must never stop the answer
        log.exception("could not offer to remember a reading of %s", clarification.id)


async def propose_stated_rule(
    runtime: TeamsRuntime, context: TurnContext, incoming: Incoming, trace_id: str, rule: Teaching
) -> None:
    """A 👎 comment that states a rule: proposed (queued like any) on the answer's database."""
    database = await runtime.run(teacher(runtime).answer_database, trace_id)
    if database is None:
        return
    lead = f"{cards.escape(incoming.user_name or 'Someone')}'s comment states a rule, so I drafted it as a definition on {cards.escape(database)}:"
    try:
        await propose(runtime, context, incoming, rule, database=database, trace_id=trace_id, lead=lead)
    except Exception:
        log.exception("proposing the rule in the 👎 on %s failed", trace_id)
