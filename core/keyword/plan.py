"""The plan: a question part-way to SQL, and the query it ends as.

Keyword mode reads a question in passes, as sqlglot optimises a tree: each pass is a function
`(Plan, Context) -> Plan` that returns a new plan and changes nothing it was given (or raises
`Decline` / `AmbiguousDate`, which core/keyword/interpret.py turns into an `Abstain` or an
`Ambiguity`). A `Plan` carries the question (its Shape and Matching), the `Query` built so far,
and what the passes tell each other on the way: the role each phrase took, the dates and
rankings still to place. The `Context` is what every pass reads and none changes.

The `Query` names base tables and columns only (what is counted, summed or listed; groups;
filters; order; limit). core/keyword/compile.py writes it as SQL over the view and
core/keyword/explain.py says it in plain words — keeping the query apart from the SQL is what
lets the same reading be shown to the person, checked, and compiled for any dialect.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Literal, get_args

from core.keyword.match import Lexicon, Matching, Mention
from core.keyword.readings import Reading
from core.keyword.shapes import Cue, Literal_, Shape

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
_FUNCS: dict[str, Func] = {f: f for f in get_args(Func)}
_OPS: dict[str, Op] = {op: op for op in get_args(Op)}


def cue_func(cue: Cue) -> Func:
    """The aggregate an 'agg' cue stands for (its arg: AVG, SUM, MIN or MAX)."""
    return _FUNCS[cue.arg]


def cue_op(cue: Cue) -> Op:
    """The operator a 'cmp' or 'text' cue stands for (its arg: > >= < <= =, contains, prefix, suffix)."""
    return _OPS[cue.arg]


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


RoleKind = Literal[
    "",
    "measure",
    "group",
    "order",
    "entity",
    "projection",
    "filter",
    "subject",
    "having",
    "absorbed",
    "loose",
]


@dataclass(frozen=True)
class Role:
    """What a phrase does in the query."""

    kind: RoleKind = ""
    governed_by_list: bool = False


@dataclass(frozen=True)
class Plan:
    """The question, the query so far, and what the passes have settled on the way."""

    shape: Shape
    matching: Matching
    query: Query = Query()
    roles: Mapping[int, Role] = field(default_factory=frozen_map)  # by the phrase's first token
    used_literals: frozenset[int] = frozenset()  # literals (by first token) that found their place
    entities: tuple[tuple[Mention, bool], ...] = ()  # (table phrase, listed?)
    pending_dates: tuple[tuple[Literal_, str, Mention | None], ...] = ()  # (literal, prep, subject)
    superlative: tuple[Cue, Mention | None] | None = None
    top: tuple[Cue, int | None] | None = None
    order_dir: bool | None = None  # from 'descending' / 'alphabetically'...
    by_age: bool = False  # the direction was said in ages ('youngest first'): a date sorts the other way
    alpha: bool = False
    skipped_cues: frozenset[int] = frozenset()  # cue positions a recognised phrase already read
    negated: frozenset[int] = frozenset()  # value phrases (by first token) a 'not' is said of
    absence: frozenset[int] = frozenset()  # tokens of 'do not have any policies', read as a whole
    # columns whose values are all required ('both Afghanistan and Albania')
    both: frozenset[Ref] = frozenset()
    explicit: tuple[Mention, ...] = ()  # columns the question asks to see
    loose_columns: tuple[Mention, ...] = ()
    buckets: tuple[tuple[Cue, Mention | None], ...] = ()  # ('per month', its date column)
    time_column: Ref | None = None  # the date a time bucket groups by; dates in the question restrict it too
    date_hints: tuple[str, ...] = ()  # unmatched words that name a date ('graduate')

    # -- reading -------------------------------------------------------------------------------

    def role(self, m: Mention) -> Role:
        return self.roles.get(m.start, Role())

    def listed(self) -> list[Mention]:
        """The entities the question lists or ranks ('which clients …')."""
        return [m for m, is_listed in self.entities if is_listed]

    def adjacent(self, m: Mention, lit: Literal_) -> bool:
        """Only stop words (or a date preposition) between the mention and the literal."""
        for i in range(m.end, lit.start):
            role = self.shape.role[i]
            if role == "stop":
                continue
            cue = self.shape.cue_at(i)
            if role == "cue" and cue is not None and cue.kind in ("date_prep", "cmp", "between"):
                continue
            return False
        return True

    def adjacent_after(self, lit: Literal_, m: Mention) -> bool:
        return all(self.shape.role[i] == "stop" for i in range(lit.end, m.start))

    # -- new plans -----------------------------------------------------------------------------

    def but(self, **changes: Any) -> Plan:
        """This plan with some fields changed."""
        return replace(self, **changes)

    def with_query(self, **changes: Any) -> Plan:
        """This plan with some fields of its query changed."""
        return replace(self, query=replace(self.query, **changes))

    def with_role(self, m: Mention, kind: RoleKind | None = None, governed: bool | None = None) -> Plan:
        old = self.role(m)
        role = Role(
            kind=old.kind if kind is None else kind,
            governed_by_list=old.governed_by_list if governed is None else governed,
        )
        return replace(self, roles=frozen_map({**self.roles, m.start: role}))

    def noted(self, note: str) -> Plan:
        return self.with_query(notes=(*self.query.notes, note))

    def adding(self, **items: Any) -> Plan:
        """This plan with items appended to tuple fields of its query: adding(filters=f)."""
        return self.with_query(**{k: (*getattr(self.query, k), v) for k, v in items.items()})


@dataclass(frozen=True)
class Context:
    """What every pass reads and none changes."""

    lex: Lexicon
    today: dt.date
    readings: tuple[Reading, ...] = ()


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
