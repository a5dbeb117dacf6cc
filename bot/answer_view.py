"""What an answer shows, decided once for every chat.

Slack's Block Kit messages (bot/slack/render.py) and Teams' Adaptive Cards (bot/teams/cards.py) lay an
answer out in their own markup and within their own limits; what they show is decided here, so
the two cannot drift apart: the sentence, the table's headers, alignment and cells — rounded once
per column by core/summary.py, with the catalog's headers and units when the database is known —
keyword mode's reading as people should read it (without the LLM failure logged in front of it),
whether a table adds anything to the sentence, and the note under the table (how many rows, how
many shown, what was cut). Details — the stored trace behind an answer — reads the same way in
both, and so do the readings a clarifying question offers: in words ("customers in Lyon",
"suppliers in Lyon"), with what each means to the database kept for Details. No SQL here, and
nothing of Slack's or Teams'.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from bot.failures import interpretation_for_people, limited_now
from core.answer import Clarification, Option, Outcome, Reuse
from core.askbase import Askbase
from core.catalog import Catalog
from core.definitions.model import using_text
from core.plurals import plural
from core.result_shape import result_shape
from core.suggestions import example_questions
from core.summary import NO_ROWS, Presentation, present
from core.teaching import assumed_word

log = logging.getLogger(__name__)


def catalog_of(askbase: Askbase, database: str) -> Catalog | None:
    """The database's catalog (headers and units for a result), or None when it cannot be had."""
    try:
        return askbase.database(database).catalog if database else None
    except Exception:  # a result still reads fine without the catalog's headers and units
        log.debug("no catalog for %s", database, exc_info=True)
        return None


def example_question(askbase: Askbase, database: str) -> str:
    """A question that works on `database` (its catalog's first example), for a decline to offer."""
    catalog = catalog_of(askbase, database)
    found = example_questions(catalog, limit=1) if catalog is not None else []
    return found[0] if found else ""


def presented(askbase: Askbase, outcome: Outcome) -> Presentation:
    """The answer's rows as people read them, with its database's catalog (headers, units)."""
    catalog = catalog_of(askbase, outcome.database)
    return present(outcome, result_shape(outcome.sql, outcome.columns, catalog))


_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@dataclass(frozen=True)
class Credit:
    """One definition an answer used, as the "Using:" line names it; each chat writes `owner`
    its own way (Slack: a mention of a user id; Teams: the name, or nothing for an object id)."""

    name: str
    owner: str  # who wrote or approved it: a chat user id, a name, a dbt owner ("" when unknown)
    date: str  # "3 Nov"
    source: str  # yaml, dbt, osi, taught, learned


@dataclass(frozen=True)
class Assumption:
    """A reading the answer relied on that nothing fixed, with the word its Correct button offers
    to define ("" when the line names none: the form then asks for it)."""

    line: str
    word: str


