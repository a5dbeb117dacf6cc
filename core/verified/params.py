"""A verified query's parameters: the values of its question that its SQL writes as literals.

A span of the question (core/verified/reading.py) is a parameter when literals of the SQL say the
same thing — "Lyon", matched in location.city, and `city = 'Lyon'`; "2024" and the bounds
'2024-01-01' / '2025-01-01'; "top 5" and `LIMIT 5`. Anything less certain stays fixed: a value
the index is not sure of, a column that is not the one compared, a number written twice, a literal
two spans could claim. A fixed value only costs reuse (the same words must be asked again); a
wrong parameter would answer another question with the wrong SQL.

A question that speaks of a moving period ("this year", "last month") over SQL with fixed dates is
not reusable at all: next month the same words mean other dates.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from core.dictionary import words
from core.retrieval import ValueMatch
from core.verified.lexicon import DatabaseLexicon
from core.verified.literals import Literal, claims_time, date_text, literals_of, value_form
from core.verified.query import Param
from core.verified.reading import Lexicon, Span, read

CONFIDENT = 0.95  # a value span names a stored value this surely, or it is no parameter
UNIQUE_GAP = 0.03  # and no other value of the same column comes this close


@dataclass(frozen=True)
class Detected:
    params: tuple[Param, ...]
    reusable: bool
    note: str = ""  # why it is not reusable


def plural_of(text: str, value: object) -> bool:
    """`text` is the stored value said in the plural ('startups' for 'startup'): the value's
    own words, each made singular. Why: the value index scores a plural below a sure match,
    yet 'what % of clients are startups' names the segment as surely as 'startup' does."""
    said, stored = words(text), words(str(value))
    return bool(said) and said == stored


def surely(span: Span, table: str, column: str) -> ValueMatch | None:
    """The stored value of `table.column` that `span` surely names, if one does (a plural of
    it counts as the value itself)."""
    t, c = table.lower(), column.lower()
    own = sorted(
        (
            replace(m, score=1.0) if plural_of(span.text, m.value) else m
            for m in span.values
            if m.table.lower() == t and m.column.lower() == c
        ),
        key=lambda m: -m.score,
    )
    if not own or own[0].score < CONFIDENT:
        return None
    rival = next((m for m in own[1:] if m.value != own[0].value), None)
    if rival is not None and rival.score > own[0].score - UNIQUE_GAP:
        return None
    return own[0]


def columns_of(span: Span) -> list[tuple[str, str]]:
    return list(dict.fromkeys((m.table, m.column) for m in span.values))


def same_column(literal: Literal, table: str, column: str, tables: frozenset[str]) -> bool:
    """`literal` is compared with `table.column` (or with a view column named for it)."""
    if literal.column is None:
        return False
    t, c = table.lower(), column.lower()
    if literal.column not in (c, f"{t}_{c}"):
        return False
    return literal.table is None or literal.table == t or literal.table not in tables


@dataclass(frozen=True)
class _Claim:
    span: Span
    literals: tuple[Literal, ...]
    match: ValueMatch | None = None


def detect(
    question: str, sql: str, dialect: str, lexicon: Lexicon | DatabaseLexicon, tables: Iterable[str] = ()
) -> Detected:
    """The parameters of a verified `question` → `sql` pair (`tables`: the database's table names)."""
    reading = read(question, lexicon)
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except SqlglotError:
        return Detected((), False, "its SQL could not be read, so nothing in it can change")
    if tree is None:
        return Detected((), False, "it has no SQL")
    known = frozenset(t.lower() for t in tables)
    literals = literals_of(tree)
    claims = [c for span in reading.spans if (c := _claim(span, literals, known)) is not None]
    claims = _resolve(claims)
    params = _named(claims, tree)
    claimed = {i for p in params for i in p.literals}
    if reading.relative_time and any(_fixed_date(lit) for lit in literals if lit.index not in claimed):
        return Detected(
            params,
            False,
            "the question speaks of a moving period but the SQL fixes its dates, so it is kept as "
            "an example for the SQL writer and never answered from directly",
        )
    return Detected(params, True)


def _claim(span: Span, literals: list[Literal], tables: frozenset[str]) -> _Claim | None:
    if span.kind == "value":
        options = []
        for table, column in columns_of(span):
            best = surely(span, table, column)
            if best is None:
                continue
            own = tuple(
                lit
                for lit in literals
                if not lit.positional
                and same_column(lit, table, column, tables)
                and value_form(lit.text, best.value) is not None
            )
            if own:
                options.append(_Claim(span, own, best))
        return options[0] if len(options) == 1 else None  # two columns: which one is meant?
    if span.kind == "number":
        own = tuple(
            lit
            for lit in literals
            if not lit.positional and not lit.is_string and lit.text == str(span.when[0])
        )
        return _Claim(span, own) if len(own) == 1 else None
    own = tuple(lit for lit in literals if claims_time(span.kind, span.when, lit))
    return _Claim(span, own) if own else None


def _resolve(claims: list[_Claim]) -> list[_Claim]:
    """Overlapping spans: the longer one wins ("March 2025" over "2025", "prod-frankfurt-1" over
    "1"); equally long ones both lose. Then a literal claimed twice is nobody's."""
    kept = []
    for c in claims:
        rivals = [o for o in claims if o is not c and o.span.overlaps(c.span)]
        size = c.span.last - c.span.first
        if all(size > o.span.last - o.span.first for o in rivals):
            kept.append(c)
    owners: dict[int, int] = {}
    for c in kept:
        for lit in c.literals:
            owners[lit.index] = owners.get(lit.index, 0) + 1
    return [c for c in kept if all(owners[lit.index] == 1 for lit in c.literals)]


def _named(claims: list[_Claim], tree: exp.Expr) -> tuple[Param, ...]:
    limits = {
        i
        for i, node in enumerate(tree.find_all(exp.Literal, bfs=False))
        if isinstance(node.parent, exp.Limit)
    }
    params: list[Param] = []
    used: dict[str, int] = {}
    for c in sorted(claims, key=lambda c: c.span.start):
        s = c.span
        if s.kind == "value" and c.match is not None:
            base = c.match.column.lower()
        elif s.kind == "number":
            base = "limit" if c.literals[0].index in limits else "number"
        else:
            base = s.kind
        used[base] = used.get(base, 0) + 1
        name = base if used[base] == 1 else f"{base}_{used[base]}"
        params.append(
            Param(
                name=name,
                kind=s.kind,
                text=s.text,
                start=s.start,
                end=s.end,
                literals=tuple(lit.index for lit in c.literals),
                originals=tuple(lit.text for lit in c.literals),
                table=c.match.table if c.match else "",
                column=c.match.column if c.match else "",
                value=c.match.value if c.match else "",
                when=s.when,
            )
        )
    return tuple(params)


def _fixed_date(literal: Literal) -> bool:
    if literal.positional:
        return False
    if literal.is_string:
        return date_text(literal.text) is not None
    return literal.text.isdigit() and 1900 <= int(literal.text) <= 2100
