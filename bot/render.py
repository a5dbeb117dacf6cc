"""Block Kit messages and modals built from outcomes: pure functions, no Slack calls, no SQL.

Everything here stays inside Slack's limits by construction — 50 blocks per message, 3,000
characters per text, one `table` block of at most 100 rows × 20 columns and ~10,000 characters
of cells — so a large or odd result degrades (fewer rows shown, the CSV carries the rest) instead
of being rejected. When a workspace rejects the table block, `answer_message(use_table=False)`
renders the same rows as monospace text.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.terminal import table as text_table
from core.answer import Outcome, Reuse
from core.summary import display

MAX_BLOCKS = 50
MAX_TEXT = 3000  # section / context text
MAX_TABLE_ROWS = 100  # including the header row
MAX_TABLE_COLUMNS = 20
MAX_TABLE_CHARS = 10_000  # all cells of the table together
MAX_CELL = 200
MAX_BUTTON_TEXT = 75
MAX_VALUE = 2000  # a button's value
MAX_MODAL_BLOCKS = 100
MAX_MONOSPACE_BLOCKS = 8

# Stage names the pipeline reports (core.pipeline notify) → what a person reads while waiting.
STAGE_LABELS: dict[str, str] = {
    "queued": "Waiting for a free worker",
    "understand": "Understanding the question",
    "retrieve": "Searching the data",
    "link": "Searching the data",
    "view": "Searching the data",
    "keyword": "Searching the data",
    "generate": "Writing SQL",
    "expand": "Writing SQL",
    "guard": "Checking the SQL",
    "execute": "Running it",
    "revise": "Fixing the SQL",
}


@dataclass(frozen=True)
class Message:
    text: str  # the notification / fallback text
    blocks: list[dict[str, Any]]
    wants_csv: bool = False  # the table shows less than the result: attach the CSV


# ---------------------------------------------------------------- small pieces


def escape(text: str) -> str:
    """Slack mrkdwn treats &, < and > as control characters everywhere, code blocks included."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)] + "…"


def section(text: str) -> dict[str, Any]:
    return {"type": "section", "text": {"type": "mrkdwn", "text": clip(text, MAX_TEXT)}}


def context(text: str) -> dict[str, Any]:
    return {"type": "context", "elements": [{"type": "mrkdwn", "text": clip(text, MAX_TEXT)}]}


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


def cell_text(value: Any) -> str:
    """A value as a table cell: one line, at most MAX_CELL characters, never empty."""
    text = display(value)
    return clip(text, MAX_CELL) if text else " "


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _numeric_columns(rows: Sequence[Sequence[Any]], width: int) -> list[bool]:
    numeric = []
    for i in range(width):
        values = [r[i] for r in rows if i < len(r) and r[i] is not None]
        numeric.append(bool(values) and all(_is_number(v) for v in values))
    return numeric


def table_block(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], max_rows: int
) -> tuple[dict[str, Any], int]:
    """A Block Kit `table` of the first rows that fit; (block, data rows shown)."""
    cols = [cell_text(c) for c in columns[:MAX_TABLE_COLUMNS]]
    width = len(cols)
    budget = MAX_TABLE_CHARS - sum(len(c) for c in cols)
    body: list[list[str]] = []
    for row in rows[: max(0, min(max_rows, MAX_TABLE_ROWS - 1))]:
        cells = [cell_text(v) for v in row[:width]]
        cost = sum(len(c) for c in cells)
        if cost > budget:
            break
        budget -= cost
        body.append(cells)
    numeric = _numeric_columns(rows[: len(body)], width)
    block = {
        "type": "table",
        "column_settings": [{"align": "right"} if n else {"is_wrapped": True} for n in numeric],
        "rows": [[{"type": "raw_text", "text": c} for c in r] for r in [cols, *body]],
    }
    return block, len(body)


def monospace_blocks(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], max_rows: int
) -> tuple[list[dict[str, Any]], int]:
    """The fallback for workspaces without table blocks: an aligned text table in code blocks."""
    shown = min(max_rows, len(rows))
    return code_blocks(text_table(columns, rows[:shown], max_rows=shown)), shown


# ---------------------------------------------------------------- messages


def status_message(question: str, stage: str | None = None, asked_by: str | None = None) -> Message:
    label = STAGE_LABELS.get(stage or "understand", "Working on it")
    blocks = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(question)}"))
    blocks.append(context(f":hourglass_flowing_sand: *{label}…*"))
    return Message(text=f"{label}…", blocks=blocks)