def short_date(iso: str) -> str:
    """'2026-11-03' → '3 Nov'."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2}).*", iso or "")
    return f"{int(m.group(3))} {_MONTHS[int(m.group(2)) - 1]}" if m and 1 <= int(m.group(2)) <= 12 else ""


@dataclass(frozen=True)
class AnswerView:
    """An answer as every chat shows it; the chat decides only markup and how many rows fit."""

    outcome: Outcome
    presentation: Presentation

    @property
    def sentence(self) -> str:
        return self.presentation.sentence if self.outcome.rows else NO_ROWS

    @property
    def keyword_reading(self) -> str | None:
        """Keyword mode's reading of the question ("" when it has none); None outside keyword mode."""
        return interpretation_for_people(self.outcome) if self.outcome.mode == "keyword" else None

    @property
    def limited(self) -> bool:
        """Keyword mode answered because the LLM's setup failed: answers are limited right now."""
        return limited_now(self.outcome)

    @property
    def reuse(self) -> Reuse | None:
        """Where the answer came from when no SQL was written for it (verified, or the cache)."""
        return self.outcome.reuse

    @property
    def using(self) -> str:
        """'Using: loss ratio (defined by @ana, 3 Nov)': the business definitions the answer used."""
        return using_text(self.outcome.using)

    @property
    def assumptions(self) -> tuple[str, ...]:
        """Readings no definition fixed, said out loud ("Read 'existing' as status = 'Operational'")."""
        return self.outcome.assumptions

    @property
    def credits(self) -> tuple[Credit, ...]:
        """The definitions of the "Using:" line, for chats that write names and people themselves
        (never as markup: a definition's name is data, escaped by the chat)."""
        return tuple(
            Credit(d.name, d.provenance.owner, short_date(d.provenance.date), d.provenance.source)
            for d in self.outcome.using
        )

    @property
    def corrections(self) -> tuple[Assumption, ...]:
        """Each assumption line with the word its Correct button offers to define."""
        return tuple(Assumption(line, assumed_word(line)) for line in self.outcome.assumptions)

    @property
    def has_table(self) -> bool:
        return bool(self.outcome.columns and self.outcome.rows)

    @property
    def single_value(self) -> bool:
        """One row of one column: the sentence says it all; a 1 × 1 table would only repeat it."""
        return self.outcome.row_count == 1 and len(self.outcome.columns) == 1

    @property
    def shows_table(self) -> bool:
        """Whether the chat lays out a table under the sentence: rows to show, and more than the
        single value the sentence already says."""
        return self.has_table and not self.single_value

    @property
    def shows_row_note(self) -> bool:
        """The row note goes with a table, or says there are no rows; a single value needs none."""
        return self.shows_table or not self.outcome.rows

    def hidden_columns(self, max_columns: int) -> int:
        """Columns a table of `max_columns` cannot show (the CSV has them)."""
        return max(0, len(self.outcome.columns) - max_columns)

    def row_note(self, shown: int, hidden_columns: int, *, csv: str = "") -> str:
        """'1,234 rows · showing the first 20 · 3 more columns in the CSV · …'; `csv` says where
        the rest is, when the chat has something to say about it."""
        n = self.outcome.row_count
        parts = [f"{n:,} row{'s' if n != 1 else ''}"]
        if shown < n:
            parts.append(f"showing the first {shown:,}")
        if hidden_columns:
            parts.append(f"{hidden_columns} more column{'s' if hidden_columns != 1 else ''} in the CSV")
        if self.outcome.truncated:
            parts.append("the result was cut at this size — ask a narrower question for everything")
        if csv:
            parts.append(csv)
        return " · ".join(parts)


def answer_view(outcome: Outcome, presentation: Presentation | None = None) -> AnswerView:
    """The view of an answer; without a `presentation` the SQL alone is read for headers."""
    return AnswerView(outcome, presentation or present(outcome))


# ---------------------------------------------------------------- Details: the stored trace


def trace_numbers(trace: Mapping[str, Any]) -> str:
    """'1234 ms · 2 LLM call(s) · 1500 tokens': what answering cost."""
    return (
        f"{float(trace.get('ms', 0)):.0f} ms · {trace.get('llm_calls', 0)} LLM call(s) · "
        f"{trace.get('tokens', 0)} tokens"
    )


def stage_lines(stage: Mapping[str, Any], *, width: int, items: int, indent: str = "") -> list[str]:
    """One stage of a stored trace: its title (time, LLM calls, tokens, failed) and what it
    produced, one line per output (lists: their first `items`), each cut at `width` characters."""
    calls = stage.get("llm_calls") or []
    tokens = sum(c.get("prompt_tokens", 0) + c.get("completion_tokens", 0) for c in calls)
    title = f"{stage.get('name')} — {float(stage.get('ms', 0)):.0f} ms"
    if calls:
        title += f", {len(calls)} LLM call(s), {tokens} tokens"
    if stage.get("error"):
        title += " — failed"
    lines = [title]
    for key, value in (stage.get("outputs") or {}).items():
        if isinstance(value, list):
            lines.extend(f"{indent}{key}: {' '.join(str(v).split())[:width]}" for v in value[:items])
        else:
            lines.append(f"{indent}{key}: {' '.join(str(value).split())[:width]}")
    return lines


# ---------------------------------------------------------------- the readings of a clarifying question

_READING = "reading:"  # how keyword mode encodes a reading in an option's value (core/keyword/readings.py)
_SQL = "sql:"  # how the LLM's two readings carry their queries (core/clarify/choice.py)
_PLACES = ("city", "town", "country", "region", "state", "province", "county", "location", "place", "area")
_MEANING = re.compile(r"=\s*'[^']*'\s*\((?P<meaning>[^)]+)\)\s*$")
_SQLISH = re.compile(
    r"^(?P<table>[\w ]+?) (?P<column>[\w ]+?) = '(?P<value>[^']*)'(?: \((?P<meaning>[^)]+)\))?$"
)


