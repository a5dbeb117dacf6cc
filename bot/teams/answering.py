"""A question in Teams, from the first sign of work to the answer card in the same conversation.

`start` runs in the request's turn: it shows "typing…" and queues the work. The work runs in a
proactive turn of the same conversation (proactive.py) — in a personal chat with Teams'
informative updates naming each step (streaming.py), elsewhere with the typing indicator kept
going — while the engine answers on a worker thread, and posts the card: the answer, a
clarifying question (stored before it is shown, so the first click finds it), or an error. An
answer whose SQL an LLM wrote carries Teams' "AI generated" label, and every answer Teams'
feedback buttons in chats (the card's own 👍 / 👎 in channels, where Teams shows none); the card
and which message it is are kept (core/askbase.py `keep`) for the presses answered privately
later (private.py). A chart sits in the card itself when it fits (a small PNG inline), else
behind a link that lives as long as the answer. The database is the thread's (a channel thread
stays on the one it started with), else the place's `db NAME` choice, else the default.
Failures are worded by bot/failures.py as in Slack — for an analyst with the schema's names —
with Retry only when trying again can help; what the admins should fix goes to the log under
the trace id, never into the card.
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from microsoft_agents.activity import Activity, ActivityTypes, ConversationReference
from microsoft_agents.hosting.core import TurnContext
from microsoft_agents.hosting.core.app.typing_indicator import TypingIndicator, TypingOptions
from microsoft_agents.hosting.core.authorization import ClaimsIdentity

from bot.answer_view import example_question, presented
from bot.charts import chart_for, chart_spec
from bot.failures import BUSY, INTERNAL, Commands, failure_of, setup_problem
from bot.teams import cards, clarify, links
from bot.teams.incoming import Incoming, Place
from bot.teams.proactive import card_activity, reference_json
from bot.teams.runtime import TeamsRuntime
from bot.teams.streaming import InformativeUpdates
from bot.teams.verified import principal_for
from core.access import Principal
from core.answer import Outcome
from core.clarify.transcript import Transcript
from core.database import UnknownDatabase, not_configured
from core.state import clarifications, conversations
from core.state.channel_settings import channel_database
from core.trace import Trace
from core.verified.analysts import configured as analysts_configured
from core.verified.analysts import is_analyst

log = logging.getLogger("askbase.teams")

TYPING = TypingOptions(initial_delay_ms=0, interval_ms=3000)  # Teams shows "typing" for ~3 s
TEAMS = Commands(list_databases="db", pick_database="db NAME")  # typed, as the help card says
INLINE_DPI = 60  # a chart inside the card: 480 × 270 pixels (a bar chart is ~9 KB)
CARD_KIND = cards.KEPT_CARD  # the card an outcome was posted as (core/askbase.py `keep`), for private.py
MESSAGE_KIND = "teams-message"  # which answer a posted message is, for Teams' feedback buttons


def message_key(conversation_id: str, activity_id: str) -> str:
    return f"{conversation_id}|{activity_id}"


@dataclass(frozen=True)
class Question:
    """A question to answer in a conversation, and what it continues."""

    text: str
    incoming: Incoming
    reference: ConversationReference
    identity: ClaimsIdentity | None  # the request's caller (None: a later, unprompted post)
    base_url: str | None  # where download links point
    transcript: Transcript | None = None  # answers to clarifying questions so far
    conversation: tuple[str, str] | None = None  # (key, database) when continuing a known one
    claim: str | None = None  # the activity's claim (inflight.py), marked answered once the card is out


def database_for(runtime: TeamsRuntime, place: Place) -> str:
    """The thread's database, else the place's `db NAME` choice, else the default."""
    if place.threaded:
        known = conversations.conversation_database(runtime.state, place.conversation_key(""))
        if known:
            return known
    return channel_database(runtime.state, place.settings_team, place.channel) or runtime.settings.default_db


def outcome_card(
    runtime: TeamsRuntime,
    outcome: Outcome,
    base_url: str | None,
    who: Principal,
    *,
    asked_by: str | None = None,
    analyst: bool = False,
    votes: bool = True,
) -> dict[str, Any]:
    """The card of an outcome; `analyst`: the asker may read the schema's names in a failure;
    `votes`: the card's own 👍 / 👎 (channels)."""
    if outcome.status == "clarify" and outcome.clarification is not None:
        return cards.clarification_card(outcome, asked_by)
    if outcome.status == "error":
        example = example_question(runtime.askbase, outcome.database)
        failure = failure_of(outcome, TEAMS, analyst=analyst, example=example)
        return cards.error_card(failure, outcome.trace.id, question=outcome.question, asked_by=asked_by)
    presentation = presented(runtime.askbase, outcome)

    def card_with(chart: str | None, alt: str = "") -> dict[str, Any]:
        return cards.answer_card(
            outcome,
            table_rows=runtime.table_rows,
            chart_url=chart,
            asked_by=asked_by,
            presentation=presentation,
            can_verify=analysts_configured(runtime.settings),  # ✅ Verify for analysts (verified.py)
            votes=votes,
            chart_alt=alt,
        )

    plain = card_with(None)
    inline, alt = inline_chart(outcome, presentation.shape)
    if inline is not None:
        with_chart = card_with(inline, alt)
        if cards.size_of(with_chart) <= cards.MAX_CARD_BYTES and len(cards.shown_rows(with_chart)) == len(
            cards.shown_rows(plain)
        ):
            return with_chart  # the image inside the card: it shows as long as the message does
    link = chart_url(runtime, outcome, base_url, who)
    return card_with(link, alt) if link else plain