def answer_buttons(trace_id: str, *, verify: bool = False, refresh: bool = False) -> dict[str, Any]:
    extra = []  # handled by bot/listeners/verified.py (issue 19)
    if refresh:
        extra.append(button("Refresh", "answer_refresh", trace_id))
    if verify:
        extra.append(button("✅ Verify", "verified_verify", trace_id))
    return actions(
        f"answer:{trace_id}",
        button("Show SQL", "show_sql", trace_id),
        button("Details", "show_details", trace_id),
        button("CSV", "get_csv", trace_id),
        button(":thumbsup:", "feedback_up", trace_id),
        button(":thumbsdown:", "feedback_down", trace_id),
        button("Schedule", "schedule_open", trace_id),  # handled by bot/listeners/schedules.py (issue 8)
        *extra,
    )


def slack_date(when: dt.datetime, token: str, fallback: str) -> str:
    """A time every reader sees in their own timezone (`<!date^…>`), with a UTC fallback."""
    return f"<!date^{int(when.timestamp())}^{token}|{when.astimezone(dt.UTC).strftime(fallback)}>"


def reuse_line(reuse: Reuse) -> str:
    """Where an answer came from when no SQL was written for it (issue 19)."""
    parts = []
    if reuse.verified:
        when = f" on {slack_date(reuse.verified_at, '{date_short}', '%Y-%m-%d')}" if reuse.verified_at else ""
        parts.append(f"✅ Verified by <@{reuse.verified_by}>{when}")
    if reuse.cached_at is not None:
        parts.append(
            f":repeat: As of {slack_date(reuse.cached_at, '{time}', '%H:%M UTC')}: this question was just "
            "answered — *Refresh* runs it again"
        )
    return " · ".join(parts)


def _row_note(outcome: Outcome, shown: int, hidden_columns: int, wants_csv: bool) -> str:
    n = outcome.row_count
    parts = [f"{n:,} row{'s' if n != 1 else ''}"]
    if shown < n:
        parts.append(f"showing the first {shown:,}")
    if hidden_columns:
        parts.append(f"{hidden_columns} more column{'s' if hidden_columns != 1 else ''} in the CSV")
    if outcome.truncated:
        parts.append("the result was cut at this size — ask a narrower question for everything")
    if wants_csv:
        parts.append("the full result is in the CSV below")
    return " · ".join(parts)


def answer_message(
    outcome: Outcome,
    *,
    table_rows: int = 20,
    use_table: bool = True,
    asked_by: str | None = None,
    can_verify: bool = False,
) -> Message:
    blocks: list[dict[str, Any]] = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(outcome.question)}"))
    sentence = outcome.answer or (
        "No rows match the question." if not outcome.rows else "Here is the result."
    )
    blocks.append(section(escape(sentence)))
    if outcome.reuse is not None:
        blocks.append(context(reuse_line(outcome.reuse)))
    if outcome.mode == "keyword":
        reading = f": {escape(outcome.interpretation)}" if outcome.interpretation else ""
        blocks.append(context(f":mag: *Keyword mode* (no LLM){reading}"))
    shown = 0
    hidden_columns = max(0, len(outcome.columns) - MAX_TABLE_COLUMNS)
    if outcome.columns and outcome.rows:
        if use_table:
            block, shown = table_block(outcome.columns, outcome.rows, table_rows)
            blocks.append(block)
        else:
            mono, shown = monospace_blocks(outcome.columns, outcome.rows, table_rows)
            blocks.extend(mono)
            hidden_columns = 0
    wants_csv = bool(outcome.rows) and (shown < outcome.row_count or outcome.truncated or hidden_columns > 0)
    note = _row_note(outcome, shown, hidden_columns, wants_csv)
    blocks.append(context(f"{note} · `{escape(outcome.database)}` · trace `{outcome.trace.id}`"))
    reuse = outcome.reuse
    verified = reuse is not None and reuse.verified
    blocks.append(
        answer_buttons(
            outcome.trace.id,
            verify=can_verify and bool(outcome.sql) and not verified,
            refresh=reuse is not None and reuse.cached,
        )
    )
    return Message(text=clip(sentence, MAX_TEXT), blocks=blocks[:MAX_BLOCKS], wants_csv=wants_csv)


def error_message(error: str, trace_id: str, *, question: str = "", asked_by: str | None = None) -> Message:
    """What failed and what to try, with a Retry button; never a stack trace."""
    blocks: list[dict[str, Any]] = []
    if asked_by and question:
        blocks.append(context(f"<@{asked_by}> asked: {escape(question)}"))
    blocks.append(section(f":warning: {escape(error)}"))
    blocks.append(context(f"Trace `{trace_id}` — quote it if you ask the bot's admins."))
    blocks.append(actions(f"error:{trace_id}", button("Retry", "retry", trace_id, style="primary")))
    return Message(text=clip(f"Sorry — {error}", MAX_TEXT), blocks=blocks)