@dataclass(frozen=True)
class Choice:
    """One reading a clarifying question offers: in words on its button, and what it means to
    the database (a column and value, or the query) behind Details."""

    label: str
    meaning: str


def _reading(value: str) -> dict[str, str] | None:
    if not value.startswith(_READING):
        return None
    try:
        data = json.loads(value[len(_READING) :])
    except ValueError:
        return None
    if not isinstance(data, dict) or not data.get("table"):
        return None
    return {k: str(v) for k, v in data.items() if v is not None}


def _name(identifier: str) -> str:
    return identifier.replace("_", " ").strip()


def _value_words(reading: dict[str, str], label: str) -> str:
    match = _MEANING.search(label)
    value = reading.get("value", "")
    return f"{value} ({match.group('meaning')})" if match else value


def _in_words(reading: dict[str, str], label: str, *, tables_differ: bool, columns_differ: bool) -> str:
    """A reading as people say it, naming what tells it apart from the others."""
    table = plural(_name(reading["table"]))
    column = _name(reading.get("column", ""))
    if "value" not in reading:  # the words name a column (or a table)
        if not column:
            return table
        return f"{column} of the {table}" if tables_differ else column
    value = _value_words(reading, label)
    contains = reading.get("op") == "contains"
    place = column.split()[-1:] and column.split()[-1] in _PLACES
    if contains:
        said = f"whose {column} contains “{value}”" if column else f"containing “{value}”"
        return f"{table} {said}" if tables_differ or not columns_differ else said
    if tables_differ and not columns_differ:
        return f"{table} in {value}" if place else f"{table} whose {column} is {value}"
    if columns_differ and not tables_differ:
        return f"the {column} of {value}" if place else f"{column} {value}"
    return f"{table} whose {column} is {value}"


def _technical(option: Option, reading: dict[str, str] | None) -> str:
    if reading is not None:
        where = ".".join(p for p in (reading["table"], reading.get("column")) if p)
        if "value" in reading:
            op = "contains" if reading.get("op") == "contains" else "="
            return f"{where} {op} '{reading['value']}'"
        return where
    if option.value.startswith(_SQL):
        return option.value[len(_SQL) :].strip()
    return option.label


def choices(clarification: Clarification) -> tuple[Choice, ...]:
    """The readings of a clarifying question in words ("customers in Lyon", "suppliers in Lyon"),
    each with what it means to the database; labels that are words already stay as they are."""
    options: Sequence[Option] = clarification.options
    readings = [_reading(o.value) for o in options]
    known = [r for r in readings if r is not None]
    tables_differ = len({r["table"] for r in known}) > 1
    columns_differ = len({r.get("column", "") for r in known}) > 1
    out = []
    for option, reading in zip(options, readings, strict=True):
        if reading is not None:
            label = _in_words(
                reading, option.label, tables_differ=tables_differ, columns_differ=columns_differ
            )
        else:
            found = _SQLISH.match(option.label)  # an engine label in the schema's terms
            label = option.label
            if found is not None and "_" in found.group(0):
                label = f"{_name(found.group('column'))} {found.group('meaning') or found.group('value')}"
        out.append(Choice(label or option.label, _technical(option, reading)))
    labels = [c.label.lower() for c in out]
    if len(set(labels)) < len(labels):  # the words do not tell them apart: keep the engine's labels
        return tuple(Choice(o.label, c.meaning) for o, c in zip(options, out, strict=True))
    return tuple(out)


def choice_label(clarification: Clarification, value: str, fallback: str) -> str:
    """The words of the option whose value is `value` (what was chosen, said as it was offered)."""
    for option, choice in zip(clarification.options, choices(clarification), strict=True):
        if option.value == value:
            return choice.label
    return fallback


_ENGINE_QUESTION = re.compile(r"^Which (?:value|column|table) does '(?P<words>.+)' mean\?$")


def question_in_words(clarification: Clarification) -> str:
    """The clarifying question without the schema's vocabulary ("Which column does '2024' mean?"
    → "What do you mean by “2024”?")."""
    found = _ENGINE_QUESTION.match(clarification.question.strip())
    return f"What do you mean by “{found.group('words')}”?" if found else clarification.question


def slug(text: str, limit: int = 40) -> str:
    """An answer's question as a file name (its CSV, its chart), in every chat."""
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "result"
