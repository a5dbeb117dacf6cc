"""The query plan: what keyword mode will compute, before any SQL is written.

A plan names base tables and columns only (what is counted, summed or listed; groups; filters;
order; limit). core/keyword/interpret.py builds it from the question, core/keyword/compile.py
writes it as SQL over the view and core/keyword/explain.py says it in plain words — keeping the
plan apart from the SQL is what lets the same reading be shown to the person, checked, and
compiled for any dialect. When no plan can be built without guessing, the reader returns an
`Abstain` (declined, with what it understood) or an `Ambiguity` (a question back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from core.keyword.readings import Reading

Func = Literal["COUNT", "SUM", "AVG", "MIN", "MAX"]
Op = Literal[
    "=", "!=", ">", ">=", "<", "<=", "in", "contains", "prefix", "suffix", "range", "month", "true", "present"
]


@dataclass(frozen=True)
class Ref:
    table: str
    column: str
    bucket: str | None = None  # a calendar unit of this date column: year | quarter | month | week | day

    @property
    def raw(self) -> Ref:
        """The column itself, without the bucket."""
        return Ref(self.table, self.column) if self.bucket else self


@dataclass(frozen=True)
class Measure:
    func: Func
    table: str  # the counted table, or the column's table
    column: str | None = None  # None: COUNT of the table's rows
    distinct: bool = False  # COUNT(DISTINCT column)
    words: str = ""
    since: str | None = None  # a duration: `column` (the end) minus `since` (the start) ...
    unit: str = ""  # ... in seconds | minutes | hours | days | weeks

    @property
    def ref(self) -> Ref | None:
        return Ref(self.table, self.column) if self.column else None

    @property
    def refs(self) -> list[Ref]:
        """Every column the measure reads."""
        return [Ref(self.table, c) for c in (self.column, self.since) if c]


@dataclass(frozen=True)
class Filter:
    ref: Ref
    op: Op
    value: Any  # str | number | tuple (in: values; range: (lo, hi) either may be None; month: int)
    words: str = ""  # the question's words behind it
    meaning: str = ""  # a code's catalog meaning ('active' for 'ACT')


@dataclass(frozen=True)
class Having:
    measure: Measure
    op: str
    value: float
    words: str = ""


@dataclass(frozen=True)
class OrderKey:
    key: Ref | Measure
    desc: bool
    words: str = ""


@dataclass
class Plan:
    target: str | None = None  # the table whose rows are counted, listed or ranked
    measures: list[Measure] = field(default_factory=list)
    groups: list[Ref] = field(default_factory=list)
    projection: list[Ref] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    having: list[Having] = field(default_factory=list)
    order: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    distinct: bool = False
    count_groups: str = ""  # the words counted when counting the groups that pass HAVING
    # ('how many authors have more than 2 papers' → 'authors')
    notes: list[str] = field(default_factory=list)  # how words were read, for the interpretation
    tables: list[str] = field(default_factory=list)  # every table the plan touches, target first
    entity_rows: bool = False  # list shape: one row per target entity (label columns)
    hidden: list[Measure] = field(default_factory=list)  # measures that only order the rows
    names: dict[Ref, str] = field(default_factory=dict)  # label columns that stand for their entity
    ratio: tuple[Ref, Ref] | None = None  # a row's first number divided by its second
    calendar: dict[Ref, str] = field(default_factory=dict)  # text columns of month | weekday names

    def all_refs(self) -> list[Ref]:
        refs = [*self.groups, *self.projection, *(f.ref for f in self.filters)]
        refs += [r for m in self.measures for r in m.refs]
        refs += [h.measure.ref for h in self.having if h.measure.ref]
        refs += [o.key for o in self.order if isinstance(o.key, Ref)]
        refs += [r for o in self.order if isinstance(o.key, Measure) for r in o.key.refs]
        refs += list(self.ratio or ())
        return refs


@dataclass(frozen=True)
class Abstain:
    """Keyword mode declines: what it understood, what it did not, and a rephrasing to try."""

    reason: str
    understood: tuple[str, ...] = ()
    not_understood: tuple[str, ...] = ()
    suggestion: str = ""


@dataclass(frozen=True)
class Ambiguity:
    """Two or more equally plausible readings of the same words: ask the person."""

    words: str
    kind: Literal["AmbValue", "AmbTableColumn"]
    readings: tuple[Reading, ...]
    labels: tuple[str, ...]
