"""The question tree: what a question asks, as the grammar reads it before the schema is consulted.

Why a tree: keyword mode and the verified-answer matcher must agree on what a question means, and
a reviewer must be able to see it. The grammar (core/keyword/grammar.py) turns the words into this
tree using only the lexicon; the binding pass (core/keyword/bind.py) then says which table, column
or stored value each `Phrase` names. Two questions ask the same thing exactly when their bound
trees agree — the measure and the set it is over, the filters, the grouping, the period grain —
whatever words they used.

Every node is frozen: a tree is a value, compared and hashed as one.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, fields, is_dataclass, replace
from typing import Any, Literal, TypeVar, cast

# 'value': a figure of each row as it is, not aggregated — a side of a ratio said with no aggregate
# ('the ratio of capacity to range': each row's capacity divided by its range)
Func = Literal["count", "sum", "avg", "min", "max", "share", "ratio", "value"]
Op = Literal["=", "!=", ">", ">=", "<", "<=", "between", "contains", "prefix", "suffix", "absent", "present"]
ValueKind = Literal["number", "year", "month", "quarter", "date", "period", "quoted"]
Ask = Literal["count", "list", "measure", "rank"]


@dataclass(frozen=True)
class Phrase:
    """Content words of the question, tokens [start, end), to be bound to the schema."""

    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Value:
    """A number, year, month, quarter, date, period or quoted text said in the question.

    number: int | float; year: int; month: (year | None, 1..12); quarter: (year | None, 1..4);
    date: datetime.date; quoted: str; period: (unit, offset, length) — offset < 0 and length 0:
    the last |offset| units up to today; otherwise the calendar unit `offset` away from the
    current one (0 this, -1 the last)."""

    kind: ValueKind
    value: Any
    start: int
    end: int
    text: str

    @property
    def is_time(self) -> bool:
        return self.kind in ("year", "month", "quarter", "date", "period")


@dataclass(frozen=True)
class Condition:
    """A restriction of the rows: `subject` (the column or thing, None when only the value is
    said: 'active hosts', 'in Berlin') compared by `op` with `value` ('salary over 115000',
    'not active', 'without an email address' — op absent, value None)."""

    subject: Phrase | None
    op: Op
    value: Phrase | Value | None = None
    upper: Value | None = None  # between: the upper bound, inclusive
    unit: str = ""  # said with the number ('GB', 'years old'): a hint to the column
    hint: str = ""  # a word that implies the column ('older' → age, 'earning' → a money column)
    prep: str = ""  # the preposition or verb before the value ('from', 'rated')
    also: tuple[Phrase, ...] = ()  # other values, any of which will do ('from Aberdeen or from Denver')
    whole: bool = False  # a share: said of the whole, not of the part ('of all the clients in Spain, …')


@dataclass(frozen=True)
class Window:
    """A time restriction: 'in 2025', 'before March 2024', 'between 1960 and 1970', 'last 30 days'."""

    value: Value
    prep: str = "in"  # in | on | before | after | since | until | between
    upper: Value | None = None
    subject: Phrase | None = None  # the date said with it ('signed up', 'signup date')


@dataclass(frozen=True)
class Measure:
    """What is computed: a count of rows (of `of`, or of the thing), an aggregate of a column, a
    share of rows that meet `where` ('what % of payments failed'), or a ratio of two measures
    ('cost per CPU hour'; 'the ratio of helpfulness scores to clarity scores': `top` the
    numerator, `over` the denominator, each in its place — the ratio turned round is another
    question)."""

    func: Func
    of: Phrase | None = None
    distinct: bool = False
    where: tuple[Condition, ...] = ()  # share: the rows counted above the line
    over: Measure | None = None  # ratio: the denominator
    top: Measure | None = None  # ratio: the numerator, when said as a measure of its own
    hint: str = ""  # a word that names the column by what it measures ('spent' → money)
    counted: bool = False  # 'the average number of payments': the aggregate of a count, not of a column


@dataclass(frozen=True)
class Group:
    """One figure per value of `by` ('per segment'), or per calendar `unit` of a date ('per month',
    'per signup year': unit and the date said)."""

    by: Phrase | None = None
    unit: str = ""


@dataclass(frozen=True)
class Order:
    """How rows are ranked: by a measure or a column, or by what an adjective implies ('the
    oldest hosts': `hint` age or a date), highest first when `desc`."""

    key: Measure | Phrase | None
    desc: bool
    hint: str = ""
    ties: bool = False  # a superlative: every row that ties for first, not one of them


@dataclass(frozen=True)
class Question:
    """The question's tree. `thing` is what is counted, listed or ranked ('clients'); `shown` the
    columns asked to be seen besides it ('names of', 'with their titles')."""

    ask: Ask
    thing: Phrase | None = None
    measures: tuple[Measure, ...] = ()
    shown: tuple[Phrase | Measure, ...] = ()  # a measure here is one already asked for, shown
    conditions: tuple[Condition, ...] = ()
    windows: tuple[Window, ...] = ()
    groups: tuple[Group, ...] = ()
    order: Order | None = None
    limit: int | None = None
    distinct: bool = False
    definitions: tuple[str, ...] = ()  # business definitions said by name (their refs)
    verbs: tuple[Phrase, ...] = ()  # what happened to the rows ('signed up'): it names their date
    only_shown: bool = False  # 'the names of …': what to show is said, nothing is added to it

    def phrases(self) -> list[Phrase]:
        """Every phrase of the tree, in the question's order."""
        found: list[Phrase] = []

        def add(x: object) -> None:
            if isinstance(x, Phrase):
                found.append(x)
            elif isinstance(x, Condition):
                add(x.subject)
                add(x.value)
                for p in x.also:
                    add(p)
            elif isinstance(x, Measure):
                add(x.of)
                add(x.top)
                add(x.over)
                for c in x.where:
                    add(c)
            elif isinstance(x, Window):
                add(x.subject)
            elif isinstance(x, Group):
                add(x.by)
            elif isinstance(x, Order):
                add(x.key)

        add(self.thing)
        for part in (*self.measures, *self.shown, *self.conditions, *self.windows, *self.groups):
            add(part)
        add(self.order)
        return sorted(found, key=lambda p: p.start)


def days(value: Value) -> tuple[dt.date, dt.date] | None:
    """[start, end) of a year, month, quarter or date value with its year said; None otherwise."""
    if value.kind == "year":
        return dt.date(value.value, 1, 1), dt.date(value.value + 1, 1, 1)
    if value.kind == "month" and value.value[0] is not None:
        year, month = value.value
        return dt.date(year, month, 1), dt.date(year + month // 12, month % 12 + 1, 1)
    if value.kind == "quarter" and value.value[0] is not None:
        year, q = value.value
        start = dt.date(year, 3 * q - 2, 1)
        return start, dt.date(year + (q == 4), (3 * q) % 12 + 1, 1)
    if value.kind == "date":
        return value.value, value.value + dt.timedelta(days=1)
    return None


N = TypeVar("N")


def shifted(node: N, n: int) -> N:
    """The node with every phrase and value `n` tokens further on: a follow-up's words read after
    those of the question it changes, as one reading (core/keyword/followup.py)."""
    if isinstance(node, Phrase | Value):
        return cast(N, replace(node, start=node.start + n, end=node.end + n))
    if isinstance(node, tuple):
        return cast(N, tuple(shifted(x, n) for x in node))
    if is_dataclass(node) and not isinstance(node, type):
        return cast(N, replace(node, **{f.name: shifted(getattr(node, f.name), n) for f in fields(node)}))
    return node
