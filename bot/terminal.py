"""Plain-text rendering of outcomes for the CLI and the console."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.answer import Outcome, Reuse
from core.definitions.model import using_text
from core.summary import display

MAX_CELL = 40


def _cell(value: Any) -> str:
    text = display(value)
    return text if len(text) <= MAX_CELL else text[: MAX_CELL - 1] + "…"


def table(columns: Sequence[str], rows: Sequence[Sequence[Any]], max_rows: int = 20) -> str:
    shown = [[_cell(v) for v in row] for row in rows[:max_rows]]
    widths = [max([len(c), *(len(r[i]) for r in shown)]) for i, c in enumerate(columns)]
    numeric = [
        all(isinstance(row[i], int | float) or row[i] is None for row in rows[:max_rows])
        for i in range(len(columns))
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.rjust(w) if num else c.ljust(w) for c, w, num in zip(cells, widths, numeric, strict=True)
        )

    out = [line(list(columns)), "  ".join("-" * w for w in widths), *(line(r) for r in shown)]
    if len(rows) > max_rows:
        out.append(f"… {len(rows) - max_rows:,} more rows")
    return "\n".join(out)


def render(outcome: Outcome, *, show_sql: bool = True, show_trace: bool = False) -> str:
    parts: list[str] = []
    if outcome.status == "error":
        parts.append(f"Sorry — {outcome.error}")
    elif outcome.status == "clarify" and outcome.clarification:
        c = outcome.clarification
        parts.append(c.question)
        parts.extend(f"  {i}. {o.label}" for i, o in enumerate(c.options, 1))
        parts.append(f"  {len(c.options) + 1}. Other… (type your own answer)")
    else:
        label = " (keyword mode: no LLM)" if outcome.mode == "keyword" else ""
        parts.append(outcome.answer + label)
        if outcome.interpretation:
            parts.append(outcome.interpretation)
        if outcome.reuse is not None:  # answered without new SQL (core/trusted.py)
            parts.append(reuse_text(outcome.reuse))
        if outcome.using:  # business definitions (core/definitions)
            parts.append(using_text(outcome.using))
        parts.extend(f"Assumed: {a}" for a in outcome.assumptions)
        if outcome.columns:
            parts.append("")
            parts.append(table(outcome.columns, outcome.rows))
            if outcome.truncated:
                parts.append(f"(result cut at {outcome.row_count:,} rows)")
    if show_sql and outcome.sql:
        parts.extend(["", "SQL:", outcome.sql])
    if show_trace:
        parts.extend(["", trace_text(outcome)])
    return "\n".join(parts)


def reuse_text(reuse: Reuse) -> str:
    said = []
    if reuse.verified:
        when = f" on {reuse.verified_at:%Y-%m-%d}" if reuse.verified_at else ""
        said.append(f"✅ verified query #{reuse.verified_id} (verified by {reuse.verified_by}{when})")
    if reuse.cached_at is not None:
        said.append(f"as of {reuse.cached_at:%H:%M} UTC: the same question was answered then")
    return "; ".join(said)


def trace_text(outcome: Outcome) -> str:
    t = outcome.trace
    lines = [f"Trace {t.id}: {t.ms:.1f} ms total, {t.llm_calls} LLM calls, {t.tokens} tokens"]
    for s in t.stages:
        calls = f", {len(s.llm_calls)} LLM call(s), {s.tokens} tokens" if s.llm_calls else ""
        lines.append(f"- {s.name}: {s.ms:.1f} ms{calls}{' — ERROR ' + s.error if s.error else ''}")
        for key, value in s.outputs.items():
            if isinstance(value, list):
                lines.extend(f"    {key}: {v}" for v in value[:12])
            else:
                text = " ".join(str(value).split())
                lines.append(f"    {key}: {text[:300]}")
    return "\n".join(lines)
