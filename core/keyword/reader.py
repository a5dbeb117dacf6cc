"""The reader's state while one question becomes a plan, and the two ways reading stops early.

Reading happens in steps, each in its own module (walk, roles, filters, date_filters, ranking,
output, target, abstain; core/keyword/interpret.py runs them in order). They share what has been
read so far — the plan under construction, the role each phrase took, the pending dates and
rankings — in one `Reader`, so each step can be read on its own without a class hierarchy.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.keyword.columns import NUMERIC, TEMPORAL, column_kind
from core.keyword.match import Lexicon, Matching, Mention
from core.keyword.plan import Plan, Ref
from core.keyword.readings import Reading
from core.keyword.shapes import Cue, Literal_, Shape


class Decline(Exception):
    """Reading cannot go on without guessing; `words` are the words it could not use."""

    def __init__(self, reason: str, words: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.words = tuple(words)


class AmbiguousDate(Exception):
    """A date or a time bucket in the question could be about several date columns equally well:
    ask which. `words` are the question's words ('in 2024', 'per month')."""

    def __init__(self, words: str, refs: list[Ref]) -> None:
        super().__init__(words)
        self.words = words
        self.refs = refs


@dataclass
class Role:
    """What a mention does in the query."""

    kind: str = ""  # measure | group | order | entity | projection | filter | subject | having | absorbed
    governed_by_list: bool = False


@dataclass
class Reader:
    shape: Shape
    matching: Matching
    lex: Lexicon
    today: dt.date
    readings: list[Reading] = field(default_factory=list)
    plan: Plan = field(default_factory=Plan)
    roles: dict[int, Role] = field(default_factory=dict)  # id(mention) → role
    used_literals: set[int] = field(default_factory=set)
    entities: list[tuple[Mention, bool]] = field(default_factory=list)  # (table mention, listed?)
    pending_dates: list[tuple[Literal_, str, Mention | None]] = field(
        default_factory=list
    )  # (literal, prep, subject)
    superlative: tuple[Cue, Mention | None] | None = None
    top: tuple[Cue, int | None] | None = None
    order_dir: bool | None = None  # from 'descending' / 'alphabetically'...
    alpha: bool = False
    skipped_cues: set[int] = field(default_factory=set)  # cue positions a recognised phrase already read
    explicit: list[Mention] = field(default_factory=list)  # columns the question asks to see
    loose_columns: list[Mention] = field(default_factory=list)
    buckets: list[tuple[Cue, Mention | None]] = field(default_factory=list)  # ('per month', its date column)
    time_column: Ref | None = None  # the date a time bucket groups by; dates in the question restrict it too
    date_hints: list[str] = field(default_factory=list)  # unmatched words that name a date ('graduate')

    def role(self, m: Mention) -> Role:
        return self.roles.setdefault(id(m), Role())

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

    def date_subject(self, m: Mention) -> bool:
        """A date column, or a number column holding years: what a year or period can restrict."""
        s = m.sense
        if s is None or s.kind != "column" or not s.column:
            return False
        kind = column_kind(self.lex, s.table, s.column)
        return kind in TEMPORAL or (kind in NUMERIC and "year" in s.column.lower())