def inline_chart(outcome: Outcome, shape: Any = None) -> tuple[str | None, str]:
    """The chart as a small PNG in a data URI, and what it shows in words (None when no chart fits
    the result)."""
    if outcome.status != "answer" or not outcome.rows:
        return None, ""
    try:
        chart = chart_for(outcome.columns, outcome.rows, outcome.question, shape, dpi=INLINE_DPI)
    except Exception:  # a chart is a bonus
        log.exception("trace %s: the chart could not be drawn", outcome.trace.id)
        return None, ""
    if chart is None:
        return None, ""
    return "data:image/png;base64," + base64.b64encode(chart.png).decode(), chart.alt


def chart_url(runtime: TeamsRuntime, outcome: Outcome, base_url: str | None, who: Principal) -> str | None:
    """A signed link to the chart (drawn when opened, as `who`), when the result reads better as
    one: it lives as long as the answer does (the message shows it as long as it is there)."""
    if not base_url or outcome.status != "answer" or not outcome.rows:
        return None
    try:
        if chart_spec(outcome.columns, outcome.rows, outcome.question) is None:
            return None
    except Exception:  # a chart is a bonus
        log.exception("trace %s: chart check failed", outcome.trace.id)
        return None
    token, _ = links.issue(runtime.link_key, "png", outcome.trace.id, who, None, now=runtime.now())
    return links.url(base_url, token)


async def start(runtime: TeamsRuntime, context: TurnContext, question: Question) -> bool:
    """In the request's turn: "typing…", then the answer later (True); or "busy" at once (False:
    the question's claim, if any, is the caller's to finish)."""
    await context.send_activity(Activity(type=ActivityTypes.typing))
    if question.claim:  # typing shows: a process taking the question over answers it anew
        await runtime.book(runtime.claims.answering, question.claim)
    if not runtime.spawn(answer_later(runtime, question)):
        trace = Trace(question=question.text)
        outcome = Outcome.failed(question.text, "busy", BUSY, trace=trace)
        await runtime.run(_audit, runtime, question.incoming, outcome)
        await context.send_activity(
            card_activity(cards.error_card(failure_of(outcome, TEAMS), trace.id), BUSY)
        )
        return False
    return True


async def answer_later(runtime: TeamsRuntime, question: Question) -> None:
    """A proactive turn in the question's conversation: progress while the engine works (Teams'
    informative updates in a personal chat, "typing…" elsewhere), then the card."""

    async def work(context: TurnContext) -> None:
        incoming = question.incoming
        personal = incoming.place.kind == "personal"
        if personal:
            updates = InformativeUpdates(context, asyncio.get_running_loop())
            outcome, key = await runtime.run(answer, runtime, question, updates.show)
            await updates.settle()
        else:
            async with TypingIndicator(context, typing_options=TYPING):
                outcome, key = await runtime.run(answer, runtime, question, None)
        analyst = outcome.status == "error" and await asker_is_analyst(runtime, context, incoming)
        answered = outcome.status == "answer"
        channel = incoming.place.kind == "channel"
        content = outcome_card(
            runtime, outcome, question.base_url, incoming.principal, analyst=analyst, votes=channel
        )
        activity = card_activity(
            content,
            outcome.answer or outcome.question,
            ai_generated=answered and outcome.mode == "llm",
            feedback=answered and not channel,  # Teams' own 👍 / 👎 (chats; none in channels)
        )
        if personal:
            activity = updates.final(activity)
        if outcome.status != "clarify":  # kept before it shows: a press may come at once (private.py)
            await runtime.run(keep_card, runtime, outcome.trace.id, content)
        response = await context.send_activity(activity)
        if answered and response is not None and response.id:
            message = message_key(incoming.place.conversation_id, response.id)
            await runtime.run(keep_message, runtime, outcome.trace.id, message)
        if outcome.status == "clarify" and outcome.clarification is not None:
            if response and response.id:
                await clarify.shown(runtime, context, outcome.clarification.id, response.id)
            await clarify.sweep(runtime)  # as in Slack, every new question sweeps the expired ones
        log.info("trace %s: %s posted in %s", outcome.trace.id, outcome.status, key)

    try:
        await runtime.sender.within(question.reference, work, question.identity)
    except Exception:
        log.exception(
            "answering %r in %s failed", question.text[:80], question.incoming.place.conversation_id
        )
    finally:
        if question.claim:  # answered (or failed for good): redeliveries and recovery leave it alone
            await runtime.book(runtime.claims.finished, question.claim)


