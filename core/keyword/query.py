"""The query a question is read as, and the other ends of reading it.

The `Query` names base tables and columns only (what is counted, summed or listed; groups;
filters; order; limit). core/keyword/compile.py writes it as SQL over the view and
core/keyword/explain.py says it in plain words — keeping the query apart from the SQL is what
lets the same reading be shown to the person, checked, and compiled for any dialect. Binding a
question may end instead in a `Decline` (said as an `Abstain`) or a question back (`Ambiguity`,
`AmbiguousDate`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal, get_args

from core.keyword.readings import Reading

Func = Literal["COUNT", "SUM", "AVG", "MIN", "MAX"]
Op = Literal[
    "=",
    "!=",
    ">",
    ">=",
    "<",
    "<=",
    "in",
    "contains",
    "prefix",
    "suffix",
    "range",
    "month",
    "true",
    "present",
    "none",
]
_OPS: dict[str, Op] = {op: op for op in get_args(Op)}


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
class Absent:
    """'customers who do not have any policies': no row of `table` refers to the row (its
    `column` holds the listed table's key `key`)."""

    table: str
    column: str
    key: Ref
    words: str = ""


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


def frozen_map(items: Mapping[Any, Any] | None = None) -> Mapping[Any, Any]:
    """A read-only mapping (a frozen dataclass field must not be changed in place)."""
    return MappingProxyType(dict(items or {}))


@dataclass(frozen=True)
class Query:
    """What keyword mode will compute, in base tables and columns."""

    target: str | None = None  # the table whose rows are counted, listed or ranked
    measures: tuple[Measure, ...] = ()
    groups: tuple[Ref, ...] = ()
    projection: tuple[Ref, ...] = ()
    filters: tuple[Filter, ...] = ()
    having: tuple[Having, ...] = ()
    order: tuple[OrderKey, ...] = ()
    limit: int | None = None
    distinct: bool = False
    count_groups: str = ""  # the words counted when counting the groups that pass HAVING
    # ('how many authors have more than 2 papers' → 'authors')
    notes: tuple[str, ...] = ()  # how words were read, for the interpretation
    tables: tuple[str, ...] = ()  # every table the query touches, target first
    hidden: tuple[Measure, ...] = ()  # measures that only order the rows
    unshown: tuple[Ref, ...] = ()  # groups that only pick the rows ('how many … the most common type')
    names: Mapping[Ref, str] = field(default_factory=frozen_map)  # label columns standing for their entity
    ratio: tuple[Ref, Ref] | None = None  # a row's first number divided by its second
    calendar: Mapping[Ref, str] = field(default_factory=frozen_map)  # text columns of month | weekday names
    absent: tuple[Absent, ...] = ()  # rows of another table that must not exist ('have no policies')
    ties: bool = False  # every row that ties with the first on the order, not `limit` of them

    def all_refs(self) -> list[Ref]:
        refs = [*self.groups, *self.projection, *(f.ref for f in self.filters)]
        refs += [r for m in self.measures for r in m.refs]
        refs += [h.measure.ref for h in self.having if h.measure.ref]
        refs += [o.key for o in self.order if isinstance(o.key, Ref)]
        refs += [r for o in self.order if isinstance(o.key, Measure) for r in o.key.refs]
        refs += list(self.ratio or ())
        return refs


class Decline(Exception):
    """Reading cannot go on without guessing; `words` are the words it could not use, and
    `understood` what it had read by then ('clients' → client)."""

    def __init__(self, reason: str, words: Sequence[str] = (), understood: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.words = tuple(words)
        self.understood = tuple(understood)


class AmbiguousDate(Exception):
    """A date or a time bucket in the question could be about several date columns equally well:
    ask which. `words` are the question's words ('in 2024', 'per month')."""

    def __init__(self, words: str, refs: list[Ref]) -> None:
        super().__init__(words)
        self.words = words
        self.refs = refs


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
