"""Adaptive Cards (schema 1.5) built from outcomes: pure functions, no SDK calls, no SQL.

An answer is one card: the sentence, a `Table` of the first rows with readable headers (none for
a single value: the sentence says it), the row count, the SQL behind a Show SQL toggle, a chart
image where one helps, and the actions Show SQL, Details, CSV and Schedule (with the form) — plus,
in channels, 👍 and 👎 (with a box for what was wrong); in chats Teams' own feedback buttons take
their place (the activity's feedback loop, bot/teams/proactive.py). Details, CSV, 👍 and 👎 are
`Action.Execute`: Teams sends them as an `adaptiveCard/action` invoke and shows the card the bot
answers with to the person who pressed alone (Universal Actions' user-specific response) — their
Details, their download link, their vote noted — so nothing is posted to the channel for them.
Every button carries the answer's trace id.

What an answer shows — the sentence, readable headers, numbers rounded per column, keyword mode's
reading, the row note, the Details of its trace, a clarifying question's readings in words — is
decided in bot/answer_view.py, the same as in Slack; this module lays it out. Teams takes a card
of about 28 KB; the table gives up rows (never the header) until the card fits, and the row note
says how many are shown. Text from the database or from people is escaped for the subset of
Markdown TextBlocks render — so a value never turns into a link, a list or bold — without the
backslashes some Teams clients show literally: only what would form markup is broken up.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.answer_view import (
    AnswerView,
    Credit,
    answer_view,
    choices,
    question_in_words,
    stage_lines,
    trace_numbers,
)
from bot.failures import Failure
from core.answer import Clarification, Outcome, Reuse
from core.summary import Presentation

SCHEMA = "http://adaptivecards.io/schemas/adaptive-card.json"
VERSION = "1.5"
CONTENT_TYPE = "application/vnd.microsoft.card.adaptive"
MAX_CARD_BYTES = 26_000  # Teams refuses cards over ~28 KB; leave room for the envelope
MAX_COLUMNS = 8  # a Table wider than this does not read on a phone; the CSV has all of them
MAX_CELL = 120
MAX_SQL = 6000
MAX_TEXT = 2000
ACTION = "askbase"  # the key of every Action.Submit's data that Askbase reads back

# "Post" choices of the Schedule form (core.schedules.conditions kinds)
WHEN_CHOICES = {
    "always": "Every run",
    "not_empty": "Only when there are rows",
    "changed": "Only when the result changed",
}

ZWSP = "\u200b"  # breaks a Markdown construct without showing anything
_LINE_START = re.compile(r"^([ \t]*)([-+*>#]|\d+[.)])(?=\s|$)", re.M)
_LINK = re.compile(r"\]\s*\(")
_LOOSE_UNDERSCORE = re.compile(r"(?<![0-9A-Za-z])_|_(?![0-9A-Za-z])")  # snake_case never emphasises


def escape(text: str) -> str:
    """Text shown as is on every client: what would become a list, a heading, a quote or a link
    is broken up with an invisible zero-width space; emphasis markers are escaped only when they
    come in pairs that could emphasise. "smb (122)", "paid_on", "3 * 4" stay exactly as written."""
    text = _LINE_START.sub(lambda m: f"{m.group(1)}{ZWSP}{m.group(2)}", text)
    text = _LINK.sub(lambda m: f"]{ZWSP}{m.group(0)[1:]}", text)
    for mark in ("*", "~", "`"):
        if text.count(mark) >= 2:
            text = text.replace(mark, f"\\{mark}")
    if len(_LOOSE_UNDERSCORE.findall(text)) >= 2:
        text = _LOOSE_UNDERSCORE.sub(r"\\_", text)
    return text


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def text_block(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "TextBlock", "text": clip(text, MAX_TEXT), "wrap": True, **extra}


def note(text: str) -> dict[str, Any]:
    return text_block(text, size="Small", isSubtle=True, spacing="Small")


def card(body: Sequence[dict[str, Any]], actions: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    content: dict[str, Any] = {
        "type": "AdaptiveCard",
        "$schema": SCHEMA,
        "version": VERSION,
        "body": list(body),
        "msteams": {"width": "Full"},
    }
    if actions:
        content["actions"] = list(actions)
    return content


def attachment(content: dict[str, Any]) -> dict[str, Any]:
    """The activity attachment that carries a card."""
    return {"contentType": CONTENT_TYPE, "content": content}


def submit(title: str, verb: str, **data: Any) -> dict[str, Any]:
    return {"type": "Action.Submit", "title": title, "data": {ACTION: verb, **data}}


def execute(title: str, verb: str, **data: Any) -> dict[str, Any]:
    """A Universal Action: Teams invokes the bot and shows its answer card to the presser alone."""
    return {"type": "Action.Execute", "title": title, "verb": verb, "data": {ACTION: verb, **data}}


# Verbs answered in the request with a card for the presser alone (bot/teams/private.py)
PRIVATE_VERBS = frozenset({"details", "csv", "up", "down"})
KEPT_CARD = "teams-card"  # the card an outcome was posted as, kept (core/askbase.py) for those answers


def show_card(title: str, body: Sequence[dict[str, Any]], *actions: dict[str, Any]) -> dict[str, Any]:
    inner: dict[str, Any] = {"type": "AdaptiveCard", "version": VERSION, "body": list(body)}
    if actions:
        inner["actions"] = list(actions)
    return {"type": "Action.ShowCard", "title": title, "card": inner}


def text_input(input_id: str, label: str, placeholder: str = "", **extra: Any) -> dict[str, Any]:
    element = {"type": "Input.Text", "id": input_id, "label": label, **extra}
    if placeholder:
        element["placeholder"] = placeholder
    return element


def size_of(content: dict[str, Any]) -> int:
    return len(json.dumps(content, ensure_ascii=False).encode("utf-8"))


# ---------------------------------------------------------------- answers


def cell(text: str) -> dict[str, Any]:
    return {"type": "TableCell", "items": [text_block(escape(clip(text, MAX_CELL)) or " ")]}


def table(view: AnswerView, rows: Sequence[Sequence[Any]]) -> dict[str, Any]:
    """A Table of `rows` with the view's readable headers (`total_amount` → "Total amount") and
    cells rounded per column; numbers align right."""
    presentation = view.presentation
    width = min(MAX_COLUMNS, len(presentation.headers))
    header = {
        "type": "TableRow",
        "style": "accent",
        "cells": [
            {"type": "TableCell", "items": [text_block(escape(h), weight="Bolder")]}
            for h in presentation.headers[:width]
        ],
    }
    body = [{"type": "TableRow", "cells": [cell(c) for c in presentation.cells(row[:width])]} for row in rows]
    return {
        "type": "Table",
        "firstRowAsHeader": True,
        "showGridLines": True,
        "gridStyle": "default",
        "columns": [
            {"width": 1, "horizontalCellContentAlignment": "Right" if n else "Left"}
            for n in presentation.numeric[:width]
        ],
        "rows": [header, *body],
    }


def sql_id(trace_id: str) -> str:
    return f"sql-{trace_id}"


def answer_actions(trace_id: str, *, votes: bool = True) -> list[dict[str, Any]]:
    """Show SQL, Details, CSV, [👍, 👎,] Schedule. `votes`: the card's own 👍 / 👎 (channels, where
    Teams shows no feedback buttons of its own)."""
    actions = [
        {"type": "Action.ToggleVisibility", "title": "Show SQL", "targetElements": [sql_id(trace_id)]},
        execute("Details", "details", trace=trace_id),
        execute("CSV", "csv", trace=trace_id),
    ]
    if votes:
        actions += [
            execute("👍", "up", trace=trace_id),
            show_card(
                "👎",
                [
                    text_input(
                        "comment", "What was wrong? (optional)", "The answer should have…", isMultiline=True
                    )
                ],
                execute("Send", "down", trace=trace_id),
            ),
        ]
    actions.append(show_card("Schedule", schedule_form(), submit("Schedule it", "schedule", trace=trace_id)))
    return actions


def schedule_form(when: str = "") -> list[dict[str, Any]]:
    return [
        text_input(
            "when",
            "How often",
            "every weekday at 9:00 · every 2 hours · weekly on mon,thu at 8:30 · cron 0 9 * * 1-5",
            value=when,
            isRequired=True,
            errorMessage="Say how often, e.g. every weekday at 9:00",
        ),
        {
            "type": "Input.ChoiceSet",
            "id": "post",
            "label": "Post",
            "value": "always",
            "choices": [{"title": t, "value": v} for v, t in WHEN_CHOICES.items()],
        },
        text_input("timezone", "Timezone (optional)", "Europe/Berlin — yours from Teams when empty"),
    ]


def reuse_line(reuse: Reuse) -> str:
    """Where an answer came from when no SQL was written for it (issue 19), as in Slack."""
    parts = []
    if reuse.verified:
        who = escape(reuse.verifier_name or reuse.verified_by or "an analyst")
        when = f" on {reuse.verified_at:%Y-%m-%d}" if reuse.verified_at else ""
        parts.append(f"✅ Verified by {who}{when}")
    if reuse.cached_at is not None:
        parts.append(f"🔁 As of {reuse.cached_at:%H:%M} UTC: this question was just answered")
    return " · ".join(parts)


def verify_action(trace_id: str) -> dict[str, Any]:
    """✅ Verify, for analysts (others are told they are not one): below the answer, since the
    card's own row holds Teams' six actions already."""
    return {"type": "ActionSet", "actions": [submit("✅ Verify", "verify", trace=trace_id)]}


_ID = re.compile(r"^(29:|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$)", re.I)
CORRECT = "teach_correct"  # the verb of "Correct this" under an assumption (bot/teams/teaching.py)


def credit_text(c: Credit) -> str:
    """'**loss ratio** (defined by Ana, 3 Nov)'. Teams names people by object ids the card cannot
    turn into names, so an id is left out ("taught in chat" says where it came from)."""
    said = [f"from {c.source}"] if c.source in ("dbt", "osi") else []
    if c.owner and not _ID.match(c.owner):
        said.append(f"defined by {escape(c.owner)}")
    elif c.source in ("taught", "learned"):
        said.append("taught in chat" if c.source == "taught" else "remembered in chat")
    if c.date:
        said.append(c.date)
    return f"**{escape(c.name)}**" + (f" ({', '.join(said)})" if said else "")


def teaching_items(view: AnswerView, trace_id: str) -> list[dict[str, Any]]:
    """Under the sentence: the definitions the answer used, and each reading it assumed with
    **Correct this** (a form, prefilled with the word, that proposes what it should mean)."""
    items: list[dict[str, Any]] = []
    if view.credits:
        items.append(note("📖 Using: " + ", ".join(credit_text(c) for c in view.credits)))
    for i, a in enumerate(view.corrections[:3]):
        items.append(note(f"💭 Assumed: {escape(a.line)}"))
        form = [
            text_input(f"word_{i}", "The word", value=a.word[:80], maxLength=80, isRequired=True),
            text_input(
                f"meaning_{i}",
                "What it should mean",
                "status = 'Operational'",
                isMultiline=True,
                maxLength=500,
                isRequired=True,
            ),
        ]
        items.append(
            {
                "type": "ActionSet",
                "actions": [show_card("Correct this", form, submit("Propose", CORRECT, trace=trace_id, i=i))],
            }
        )
    return items


def answer_body(
    view: AnswerView,
    *,
    table_rows: int = 10,
    chart_url: str | None = None,
    asked_by: str | None = None,
    chart_alt: str = "",
) -> list[dict[str, Any]]:
    """The answer's elements: sentence, keyword-mode note, table, chart, row note, hidden SQL."""
    outcome = view.outcome
    body: list[dict[str, Any]] = []
    if asked_by:
        body.append(note(f"{escape(asked_by)} asked: {escape(outcome.question)}"))
    body.append(text_block(escape(view.sentence), size="Medium"))
    if view.keyword_reading is not None:
        reading = f": {escape(view.keyword_reading)}" if view.keyword_reading else ""
        limited = " — answers are limited right now" if view.limited else ""
        body.append(note(f"🔎 **Keyword mode** (no LLM){limited}{reading}"))
    if view.reuse is not None:  # from a verified query or the answer cache (core/trusted.py)
        body.append(note(reuse_line(view.reuse)))
    body.extend(teaching_items(view, outcome.trace.id))
    shown = outcome.row_count  # a single value: the sentence says it, a 1 × 1 table would repeat it
    if view.shows_table:
        shown = min(max(1, table_rows), outcome.row_count)
        body.append(table(view, outcome.rows[:shown]))
    if chart_url:
        body.append(
            {
                "type": "Image",
                "url": chart_url,
                "altText": clip(chart_alt or f"Chart: {outcome.question}", 200),
                "size": "Stretch",
            }
        )
    hidden = view.hidden_columns(MAX_COLUMNS)
    where = f"{escape(outcome.database)} · trace {outcome.trace.id}"
    if view.shows_row_note:
        rows = view.row_note(
            shown, hidden, csv="press CSV for everything" if shown < outcome.row_count or hidden else ""
        )
        where = f"{rows} · {where}"
    body.append(note(where))
    body.append(
        {
            "type": "Container",
            "id": sql_id(outcome.trace.id),
            "isVisible": False,
            "items": [
                text_block(escape(clip(outcome.sql or "-- no SQL was run", MAX_SQL)), fontType="Monospace")
            ],
        }
    )
    return body