def keep_card(runtime: TeamsRuntime, trace_id: str, content: dict[str, Any]) -> None:
    """Keep the card an outcome is posted as: a press answered privately shows it again, with the
    presser's part below it (private.py)."""
    try:
        runtime.askbase.keep(CARD_KIND, trace_id, {"card": content})
    except Exception:  # the answer still goes out; a later press falls back to its own small card
        log.exception("trace %s: could not keep the card", trace_id)


def keep_message(runtime: TeamsRuntime, trace_id: str, message: str) -> None:
    """Keep which answer a posted message is: Teams' feedback buttons name the message."""
    try:
        runtime.askbase.keep(MESSAGE_KIND, message, {"trace": trace_id})
    except Exception:  # its feedback buttons will say nothing
        log.exception("trace %s: could not keep its message", trace_id)


async def asker_is_analyst(runtime: TeamsRuntime, context: TurnContext, incoming: Incoming) -> bool:
    """Whether the asker is one of `verified.analysts` (they may read table and column names)."""
    if not analysts_configured(runtime.settings):
        return False
    return is_analyst(runtime.settings, await principal_for(runtime, context, incoming))


def answer(
    runtime: TeamsRuntime, question: Question, on_stage: Callable[[str], None] | None = None
) -> tuple[Outcome, str]:
    """Worker thread: ask the engine, store the turn (and a clarifying question). Never raises.
    `on_stage`: told each stage the engine starts (the progress a person sees)."""
    incoming = question.incoming
    key = ""
    try:
        return _answer(runtime, question, on_stage)
    except Exception:
        trace = Trace(question=question.text)
        log.exception("trace %s: answering in %s failed", trace.id, incoming.place.conversation_id)
        outcome = Outcome.failed(question.text, "internal", INTERNAL, trace=trace)
        _audit(runtime, incoming, outcome)
        return outcome, key


def _answer(
    runtime: TeamsRuntime, question: Question, on_stage: Callable[[str], None] | None = None
) -> tuple[Outcome, str]:
    incoming, place = question.incoming, question.incoming.place
    if question.conversation is not None:
        key, name = question.conversation
    else:
        name = database_for(runtime, place)
        key = place.conversation_key(name)
    try:
        db = runtime.askbase.database(name)
    except UnknownDatabase:
        outcome = Outcome.failed(question.text, "unknown_database", not_configured(name), database=name)
        log.info("trace %s: %s", outcome.trace.id, outcome.error)
        _audit(runtime, incoming, outcome)
        return outcome, key
    conversations.ensure_conversation(runtime.state, key, db.name, channel=place.channel, user=incoming.user)
    history = conversations.history(runtime.state, key)
    outcome = runtime.askbase.ask(
        question.text,
        db=db,
        history=history,
        source="teams",
        principal=incoming.principal,  # the engine refuses (and audits) what it may not query
        transcript=question.transcript,
        on_stage=on_stage,
    )
    if outcome.status == "error":
        log.warning("trace %s: %s error: %s", outcome.trace.id, outcome.error_kind, outcome.error)
    problem = setup_problem(outcome)
    if problem is not None:  # the admins' part, for the log only: the card never carries it
        log.warning("trace %s: for the bot's admins: %s", outcome.trace.id, problem.admin_note)
    conversations.record_turn(runtime.state, key, outcome, user=incoming.user)
    if outcome.status == "clarify" and outcome.clarification is not None:
        remember(runtime, question, outcome, key)
    return outcome, key


def remember(runtime: TeamsRuntime, question: Question, outcome: Outcome, key: str) -> None:
    """Store a clarifying question before its buttons are shown; older open ones are replaced."""
    clarification = outcome.clarification
    assert clarification is not None
    place = question.incoming.place
    clarifications.record(
        runtime.state,
        clarification,
        question=outcome.question,
        database=outcome.database,
        conversation_id=key,
        transcript=question.transcript or Transcript(),
        ttl_s=runtime.settings.teams.clarification_ttl_s,
        asker=question.incoming.user,
        team=place.settings_team,
        channel=place.channel,
        trace_id=outcome.trace.id,
        address=reference_json(question.reference),  # the sweep updates the card from anywhere
    )
    clarifications.replace_open(runtime.state, key, keep=clarification.id)


def _audit(runtime: TeamsRuntime, incoming: Incoming, outcome: Outcome) -> None:
    """Questions the engine never saw (busy, unknown database, a crash) are audited too."""
    try:
        runtime.askbase.audit(outcome, source="teams", principal=incoming.principal)
    except Exception:
        log.exception("trace %s: could not audit", outcome.trace.id)
