"""Block Kit messages and modals built from outcomes: pure functions, no Slack calls, no SQL.

Everything here stays inside Slack's limits by construction — 50 blocks per message, 3,000
characters per text, one table of at most 100 rows × 20 columns and 10,000 characters of cells —
so a large or odd result degrades (fewer rows shown, the CSV carries the rest) instead of being
rejected. What an answer shows (sentence, headers, rounding, NULL as "—", keyword mode's reading,
whether a table helps, the row note) is decided in bot/answer_view.py, the same for Teams; this
module only lays it out.

Whatever comes from the data, a question or a name is escaped (bot/slack/text.py `escape`) in
every text Slack parses: the mrkdwn of the blocks and the message's top-level `text`, which is
what notifications show — a stored `<!channel>` must ping nobody (tests/e2e/test_slack_escaping.py).

A `Style` names the newer blocks a message may use: the `data_table` block (sortable, paged;
Slack's reference documents it for messages) else the `table` block else monospace text, and
`feedback_buttons` in a `context_actions` block else plain 👍 / 👎 buttons. The sender
(bot/slack/answering.py) starts from the richest style and steps down when a workspace refuses one.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from bot.answer_view import (
    AnswerView,
    Credit,
    answer_view,
    choices,
    question_in_words,
    stage_lines,
    trace_numbers,
)
from bot.failures import BUSY as BUSY
from bot.failures import INTERNAL, Failure, failure_of
from bot.progress import step_for
from bot.slack.text import escape as escape
from core.answer import Clarification, Outcome, Reuse
from core.summary import Presentation

MAX_BLOCKS = 50
MAX_TEXT = 3000  # section / context text
MAX_TABLE_ROWS = 100  # `table` block: rows including the header
MAX_DATA_TABLE_ROWS = 100  # `data_table` block: data rows, besides the header
MAX_TABLE_COLUMNS = 20
MAX_TABLE_CHARS = 10_000  # all cells of the table together
MAX_CELL = 200
MAX_BUTTON_TEXT = 75
MAX_VALUE = 2000  # a button's value
MAX_MODAL_BLOCKS = 100
MAX_MONOSPACE_BLOCKS = 8

TableKind = Literal["data_table", "table", "text"]
FeedbackKind = Literal["context_actions", "buttons"]


@dataclass(frozen=True)
class Style:
    table: TableKind = "table"
    feedback: FeedbackKind = "buttons"


# From the richest to what every workspace takes; a refused style steps to the next.
STYLES: tuple[Style, ...] = (
    Style("data_table", "context_actions"),
    Style("table", "context_actions"),
    Style("data_table", "buttons"),
    Style("table", "buttons"),
    Style("text", "buttons"),
)
PLAIN = Style("table", "buttons")  # what schedules and other callers get unless they ask


@dataclass(frozen=True)
class Message:
    text: str  # the notification / fallback text
    blocks: list[dict[str, Any]]
    wants_csv: bool = False  # the table shows less than the result: attach the CSV


# ---------------------------------------------------------------- small pieces


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def section(text: str, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, MAX_TEXT)}}
    if block_id:
        block["block_id"] = clip(block_id, 255)
    return block


def context(text: str, block_id: str | None = None) -> dict[str, Any]:
    block: dict[str, Any] = {
        "type": "context",
        "elements": [{"type": "mrkdwn", "text": clip(text, MAX_TEXT)}],
    }
    if block_id:
        block["block_id"] = clip(block_id, 255)
    return block


def button(text: str, action_id: str, value: str = "", style: str | None = None) -> dict[str, Any]:
    element: dict[str, Any] = {
        "type": "button",
        "text": {"type": "plain_text", "text": clip(text, MAX_BUTTON_TEXT), "emoji": True},
        "action_id": action_id,
    }
    if value:
        element["value"] = clip(value, MAX_VALUE)
    if style:
        element["style"] = style
    return element


def actions(block_id: str, *elements: dict[str, Any]) -> dict[str, Any]:
    return {"type": "actions", "block_id": clip(block_id, 255), "elements": list(elements)}


def code_blocks(text: str, max_blocks: int = MAX_MONOSPACE_BLOCKS) -> list[dict[str, Any]]:
    """Text as ``` sections, split on line ends so each stays under the per-text limit."""
    room = MAX_TEXT - 8
    chunks: list[str] = []
    current = ""
    for line in escape(text).splitlines() or [""]:
        line = clip(line, room)
        if current and len(current) + 1 + len(line) > room:
            chunks.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    chunks.append(current)
    if len(chunks) > max_blocks:
        chunks = [*chunks[: max_blocks - 1], "… (cut; the CSV has everything)"]
    return [section(f"```{chunk}```") for chunk in chunks]


def cell_text(text: str) -> str:
    """A cell's text: one line, at most MAX_CELL characters, never empty (Slack refuses empty cells)."""
    text = " ".join(text.split())
    return clip(text, MAX_CELL) if text else " "


# ---------------------------------------------------------------- tables


def _body(
    presentation: Presentation, rows: Sequence[Sequence[Any]], max_rows: int, width: int, budget: int
) -> list[tuple[Sequence[Any], list[str]]]:
    """The first `max_rows` rows whose cells fit the character budget: [(row, cells)]."""
    body: list[tuple[Sequence[Any], list[str]]] = []
    for row in rows[: max(0, max_rows)]:
        cells = [cell_text(c) for c in presentation.cells(row[:width])]
        cost = sum(len(c) for c in cells)
        if cost > budget:
            break
        budget -= cost
        body.append((row, cells))
    return body


def table_block(
    presentation: Presentation, rows: Sequence[Sequence[Any]], max_rows: int
) -> tuple[dict[str, Any], int]:
    """A Block Kit `table` of the first rows that fit; (block, data rows shown)."""
    header = [cell_text(h) for h in presentation.headers[:MAX_TABLE_COLUMNS]]
    width = len(header)
    limit = min(max_rows, MAX_TABLE_ROWS - 1)
    body = _body(presentation, rows, limit, width, MAX_TABLE_CHARS - sum(len(c) for c in header))
    numeric = presentation.numeric[:width]
    block = {
        "type": "table",
        "column_settings": [{"align": "right"} if n else {"is_wrapped": True} for n in numeric],
        "rows": [
            [{"type": "raw_text", "text": c} for c in r] for r in [header, *(cells for _, cells in body)]
        ],
    }
    return block, len(body)


def data_table_block(
    presentation: Presentation, rows: Sequence[Sequence[Any]], page_size: int, caption: str
) -> tuple[dict[str, Any], int]:
    """A Block Kit `data_table` (sortable, paged): numbers as `raw_number` so they sort as numbers.
    Up to 100 rows; `page_size` of them per page."""
    header = [cell_text(h) for h in presentation.headers[:MAX_TABLE_COLUMNS]]
    width = len(header)
    body = _body(
        presentation, rows, MAX_DATA_TABLE_ROWS, width, MAX_TABLE_CHARS - sum(len(c) for c in header)
    )
    numeric = presentation.numeric[:width]
    csv_rows = [presentation.csv_row(row[:width]) for row, _ in body]

    def cell(i: int, text: str, value: Any) -> dict[str, Any]:
        if (
            numeric[i]
            and isinstance(value, int | float)
            and not isinstance(value, bool)
            and math.isfinite(value)
        ):
            return {"type": "raw_number", "value": value, "text": text}
        return {"type": "raw_text", "text": text}

    block = {
        "type": "data_table",
        "caption": clip(caption or "Result", 200),
        "page_size": max(1, min(page_size, MAX_DATA_TABLE_ROWS)),
        "rows": [
            [{"type": "raw_text", "text": h} for h in header],
            *(
                [cell(i, c, v) for i, (c, v) in enumerate(zip(cells, values, strict=False))]
                for (_, cells), values in zip(body, csv_rows, strict=True)
            ),
        ],
    }
    return block, len(body)


def monospace_blocks(
    presentation: Presentation, rows: Sequence[Sequence[Any]], max_rows: int
) -> tuple[list[dict[str, Any]], int]:
    """The fallback for workspaces without table blocks: an aligned text table in code blocks."""
    shown = rows[: max(0, max_rows)]
    grid = [list(presentation.headers), *(presentation.cells(r) for r in shown)]
    grid = [[clip(" ".join(c.split()), 40) for c in r] for r in grid]
    widths = [max(len(r[i]) for r in grid) for i in range(len(grid[0]))]
    numeric = presentation.numeric

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if numeric[i] else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    text = "\n".join([line(grid[0]), "  ".join("-" * w for w in widths), *(line(r) for r in grid[1:])])
    return code_blocks(text), len(shown)


# ---------------------------------------------------------------- messages


def announcement(question: str, user: str | None) -> Message:
    """The root of a thread started for a question nobody can see otherwise (/ask, Ask again)."""
    who = f"<@{user}> asked" if user else "Asked"
    text = f":speech_balloon: {who}: *{escape(question)}*"
    return Message(text=clip(f"{who}: {escape(question)}", MAX_TEXT), blocks=[section(text)])


def status_message(question: str, stage: str | None = None, asked_by: str | None = None) -> Message:
    """A message naming the step under way (only where neither an assistant status nor a streamed
    plan is available; deleted once the answer is posted)."""
    step = step_for(stage or "understand")
    label = step.doing if step else "Working on it"
    blocks = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(question)}"))
    blocks.append(context(f":hourglass_flowing_sand: *{label}…*"))
    return Message(text=f"{label}…", blocks=blocks)


def answer_buttons(
    trace_id: str,
    *,
    with_rows: bool = True,
    feedback: FeedbackKind = "buttons",
    verify: bool = False,
    refresh: bool = False,
) -> dict[str, Any]:
    elements = [button("Show SQL", "show_sql", trace_id), button("Details", "show_details", trace_id)]
    if with_rows:
        elements.append(button("CSV", "get_csv", trace_id))
    if feedback == "buttons":
        elements += [
            button(":thumbsup:", "feedback_up", trace_id),
            button(":thumbsdown:", "feedback_down", trace_id),
        ]
    elements.append(button("Schedule", "schedule_open", trace_id))  # bot/slack/listeners/schedules.py
    if refresh:  # bot/slack/listeners/verified.py (issue 19)
        elements.append(button("Refresh", "answer_refresh", trace_id))
    if verify:
        elements.append(button("✅ Verify", "verified_verify", trace_id))
    return actions(f"answer:{trace_id}", *elements)


def feedback_block(trace_id: str) -> dict[str, Any]:
    """Slack's feedback buttons (👍 / 👎) in a context actions block; values carry the vote and trace."""
    return {
        "type": "context_actions",
        "block_id": clip(f"feedback:{trace_id}", 255),
        "elements": [
            {
                "type": "feedback_buttons",
                "action_id": "feedback",
                "positive_button": {
                    "text": {"type": "plain_text", "text": "👍"},
                    "value": f"up:{trace_id}",
                    "accessibility_label": "This answer is right: learn from its SQL",
                },
                "negative_button": {
                    "text": {"type": "plain_text", "text": "👎"},
                    "value": f"down:{trace_id}",
                    "accessibility_label": "This answer is wrong: say what was wrong",
                },
            }
        ],
    }


def with_vote(blocks: Sequence[dict[str, Any]], note: str, trace_id: str) -> list[dict[str, Any]]:
    """The answer's blocks with `note` (who voted what) shown on it, replacing an earlier note."""
    vote_id = clip(f"vote:{trace_id}", 255)
    kept = [b for b in blocks if b.get("block_id") != vote_id]
    at = next((i for i, b in enumerate(kept) if b.get("type") in ("actions", "context_actions")), len(kept))
    return [*kept[:at], context(note, block_id=vote_id), *kept[at:]][:MAX_BLOCKS]


def slack_date(when: dt.datetime, token: str, fallback: str) -> str:
    """A time every reader sees in their own timezone (`<!date^…>`), with a UTC fallback."""
    return f"<!date^{int(when.timestamp())}^{token}|{when.astimezone(dt.UTC).strftime(fallback)}>"


def reuse_line(reuse: Reuse) -> str:
    """Where an answer came from when no SQL was written for it (issue 19)."""
    parts = []
    if reuse.verified:
        when = f" on {slack_date(reuse.verified_at, '{date_short}', '%Y-%m-%d')}" if reuse.verified_at else ""
        who = escape(reuse.verifier_name) if reuse.verifier_name else f"<@{reuse.verified_by}>"
        parts.append(f"✅ Verified by {who}{when}")
    if reuse.cached_at is not None:
        parts.append(
            f":repeat: As of {slack_date(reuse.cached_at, '{time}', '%H:%M UTC')}: this question was just "
            "answered — *Refresh* runs it again"
        )
    return " · ".join(parts)


SLACK_USER = re.compile(r"[UW][A-Z0-9]{2,}")
CORRECT = "teach_correct"  # the Correct this button under an assumption (bot/slack/listeners/teaching.py)


def person(owner: str) -> str:
    """Who wrote or approved a definition: a Slack user id as a mention, anything else as text."""
    return f"<@{owner}>" if SLACK_USER.fullmatch(owner or "") else escape(owner)


def credit_text(c: Credit) -> str:
    """'*loss ratio* (defined by <@U1>, 3 Nov)': a definition's name is data, so it is escaped."""
    said = [f"from {c.source}"] if c.source in ("dbt", "osi") else []
    if c.owner:
        said.append(f"defined by {person(c.owner)}")
    if c.date:
        said.append(c.date)
    return f"*{escape(c.name)}*" + (f" ({', '.join(said)})" if said else "")


def using_line(credits: Sequence[Credit]) -> str:
    return ":book: Using: " + ", ".join(credit_text(c) for c in credits) if credits else ""


def teaching_blocks(view: AnswerView, trace_id: str) -> list[dict[str, Any]]:
    """Under the sentence: the definitions the answer used, and each reading it assumed with a
    *Correct this* button that opens the define form prefilled with the word."""
    blocks: list[dict[str, Any]] = []
    credits = view.credits
    if credits:
        blocks.append(context(using_line(credits), block_id=f"using:{trace_id}"))
    for i, a in enumerate(view.corrections[:3]):
        block = section(f":thought_balloon: Assumed: {escape(a.line)}", block_id=f"assumed:{trace_id}:{i}")
        value = json.dumps({"t": trace_id, "w": a.word[:200]})
        block["accessory"] = button("Correct this", CORRECT, value)
        blocks.append(block)
    return blocks


def answer_message(
    outcome: Outcome,
    *,
    table_rows: int = 20,
    use_table: bool = True,
    asked_by: str | None = None,
    style: Style | None = None,
    presentation: Presentation | None = None,
    can_verify: bool = False,
) -> Message:
    style = style or (PLAIN if use_table else Style("text", "buttons"))
    view = answer_view(outcome, presentation)
    blocks: list[dict[str, Any]] = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(outcome.question)}"))
    sentence = view.sentence
    blocks.append(section(escape(sentence)))
    blocks.extend(note_blocks(outcome.notes))
    if view.reuse is not None:  # answered from a verified query or the cache, in every style
        blocks.append(context(reuse_line(view.reuse)))
    if view.keyword_reading is not None:
        reading = view.keyword_reading
        limited = " (answers are limited right now)" if view.limited else ""
        blocks.append(context(f":mag: *Keyword mode*{limited}{': ' + escape(reading) if reading else ''}"))
    blocks.extend(teaching_blocks(view, outcome.trace.id))
    shown = 0
    hidden_columns = view.hidden_columns(MAX_TABLE_COLUMNS)
    table = view.shows_table
    if table:
        if style.table == "data_table":
            block, shown = data_table_block(view.presentation, outcome.rows, table_rows, sentence)
            blocks.append(block)
        elif style.table == "table":
            block, shown = table_block(view.presentation, outcome.rows, table_rows)
            blocks.append(block)
        else:
            mono, shown = monospace_blocks(view.presentation, outcome.rows, table_rows)
            blocks.extend(mono)
            hidden_columns = 0
    else:
        shown = outcome.row_count
    wants_csv = bool(outcome.rows) and (shown < outcome.row_count or outcome.truncated or hidden_columns > 0)
    note = f"`{escape(outcome.database)}`" if outcome.database else ""
    if view.shows_row_note:
        rows = view.row_note(
            shown, hidden_columns, csv="the full result is in the CSV below" if wants_csv else ""
        )
        note = " · ".join(p for p in (rows, note) if p)
    if note:
        blocks.append(context(note))
    reuse = outcome.reuse
    blocks.append(
        answer_buttons(
            outcome.trace.id,
            with_rows=bool(outcome.rows),
            feedback=style.feedback,
            verify=can_verify and bool(outcome.sql) and not (reuse is not None and reuse.verified),
            refresh=reuse is not None and reuse.cached,
        )
    )
    if style.feedback == "context_actions":
        blocks.append(feedback_block(outcome.trace.id))
    text = f"<@{asked_by}> {escape(sentence)}" if asked_by else escape(sentence)  # what notifications show
    return Message(text=clip(text, MAX_TEXT), blocks=blocks[:MAX_BLOCKS], wants_csv=wants_csv)


def note_blocks(notes: Sequence[str]) -> list[dict[str, Any]]:
    """What the asker is told about their question beside the outcome (`Outcome.notes`: e.g. a
    secret removed from it), under any kind of reply."""
    return [context(f":lock: {escape(note)}") for note in notes]


def error_message(
    failure: Failure,
    trace_id: str,
    *,
    question: str = "",
    asked_by: str | None = None,
    notes: Sequence[str] = (),
) -> Message:
    """What went wrong in the asker's terms; Retry only when trying again can help; the trace only
    behind Details. Configuration advice never appears here (bot/failures.py sends it to admins)."""
    blocks: list[dict[str, Any]] = []
    if asked_by and question:
        blocks.append(context(f"<@{asked_by}> asked: {escape(question)}"))
    blocks.append(section(f":warning: {escape(failure.text)}"))
    blocks.extend(note_blocks(notes))
    elements = []
    if failure.retry:
        elements.append(button("Retry", "retry", trace_id, style="primary"))
    elements.append(button("Details", "show_details", trace_id))
    blocks.append(actions(f"error:{trace_id}", *elements))
    said = escape(failure.text)
    text = f"<@{asked_by}> {said}" if asked_by else said
    return Message(text=clip(f"Sorry — {text}", MAX_TEXT), blocks=blocks)


def retried_message(blocks: Sequence[dict[str, Any]], text: str, user: str | None) -> Message:
    """An error message after someone pressed Retry: its words stay, its buttons go, a note says
    who asked again (the new answer follows in the thread)."""
    who = f"<@{user}>" if user else "Someone"
    kept = [b for b in blocks if b.get("type") not in ("actions", "context_actions")]
    if not kept:
        kept = [section(":warning: This attempt failed.")]
    return Message(
        text=clip(text or "This attempt failed.", MAX_TEXT),
        blocks=[*kept, context(f":repeat: {who} asked again below.")],
    )


INTERNAL_ERROR = INTERNAL


CLARIFY_DETAILS = (
    "clarify_details"  # the readings behind a clarifying question's buttons (listeners/clarify.py)
)


def clarification_message(outcome: Outcome, asked_by: str | None = None) -> Message:
    """The question back, one button per reading in words ("customers in Lyon") plus "Other…"
    and Details, which shows what each reading means to the database (handlers: the clarify
    feature)."""
    c = outcome.clarification
    assert c is not None
    question = question_in_words(c)
    blocks: list[dict[str, Any]] = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(outcome.question)}"))
    blocks.append(section(f":thinking_face: {escape(question)}"))
    blocks.extend(note_blocks(outcome.notes))
    options = [
        button(choice.label, f"clarify_option_{i}", json.dumps({"c": c.id, "i": i}))
        for i, choice in enumerate(choices(c)[:4])
    ]
    options.append(button("Other…", "clarify_other", json.dumps({"c": c.id})))
    options.append(button("Details", CLARIFY_DETAILS, c.id))
    blocks.append(actions(f"clarify:{c.id}", *options))
    text = f"<@{asked_by}> {escape(question)}" if asked_by else escape(question)
    return Message(text=clip(text, MAX_TEXT), blocks=blocks)


def readings_modal(clarification: Clarification) -> dict[str, Any]:
    """Details of a clarifying question: each reading in words, and what it means to the data."""
    blocks: list[dict[str, Any]] = [section(f"*{escape(question_in_words(clarification))}*")]
    for choice in choices(clarification):
        blocks.append(section(f"• {escape(choice.label)}"))
        blocks.extend(code_blocks(choice.meaning, max_blocks=3))
    return _modal("Details", blocks)


def outcome_message(
    outcome: Outcome,
    *,
    table_rows: int = 20,
    use_table: bool = True,
    asked_by: str | None = None,
    style: Style | None = None,
    presentation: Presentation | None = None,
    can_verify: bool = False,
) -> Message:
    if outcome.status == "clarify" and outcome.clarification is not None:
        return clarification_message(outcome, asked_by)
    if outcome.status == "error":
        return error_message(
            failure_of(outcome),
            outcome.trace.id,
            question=outcome.question,
            asked_by=asked_by,
            notes=outcome.notes,
        )
    return answer_message(
        outcome,
        table_rows=table_rows,
        use_table=use_table,
        asked_by=asked_by,
        style=style,
        presentation=presentation,
        can_verify=can_verify,
    )


def help_message(databases: Sequence[str], current: str, command: str = "/ask") -> Message:
    names = ", ".join(f"`{escape(d)}`" for d in databases) or "none"
    example = escape("<question>")
    text = (
        "*Ask me about your data in plain English.*\n"
        f"• Mention me in a channel, DM me (each message gets its own thread), or use `{command} How many clients signed up in 2024?`\n"
        '• Mention me in my thread to follow up ("and only in Europe?"); in a DM thread just reply.\n'
        "• Under each answer: *Show SQL*, *Details* (every step I took), *CSV*, :thumbsup: when it is "
        "right (an analyst's teaches me the query), :thumbsdown: to tell me it is not, *Schedule* to get "
        "it again on a schedule.\n"
        f"• `{command} db` lists the databases this channel may use; `{command} db NAME` picks one.\n"
        f"• `{command} schedule every weekday at 9:00 {example}` posts fresh results on time; "
        f"`{command} schedules` lists this channel's schedules.\n"
        f"• ✅ marks an answer given from a query an analyst verified; `{command} verified` lists them.\n"
        "• `@Askbase define active client as status = 'ACT'` (or "
        f"`{command} define …`) teaches me what words mean; an analyst approves it. *Correct this* under "
        "an answer's assumption does the same.\n"
        f"• `{command} private on` (workspace admins): answers in this channel only for the asker; "
        f"`{command} private off` shares them again, `{command} private` says which it is.\n"
        f"This channel asks about `{escape(current)}`. Databases here: {names}."
    )
    return Message(text="How to use Askbase", blocks=[section(text)])


def database_list_message(usable: Sequence[str], current: str, command: str = "/ask") -> Message:
    lines = [f"• `{escape(d)}`{'  ← this channel' if d == current else ''}" for d in usable]
    text = (
        "*Databases this channel may use:*\n"
        + ("\n".join(lines) or "none")
        + (f"\nChoose one with `{command} db NAME`.")
    )
    return Message(text="Databases", blocks=[section(text)])


def plain(text: str) -> Message:
    """`text` as written (escaped), in the notification and the message alike."""
    return Message(text=clip(escape(text), MAX_TEXT), blocks=[section(escape(text))])


# ---------------------------------------------------------------- modals


def _modal(title: str, blocks: Iterable[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "type": "modal",
        "title": {"type": "plain_text", "text": clip(title, 24)},
        "close": {"type": "plain_text", "text": "Close"},
        "blocks": list(blocks)[:MAX_MODAL_BLOCKS],
        **extra,
    }


def sql_modal(sql: str, trace_id: str) -> dict[str, Any]:
    return _modal(
        "SQL",
        [*code_blocks(sql or "-- no SQL was run", max_blocks=40), context(f"Trace `{trace_id}`")],
    )


def trace_modal(trace: Mapping[str, Any]) -> dict[str, Any]:
    """Every stage of the stored trace: time, LLM calls, tokens and what it produced."""
    head = (
        f"*{escape(str(trace.get('question', '')))}*\n"
        f"`{escape(str(trace.get('database', '')))}` · {trace_numbers(trace)} · trace `{trace.get('id', '')}`"
    )
    blocks: list[dict[str, Any]] = [section(head)]
    for stage in trace.get("stages", []):
        lines = stage_lines(stage, width=300, items=12, indent="    ")
        blocks.extend(code_blocks("\n".join(lines), max_blocks=3))
    return _modal("Details", blocks)


def feedback_modal(metadata: Mapping[str, str]) -> dict[str, Any]:
    """👎: what was wrong. Closing the modal still counts the vote (notify_on_close)."""
    return _modal(
        "What was wrong?",
        [
            section("Thanks — this helps me get it right next time."),
            {
                "type": "input",
                "block_id": "comment",
                "optional": True,
                "label": {"type": "plain_text", "text": "What should the answer have been?"},
                "element": {"type": "plain_text_input", "action_id": "comment", "multiline": True},
            },
        ],
        callback_id="feedback_down",
        submit={"type": "plain_text", "text": "Send"},
        notify_on_close=True,
        private_metadata=clip(json.dumps(dict(metadata)), 3000),
    )
