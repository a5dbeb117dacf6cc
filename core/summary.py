"""How a result reads to a person: the answer sentence, table cells, CSV values, one rounding for all.

Every chat adapter (Slack, Teams), the terminal and the files attached to an answer format values
here, so a number is rounded once — per column, from its values and what produced it — and reads
the same in the sentence, the table and the CSV (13,092.37 everywhere, never 13092.369999999997
in one of them). NULL reads "—". The sentence says what the rows are: a single value is a
sentence of its own ("Number of clients: 300."), several rows name their order and the first few
("Top 10 clients by total credit, highest total credit first: Acme (12,300 €), …"), a time
series says where it went ("rose from 56 in Jan 2024 to 113 in Jun 2026").
"""

from __future__ import annotations

import csv
import datetime as dt
import decimal
import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from core.answer import Outcome, json_value
from core.result_shape import TIME_NAMES, ColumnMeaning, ResultShape, plain_shape, result_shape
from core.result_shape import humanize as humanize  # re-exported: charts and older callers
from core.trace import Trace
from core.units import with_unit

NULL_TEXT = "—"
NO_ROWS = "No rows match the question."
MAX_DECIMALS = 6
SIGNIFICANT = 12  # digits a float keeps: past them is binary noise (0.1 + 0.2)
LISTED = 3  # items a sentence names before "and N more"
MAX_SUBJECT = 120


@dataclass(frozen=True)
class NumberStyle:
    """How one column's numbers are written: decimals (None: not a number column) and separators."""

    decimals: int | None = None
    separators: bool = True


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def _finite(value: Any) -> bool:
    return _is_number(value) and math.isfinite(float(value))


def _noise_free(value: float | decimal.Decimal) -> decimal.Decimal:
    """The value as a Decimal with binary noise removed (12 significant digits)."""
    if isinstance(value, decimal.Decimal):
        return value
    return decimal.Decimal(format(float(value), f".{SIGNIFICANT}g"))


def _decimals_in(value: decimal.Decimal) -> int:
    exponent = value.normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0


class _Stats:
    """What decides a column's rounding, gathered one value at a time (a CSV file can be long)."""

    def __init__(self) -> None:
        self.numbers = 0
        self.others = 0
        self.all_int = True
        self.real = 0  # most decimals a value really has (binary noise removed)
        self.largest = decimal.Decimal(0)
        self.smallest: decimal.Decimal | None = None  # smallest non-zero magnitude

    def add(self, value: Any) -> None:
        if value is None:
            return
        if not _is_number(value):
            self.others += 1
            return
        if not _finite(value):
            return
        self.numbers += 1
        if isinstance(value, int):
            return
        self.all_int = False
        exact = _noise_free(value)
        self.real = min(MAX_DECIMALS, max(self.real, _decimals_in(exact)))
        magnitude = abs(exact)
        self.largest = max(self.largest, magnitude)
        if magnitude and (self.smallest is None or magnitude < self.smallest):
            self.smallest = magnitude

    def style(self, meaning: ColumnMeaning | None) -> NumberStyle:
        if not self.numbers or self.others:
            return NumberStyle(decimals=None)
        separators = not (meaning is not None and meaning.identifier)
        if self.all_int:
            return NumberStyle(decimals=0, separators=separators)
        stored = meaning is not None and meaning.column != "" and meaning.aggregate in ("", "min", "max")
        if stored or self.real == 0:
            return NumberStyle(decimals=self.real, separators=separators)
        if self.largest >= 1:
            return NumberStyle(decimals=min(self.real, 2), separators=separators)
        smallest = self.smallest if self.smallest is not None else decimal.Decimal(1)
        wanted = max(2, -smallest.adjusted() + 1)  # two significant digits of the smallest
        return NumberStyle(decimals=min(self.real, wanted, MAX_DECIMALS), separators=separators)


def number_style(values: Iterable[Any], meaning: ColumnMeaning | None = None) -> NumberStyle:
    """One rounding for a column: stored values keep their own precision (up to 6 decimals); computed
    ones (averages, sums of fractions, expressions) get 2 decimals, or 2 significant digits below 1."""
    stats = _Stats()
    for value in values:
        stats.add(value)
    return stats.style(meaning)