def answer_card(
    outcome: Outcome,
    *,
    table_rows: int = 10,
    chart_url: str | None = None,
    asked_by: str | None = None,
    head: Sequence[dict[str, Any]] = (),
    tail: Sequence[dict[str, Any]] = (),
    extra_actions: Sequence[dict[str, Any]] = (),
    presentation: Presentation | None = None,
    can_verify: bool = False,
    votes: bool = True,
    chart_alt: str = "",
) -> dict[str, Any]:
    """The answer as a card that fits Teams' size limit (fewer table rows until it does);
    `can_verify`: analysts are configured, so answers that ran new SQL get ✅ Verify; `votes`:
    the card's own 👍 / 👎 (see `answer_actions`); `chart_alt`: what the chart shows, in words."""
    view = answer_view(outcome, presentation)
    reuse = outcome.reuse
    verify = can_verify and bool(outcome.sql) and not (reuse is not None and reuse.verified)
    below = [verify_action(outcome.trace.id)] if verify else []
    actions = [*answer_actions(outcome.trace.id, votes=votes), *extra_actions]
    rows = max(1, table_rows)
    while True:
        body = answer_body(view, table_rows=rows, chart_url=chart_url, asked_by=asked_by, chart_alt=chart_alt)
        content = card([*head, *body, *below, *tail], actions)
        if size_of(content) <= MAX_CARD_BYTES or rows <= 1:
            return content
        rows = max(1, rows // 2)


def shown_rows(content: dict[str, Any]) -> list[list[str]]:
    """The table of a card as text rows, header first (tests, and a fallback text)."""
    for element in _walk(content.get("body", [])):
        if element.get("type") == "Table":
            return [
                [" ".join(str(i.get("text", "")) for i in c.get("items", [])) for c in r.get("cells", [])]
                for r in element.get("rows", [])
            ]
    return []


def _walk(elements: Iterable[Any]) -> Iterable[dict[str, Any]]:
    for element in elements:
        if isinstance(element, dict):
            yield element
            for key in ("items", "body", "columns", "rows", "cells"):
                value = element.get(key)
                if isinstance(value, list):
                    yield from _walk(value)


# ---------------------------------------------------------------- clarifying questions


def readings_id(clarification_id: str) -> str:
    return f"readings-{clarification_id}"


def clarification_card(outcome: Outcome, asked_by: str | None = None) -> dict[str, Any]:
    """The question back: one button per reading in words ("customers in Lyon"), "Other…" with
    a box for one's own words, and Details: what each reading means to the data (a toggle: it
    opens for whoever presses it, on their screen only)."""
    c = outcome.clarification
    assert c is not None
    body: list[dict[str, Any]] = []
    if asked_by:
        body.append(note(f"{escape(asked_by)} asked: {escape(outcome.question)}"))
    body.append(text_block(f"🤔 {escape(question_in_words(c))}", size="Medium"))
    body.append(
        {
            "type": "Container",
            "id": readings_id(c.id),
            "isVisible": False,
            "items": [
                item
                for choice in choices(c)[:4]
                for item in (
                    text_block(f"**{escape(choice.label)}**"),
                    text_block(escape(clip(choice.meaning, 1500)), fontType="Monospace", size="Small"),
                )
            ],
        }
    )
    body.append(note(f"Trace {outcome.trace.id}"))
    return card(body, clarification_actions(c))


def clarification_actions(c: Clarification) -> list[dict[str, Any]]:
    options = [
        submit(clip(choice.label, 60), "clarify", c=c.id, i=i) for i, choice in enumerate(choices(c)[:4])
    ]
    other = show_card(
        "Other…",
        [text_input("answer", "In your own words", isMultiline=True, maxLength=500, isRequired=True)],
        submit("Send", "clarify_other", c=c.id),
    )
    details = {"type": "Action.ToggleVisibility", "title": "Details", "targetElements": [readings_id(c.id)]}
    return [*options, other, details]


def closed_question_card(question: str, result: str) -> dict[str, Any]:
    """A clarifying question once answered (or expired, or replaced): no buttons any more."""
    return card([text_block(f"🤔 {escape(question)}", size="Medium"), note(result)])


# ---------------------------------------------------------------- other cards


def error_card(
    failure: Failure, trace_id: str, *, question: str = "", asked_by: str | None = None
) -> dict[str, Any]:
    """What failed in the asker's terms (bot/failures.py words it, as for Slack); Retry only when
    trying again can help; never a stack trace, never configuration advice."""
    body: list[dict[str, Any]] = []
    if asked_by and question:
        body.append(note(f"{escape(asked_by)} asked: {escape(question)}"))
    body.append(text_block(f"⚠️ {escape(failure.text)}", color="Attention"))
    body.append(note(f"Trace {trace_id} — quote it if you ask the bot's admins."))
    actions = [submit("Retry", "retry", trace=trace_id)] if failure.retry else []
    return card(body, [*actions, execute("Details", "details", trace=trace_id)])


def message_card(text: str, *, subtle: str = "", actions: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    body = [text_block(escape(text))]
    if subtle:
        body.append(note(escape(subtle)))
    return card(body, actions)


def link_card(text: str, title: str, url: str, expires: str) -> dict[str, Any]:
    """A download link (the CSV): a button that opens it, and how long it works."""
    return card(
        [text_block(escape(text)), note(f"The link works until {expires}.")],
        [{"type": "Action.OpenUrl", "title": title, "url": url}],
    )


def details_items(trace: Mapping[str, Any], room: int = MAX_CARD_BYTES) -> list[dict[str, Any]]:
    """Every stage of a stored trace — time, LLM calls, tokens and what it produced — within
    `room` bytes (the rest is in the log under the trace id)."""
    body: list[dict[str, Any]] = [
        text_block(f"**Details of “{escape(str(trace.get('question', '')))}”**"),
        note(
            f"{escape(str(trace.get('database', '')))} · {trace_numbers(trace)} · trace {trace.get('id', '')}"
        ),
    ]
    for stage in trace.get("stages", []):
        lines = stage_lines(stage, width=200, items=8)
        body.append(text_block(escape("\n".join(lines)), fontType="Monospace", size="Small"))
        if size_of(card(body)) > room:
            body[-1] = note("… (more stages in the log under this trace id)")
            break
    return body


def details_card(trace: Mapping[str, Any]) -> dict[str, Any]:
    return card(details_items(trace))


def for_presser(content: dict[str, Any] | None, items: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The card a press is answered with, shown to the presser alone: the card they pressed on
    (as it was posted), with `items` — their Details, their link, their vote noted — below it."""
    mine = [note("Only you see this part."), *items]
    if content is None:
        return card(mine)
    part = {"type": "Container", "separator": True, "spacing": "Large", "items": mine}
    body = list(content.get("body", []))
    lighter = [e for e in body if e.get("type") not in ("Table", "Image")]  # the sentence says it
    for kept in (body, lighter):
        refreshed = {**content, "body": [*kept, part]}
        if size_of(refreshed) <= MAX_CARD_BYTES:
            return refreshed
    return card(mine, content.get("actions") or [])
