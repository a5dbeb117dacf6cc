"""An outcome as a Teams card: the answer (table, chart, buttons), a clarifying question, or an
error in the asker's words — and what is kept of it for the presses answered later.

A chart sits in the card itself when it fits (a small PNG inline), else behind a signed link that
lives as long as the answer. Failures are worded by bot/failures.py as in Slack — for an analyst
with the schema's names — with Retry only when trying again can help. The card and which message
it is are kept (core/askbase.py `keep`) for the presses answered privately later (private.py) and
for Teams' feedback buttons, which name the message.
"""

from __future__ import annotations

import base64
import logging
from typing import Any

from microsoft_agents.hosting.core import TurnContext

from bot.answer_view import example_question, presented
from bot.charts import chart_for, chart_spec
from bot.failures import Commands, failure_of
from bot.teams import cards, links
from bot.teams.incoming import Incoming
from bot.teams.runtime import TeamsRuntime
from bot.teams.verified import principal_for
from core.access import Principal
from core.answer import Outcome
from core.verified.analysts import configured as analysts_configured
from core.verified.analysts import is_analyst

log = logging.getLogger("askbase.teams")

TEAMS = Commands(list_databases="db", pick_database="db NAME")  # typed, as the help card says
INLINE_DPI = 60  # a chart inside the card: 480 × 270 pixels (a bar chart is ~9 KB)
CARD_KIND = cards.KEPT_CARD  # the card an outcome was posted as (core/askbase.py `keep`), for private.py
MESSAGE_KIND = "teams-message"  # which answer a posted message is, for Teams' feedback buttons


def message_key(conversation_id: str, activity_id: str) -> str:
    return f"{conversation_id}|{activity_id}"


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