def rounded(value: Any, style: NumberStyle) -> Any:
    """The value rounded as its column is (for the CSV); other values as JSON-friendly as stored."""
    if style.decimals is None or not _finite(value):
        return json_value(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    quantized = _noise_free(value).quantize(decimal.Decimal(1).scaleb(-style.decimals))
    return int(quantized) if style.decimals == 0 else float(quantized)


def number_text(value: Any, style: NumberStyle) -> str:
    """A number as people read it: 13,092.37; an id or a year without separators: 2024."""
    if style.decimals is None or not _finite(value):
        return display(value)
    number = rounded(value, style)
    if style.separators:
        return f"{number:,.{style.decimals}f}"
    return f"{number:.{style.decimals}f}"


def cell(value: Any, style: NumberStyle | None = None) -> str:
    """A value as a table cell: one line, NULL as "—", numbers rounded as their column is."""
    if value is None:
        return NULL_TEXT
    if style is not None and style.decimals is not None and _is_number(value):
        return number_text(value, style)
    return display(value)


def display(value: Any) -> str:
    """A value on one line, with no column to round it by: 16960997.45, not 16960997.44999997."""
    if value is None:
        return NULL_TEXT
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else format(value, f".{SIGNIFICANT}g")
    return " ".join(str(json_value(value)).split())


def format_value(value: Any) -> str:
    """A single value in running text, with no column to round it by."""
    if value is None:
        return "nothing (NULL)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | decimal.Decimal):
        return number_text(value, number_style([value]))
    return str(value)


# ---------------------------------------------------------------- time labels


def as_time(value: Any) -> dt.datetime | None:
    """Dates and ISO date strings (SQLite returns dates as text) as datetimes; else None."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str):
        text = value.strip()
        if not re.match(
            r"^\d{4}-\d{2}(-\d{2})?([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$", text
        ):
            return None
        if len(text) == 7:  # YYYY-MM
            text += "-01"
        try:
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
        except ValueError:
            return None
    return None


def time_labels(values: Sequence[Any]) -> list[str] | None:
    """Labels for a run of dates: 'Jan 2024' when they are months, '2024-01-31' when days; None
    when they are not dates. Years as integers stay as they are."""
    times = [as_time(v) for v in values]
    if not values or any(t is None for t in times):
        return None
    points = [t for t in times if t is not None]
    if all(t.day == 1 and t.hour == t.minute == 0 for t in points):
        return [t.strftime("%b %Y") for t in points]
    if all(t.hour == t.minute == t.second == 0 for t in points):
        return [t.strftime("%Y-%m-%d") for t in points]
    return [t.strftime("%Y-%m-%d %H:%M") for t in points]


def is_time_column(meaning: ColumnMeaning, values: Sequence[Any]) -> bool:
    if meaning.kind in ("date", "datetime") or all(as_time(v) is not None for v in values if v is not None):
        return bool(values) and all(v is not None for v in values)
    # years as integers ("year", 2021, 2022, ...)
    return bool(TIME_NAMES.search(meaning.name)) and all(
        isinstance(v, int) and 1800 <= v <= 2200 for v in values
    )


def trend(
    labels: Sequence[str], values: Sequence[float], unit: str = "", style: NumberStyle | None = None
) -> str:
    """'rose from 56 in Jan 2024 to 113 in Jun 2026, highest 130 in Mar 2025' (values in time order)."""
    style = style or number_style(list(values))

    def text(v: float) -> str:
        return with_unit(number_text(v, style), unit)

    first, last = values[0], values[-1]
    if last > first:
        move = f"rose from {text(first)} in {labels[0]} to {text(last)} in {labels[-1]}"
    elif last < first:
        move = f"fell from {text(first)} in {labels[0]} to {text(last)} in {labels[-1]}"
    else:
        move = f"was {text(first)} in both {labels[0]} and {labels[-1]}"
    peak = max(range(len(values)), key=lambda i: values[i])
    if 0 < peak < len(values) - 1 and values[peak] > max(first, last):
        move += f", highest {text(values[peak])} in {labels[peak]}"
    return move


# ---------------------------------------------------------------- the sentence

VERBS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^(?:count|how many|number of|find the number of|get the number of)\s+(?:the\s+)?(?:number of\s+)?", re.I), "Number of "),
    (re.compile(r"^(?:sum(?: up)?|total|add up|compute the total(?: of)?|calculate the total(?: of)?)\s+(?:the\s+)?", re.I), "Total "),
    (re.compile(r"^(?:average|compute the average(?: of)?|calculate the average(?: of)?|find the average(?: of)?)\s+(?:the\s+)?", re.I), "Average "),
    (re.compile(r"^(?:list|show|find|get|give|return|display|retrieve|identify|select|fetch|determine|calculate|compute|rank|name)\s+(?:me\s+)?(?:all\s+)?(?:the\s+)?", re.I), ""),
)  # fmt: skip


def subject(main_task: str) -> str:
    """What the rows are, from the question's main task: 'Count the clients per segment' → 'Number of
    clients per segment'; 'List the top 10 clients by credit' → 'Top 10 clients by credit'."""
    task = " ".join(main_task.split(";", 1)[0].split()).rstrip(".?! ")
    if not task:
        return ""
    for pattern, prefix in VERBS:
        match = pattern.match(task)
        if match and match.end() < len(task):
            task = prefix + task[match.end() :]
            break
    task = task[:1].upper() + task[1:]
    return task if len(task) <= MAX_SUBJECT else task[: MAX_SUBJECT - 1] + "…"


def _order_phrase(shape: ResultShape, rows: Sequence[Sequence[Any]]) -> tuple[str, int | None]:
    """(", highest total credit first", the ordering column) from the ORDER BY; ("", None) if none."""
    if not shape.order:
        return "", None
    first = shape.order[0]
    meaning = shape[first.index]
    values = [r[first.index] for r in rows if first.index < len(r)]
    if is_time_column(meaning, values):
        return (", newest first" if first.descending else ", oldest first"), first.index
    if values and all(v is None or _is_number(v) for v in values):
        word = "highest" if first.descending else "lowest"
        return f", {word} {meaning.header[:1].lower()}{meaning.header[1:]} first", first.index
    return (", Z to A" if first.descending else ", A to Z"), first.index


def _label_and_measure(
    shape: ResultShape, rows: Sequence[Sequence[Any]], ordered: int | None
) -> tuple[int, int | None]:
    width = len(shape)
    numeric = [all(r[i] is None or _is_number(r[i]) for r in rows) for i in range(width)]
    label = next((i for i in range(width) if not numeric[i]), 0)
    if ordered is not None and ordered != label and numeric[ordered]:
        return label, ordered
    measure = next((i for i in range(width) if i != label and numeric[i] and not shape[i].identifier), None)
    return label, measure


def _sentence_value(value: Any, style: NumberStyle, unit: str) -> str:
    text = cell(value, style)
    return with_unit(text, unit) if value is not None and style.decimals is not None else text


def summarize(
    main_task: str,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    truncated: bool,
    shape: ResultShape | None = None,
) -> str:
    """The one sentence above the table. `shape` (core.result_shape) adds units and the order."""
    if not rows:
        return NO_ROWS
    shape = shape if shape is not None and len(shape) == len(columns) else plain_shape(columns)
    styles = [number_style([r[i] for r in rows], shape[i]) for i in range(len(columns))]
    what = subject(main_task)
    if len(rows) == 1 and len(columns) == 1:
        value = _sentence_value(rows[0][0], styles[0], shape[0].unit)
        return f"{what or shape[0].header}: {value}."
    if len(rows) == 1:
        pairs = ", ".join(
            f"{m.header} {_sentence_value(v, styles[i], m.unit)}"
            for i, (m, v) in enumerate(zip(shape.columns, rows[0], strict=False))
        )
        return f"{what + ': ' if what else ''}{pairs}."
    count = f"{len(rows):,}{'+' if truncated else ''} rows"
    head = f"{what} ({count})" if what else count[:1].upper() + count[1:]
    order, ordered = _order_phrase(shape, rows)
    label, measure = _label_and_measure(shape, rows, ordered)
    label_values = [r[label] for r in rows]
    if (
        measure is not None
        and is_time_column(shape[label], label_values)
        and (ordered is None or ordered == label)
        and all(r[measure] is not None for r in rows)
    ):
        ordered_rows = sorted(rows, key=lambda r: as_time(r[label]) or r[label])
        labels = time_labels([r[label] for r in ordered_rows]) or [cell(r[label]) for r in ordered_rows]
        values = [float(r[measure]) for r in ordered_rows]
        return f"{head}: {shape[measure].header[:1].lower()}{shape[measure].header[1:]} {trend(labels, values, shape[measure].unit, styles[measure])}."
    items = []
    for r in rows[:LISTED]:
        item = cell(r[label], styles[label])
        if measure is not None:
            item += f" ({_sentence_value(r[measure], styles[measure], shape[measure].unit)})"
        items.append(item)
    more = f" and {len(rows) - LISTED:,} more" if len(rows) > LISTED else ""
    return f"{head}{order}: {', '.join(items)}{more}."


# ---------------------------------------------------------------- an answer, presented


def main_task_of(trace: Trace) -> str:
    """The main task the LLM read in the question, or "": the "understand" stage's when understanding
    is its own call, else the task line the SQL writer put before its queries ("generate")."""
    for stage in trace.stages:
        if stage.name == "understand" and stage.outputs.get("main_task"):
            task = stage.outputs["main_task"]
            return "; ".join(str(t) for t in task) if isinstance(task, list | tuple) else str(task)
    for stage in trace.stages:
        if stage.name == "generate" and stage.outputs.get("task"):
            return str(stage.outputs["task"])
    return ""


@dataclass(frozen=True)
class Presentation:
    """An answer's rows as people read them, the same for every chat surface and file."""

    sentence: str
    shape: ResultShape
    styles: tuple[NumberStyle, ...]

    @property
    def headers(self) -> tuple[str, ...]:
        return self.shape.headers

    @property
    def numeric(self) -> tuple[bool, ...]:
        return tuple(s.decimals is not None for s in self.styles)

    def cells(self, row: Sequence[Any]) -> list[str]:
        return [cell(v, self.styles[i]) if i < len(self.styles) else display(v) for i, v in enumerate(row)]

    def csv_row(self, row: Sequence[Any]) -> list[Any]:
        return [
            rounded(v, self.styles[i]) if i < len(self.styles) else json_value(v) for i, v in enumerate(row)
        ]


def present(outcome: Outcome, shape: ResultShape | None = None) -> Presentation:
    """The sentence, headers and rounding of an answer; `shape` from `result_shape` with the catalog
    adds units and catalog headers (without it the SQL alone is read)."""
    if shape is None or len(shape) != len(outcome.columns):
        shape = result_shape(outcome.sql, outcome.columns) if outcome.sql else plain_shape(outcome.columns)
    styles = tuple(number_style([r[i] for r in outcome.rows], shape[i]) for i in range(len(outcome.columns)))
    sentence = summarize(main_task_of(outcome.trace), outcome.columns, outcome.rows, outcome.truncated, shape)
    return Presentation(sentence=sentence, shape=shape, styles=styles)


NUMBER_TEXT = re.compile(r"^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$")


def _parsed(text: str) -> Any:
    """A CSV field back to a value: '' → None, '12' → 12, '1.5' → 1.5, anything else stays text."""
    if text == "":
        return None
    if NUMBER_TEXT.match(text):
        return int(text) if re.fullmatch(r"-?\d+", text) else float(text)
    return text


def round_csv_file(path: Path, shape: ResultShape | None = None) -> None:
    """Rewrite a streamed CSV export (header + rows) rounded as the answer's table is, in two passes
    over the file so a long export never sits in memory."""
    with path.open(newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None:
            return
        stats = [_Stats() for _ in header]
        for row in reader:
            for i, text in enumerate(row[: len(stats)]):
                stats[i].add(_parsed(text))
    if shape is None or len(shape) != len(header):
        shape = plain_shape(header)
    styles = [s.style(shape[i]) for i, s in enumerate(stats)]
    if all(s.decimals is None or s.decimals == 0 for s in styles):
        return  # nothing to round: integers and text are written as they are
    rounded_path = path.with_name(path.name + ".rounded")
    with path.open(newline="") as source, rounded_path.open("w", newline="") as target:
        reader, writer = csv.reader(source), csv.writer(target)
        writer.writerow(next(reader))
        for row in reader:
            writer.writerow(
                [
                    rounded(_parsed(text), styles[i]) if i < len(styles) and styles[i].decimals else text
                    for i, text in enumerate(row)
                ]
            )
    rounded_path.replace(path)
