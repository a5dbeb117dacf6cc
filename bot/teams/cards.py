"""Adaptive Cards (schema 1.5) built from outcomes: pure functions, no SDK calls, no SQL.

An answer is one card: the sentence, a `Table` of the first rows with readable headers (none for
a single value: the sentence says it), the row count, the SQL behind a Show SQL toggle, a chart
image where one helps, and the actions Show SQL, Details, CSV, 👍, 👎 (with a box for what was
wrong) and Schedule (with the form). Teams shows six actions in a row, which is exactly these.
Every button carries the answer's trace id; a press comes back as a message activity whose
`value` is the button's data plus the inputs of its card.

What an answer shows — the sentence, readable headers, numbers rounded per column, keyword mode's
reading, the row note, the Details of its trace — is decided in bot/answer_view.py, the same as in
Slack; this module lays it out. Teams takes a card of about 28 KB; the table gives up rows (never
the header) until the card fits, and the row note says how many are shown. Text from the database or from people is escaped: Teams
renders a subset of Markdown in TextBlocks, and a value must never turn into a link or a list.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from bot.answer_view import AnswerView, Credit, answer_view, stage_lines, trace_numbers
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

_MD = re.compile(r"([\\`*_\[\]()~>#|])")
_LIST_START = re.compile(r"^(\s*)([-+]|\d+[.)])(\s)", re.M)


def escape(text: str) -> str:
    """Text shown as is: Markdown's special characters escaped, list markers defused."""
    return _LIST_START.sub(r"\1\\\2\3", _MD.sub(r"\\\1", text))


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


def answer_actions(trace_id: str) -> list[dict[str, Any]]:
    return [
        {"type": "Action.ToggleVisibility", "title": "Show SQL", "targetElements": [sql_id(trace_id)]},
        submit("Details", "details", trace=trace_id),
        submit("CSV", "csv", trace=trace_id),
        submit("👍", "up", trace=trace_id),
        show_card(
            "👎",
            [
                text_input(
                    "comment", "What was wrong? (optional)", "The answer should have…", isMultiline=True
                )
            ],
            submit("Send", "down", trace=trace_id),
        ),
        show_card("Schedule", schedule_form(), submit("Schedule it", "schedule", trace=trace_id)),
    ]


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
) -> list[dict[str, Any]]:
    """The answer's elements: sentence, keyword-mode note, table, chart, row note, hidden SQL."""
    outcome = view.outcome
    body: list[dict[str, Any]] = []
    if asked_by:
        body.append(note(f"{escape(asked_by)} asked: {escape(outcome.question)}"))
    body.append(text_block(escape(view.sentence), size="Medium"))
    if view.keyword_reading is not None:
        reading = f": {escape(view.keyword_reading)}" if view.keyword_reading else ""
        body.append(note(f"🔎 **Keyword mode** (no LLM){reading}"))
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
                "altText": clip(f"Chart: {outcome.question}", 200),
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
) -> dict[str, Any]:
    """The answer as a card that fits Teams' size limit (fewer table rows until it does);
    `can_verify`: analysts are configured, so answers that ran new SQL get ✅ Verify."""
    view = answer_view(outcome, presentation)
    reuse = outcome.reuse
    verify = can_verify and bool(outcome.sql) and not (reuse is not None and reuse.verified)
    below = [verify_action(outcome.trace.id)] if verify else []
    rows = max(1, table_rows)
    while True:
        body = answer_body(view, table_rows=rows, chart_url=chart_url, asked_by=asked_by)
        content = card([*head, *body, *below, *tail], [*answer_actions(outcome.trace.id), *extra_actions])
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


def clarification_card(outcome: Outcome, asked_by: str | None = None) -> dict[str, Any]:
    """The question back: one button per reading, and "Other…" with a box for one's own words."""
    c = outcome.clarification
    assert c is not None
    body: list[dict[str, Any]] = []
    if asked_by:
        body.append(note(f"{escape(asked_by)} asked: {escape(outcome.question)}"))
    body.append(text_block(f"🤔 {escape(c.question)}", size="Medium"))
    body.append(note(f"Trace {outcome.trace.id}"))
    return card(body, clarification_actions(c))


def clarification_actions(c: Clarification) -> list[dict[str, Any]]:
    options = [submit(clip(o.label, 60), "clarify", c=c.id, i=i) for i, o in enumerate(c.options[:4])]
    other = show_card(
        "Other…",
        [text_input("answer", "In your own words", isMultiline=True, maxLength=500, isRequired=True)],
        submit("Send", "clarify_other", c=c.id),
    )
    return [*options, other]


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
    return card(body, [submit("Retry", "retry", trace=trace_id)] if failure.retry else [])


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


def details_card(trace: Mapping[str, Any]) -> dict[str, Any]:
    """Every stage of a stored trace: time, LLM calls, tokens and what it produced."""
    body: list[dict[str, Any]] = [
        text_block(f"**{escape(str(trace.get('question', '')))}**"),
        note(
            f"{escape(str(trace.get('database', '')))} · {trace_numbers(trace)} · trace {trace.get('id', '')}"
        ),
    ]
    for stage in trace.get("stages", []):
        lines = stage_lines(stage, width=200, items=8)
        body.append(text_block(escape("\n".join(lines)), fontType="Monospace", size="Small"))
        if size_of(card(body)) > MAX_CARD_BYTES:
            body[-1] = note("… (more stages in the log under this trace id)")
            break
    return card(body)