INTERNAL_ERROR = (
    "Something went wrong on my side while answering. Press Retry; if it keeps failing, tell the "
    "bot's admins and quote the trace id."
)

BUSY = "I'm answering a lot of questions right now. Press Retry in a minute."


def clarification_message(outcome: Outcome, asked_by: str | None = None) -> Message:
    """The question back, one button per reading plus "Other…" (handlers: the clarify feature)."""
    c = outcome.clarification
    assert c is not None
    blocks: list[dict[str, Any]] = []
    if asked_by:
        blocks.append(context(f"<@{asked_by}> asked: {escape(outcome.question)}"))
    blocks.append(section(f":thinking_face: {escape(c.question)}"))
    options = [
        button(o.label, f"clarify_option_{i}", json.dumps({"c": c.id, "i": i}))
        for i, o in enumerate(c.options[:4])
    ]
    options.append(button("Other…", "clarify_other", json.dumps({"c": c.id})))
    blocks.append(actions(f"clarify:{c.id}", *options))
    blocks.append(context(f"Trace `{outcome.trace.id}`"))
    return Message(text=clip(c.question, MAX_TEXT), blocks=blocks)


def outcome_message(
    outcome: Outcome,
    *,
    table_rows: int = 20,
    use_table: bool = True,
    asked_by: str | None = None,
    can_verify: bool = False,
) -> Message:
    if outcome.status == "clarify" and outcome.clarification is not None:
        return clarification_message(outcome, asked_by)
    if outcome.status == "error":
        return error_message(
            outcome.error or INTERNAL_ERROR, outcome.trace.id, question=outcome.question, asked_by=asked_by
        )
    return answer_message(
        outcome, table_rows=table_rows, use_table=use_table, asked_by=asked_by, can_verify=can_verify
    )


def help_message(databases: Sequence[str], current: str, command: str = "/ask") -> Message:
    names = ", ".join(f"`{escape(d)}`" for d in databases) or "none"
    text = (
        "*Ask me about your data in plain English.*\n"
        f"• Mention me in a channel, DM me, or use `{command} How many clients signed up in 2024?`\n"
        '• Reply in my thread to follow up ("and only in Europe?").\n'
        "• Under each answer: *Show SQL*, *Details* (every step I took), *CSV*, :thumbsup: to teach me "
        "the query is right, :thumbsdown: to tell me it is not.\n"
        f"• `{command} db` lists the databases this channel may use; `{command} db NAME` picks one.\n"
        f"• `{command} schedule every weekday at 9:00 <question>` posts fresh results on time; "
        f"`{command} schedules` lists this channel's schedules (or use *Schedule* under an answer).\n"
        f"• ✅ marks an answer given from a query an analyst verified; `{command} verified` lists them.\n"
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
    return Message(text=clip(text, MAX_TEXT), blocks=[section(escape(text))])


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


def _output_lines(outputs: Mapping[str, Any]) -> list[str]:
    lines = []
    for key, value in outputs.items():
        if isinstance(value, list):
            lines.extend(f"    {key}: {' '.join(str(v).split())[:300]}" for v in value[:12])
        else:
            lines.append(f"    {key}: {' '.join(str(value).split())[:300]}")
    return lines


def trace_modal(trace: Mapping[str, Any]) -> dict[str, Any]:
    """Every stage of the stored trace: time, LLM calls, tokens and what it produced."""
    head = (
        f"*{escape(str(trace.get('question', '')))}*\n"
        f"`{escape(str(trace.get('database', '')))}` · {float(trace.get('ms', 0)):.0f} ms · "
        f"{trace.get('llm_calls', 0)} LLM call(s) · {trace.get('tokens', 0)} tokens · "
        f"trace `{trace.get('id', '')}`"
    )
    blocks: list[dict[str, Any]] = [section(head)]
    for stage in trace.get("stages", []):
        calls = stage.get("llm_calls") or []
        tokens = sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)
        title = f"{stage.get('name')} — {float(stage.get('ms', 0)):.0f} ms"
        if calls:
            title += f", {len(calls)} LLM call(s), {tokens} tokens"
        if stage.get("error"):
            title += " — failed"
        lines = [title, *_output_lines(stage.get("outputs") or {})]
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
