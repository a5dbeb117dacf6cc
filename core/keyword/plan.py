"""From a matched question to a query plan — or to a reasoned refusal, or to a question back.

The plan is the structure of the SQL (what is counted, summed or listed; groups; filters; order;
limit), over base tables and columns; core/keyword/compile.py writes it over the view. Reading
is left to right: each phrase takes its role from the cue words just before it ("average" →
the measure, "per" → a group, "top 5" → the entity ranked, "more than 3" → a comparison), stored
values become filters, and a few rules settle the rest (the entity a "which" question lists,
argmax versus MAX, when a ranking keeps only the first row).

It declines (an `Abstain`) rather than guess whenever something the question says would be left
out of the SQL: a content word nothing matched, a cue that governs nothing it can use, a number
or date it cannot attach, or wording it does not support (ratios, negations...). Declining costs
the person a rephrasing; a wrong answer presented as sure costs far more.
"""

from __future__ import annotations

import calendar
import datetime as dt
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from core.dictionary import stem
from core.keyword.dates import period
from core.keyword.match import Lexicon, Matching, Mention, Sense
from core.keyword.readings import Reading
from core.keyword.shapes import GLUE, Cue, Literal_, Shape
from core.values import fold, similarity

Func = Literal["COUNT", "SUM", "AVG", "MIN", "MAX"]
Op = Literal[
    "=", "!=", ">", ">=", "<", "<=", "in", "contains", "prefix", "suffix", "range", "month", "true", "present"
]
NUMERIC = ("integer", "number")
TEMPORAL = ("date", "datetime")
# Measures averaged rather than summed when an entity is ranked by a column of its child rows.
_AVERAGED = re.compile(
    r"(rate|rating|score|price|grade|gpa|percent|pct|ratio|age|speed|avg|average|level)", re.I
)
# Nouns an adjective implies when the question names no column ('longest river' → length).
IMPLIED = {
    "longest": ("length", "duration", "distance"),
    "shortest": ("length", "duration", "distance"),
    "largest": ("size", "area", "population", "capacity", "amount"),
    "biggest": ("size", "area", "population", "capacity", "amount"),
    "smallest": ("size", "area", "population", "capacity", "amount"),
    "tallest": ("height", "altitude", "elevation"),
    "heaviest": ("weight",),
    "lightest": ("weight",),
    "fastest": ("speed",),
    "slowest": ("speed",),
    "cheapest": ("price", "cost", "fare"),
    "most expensive": ("price", "cost", "fare"),
    "least expensive": ("price", "cost", "fare"),
    "costliest": ("price", "cost"),
    "priciest": ("price", "cost"),
    "richest": ("income", "revenue", "wealth"),
    "busiest": ("traffic", "volume"),
    "highest rated": ("rating", "score", "stars"),
    "best rated": ("rating", "score", "stars"),
    "lowest rated": ("rating", "score", "stars"),
    "best": ("rating", "score"),
    "worst": ("rating", "score"),
}
TEMPORAL_ADJ = frozenset(
    ["latest", "newest", "earliest", "oldest", "most recent", "most recently", "least recent", "youngest"]
)


@dataclass(frozen=True)
class Ref:
    table: str
    column: str


@dataclass(frozen=True)
class Measure:
    func: Func
    table: str  # the counted table, or the column's table
    column: str | None = None  # None: COUNT of the table's rows
    distinct: bool = False  # COUNT(DISTINCT column)
    words: str = ""

    @property
    def ref(self) -> Ref | None:
        return Ref(self.table, self.column) if self.column else None


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

    def all_refs(self) -> list[Ref]:
        refs = [*self.groups, *self.projection, *(f.ref for f in self.filters)]
        refs += [m.ref for m in self.measures if m.ref]
        refs += [h.measure.ref for h in self.having if h.measure.ref]
        refs += [o.key for o in self.order if isinstance(o.key, Ref)]
        refs += [o.key.ref for o in self.order if isinstance(o.key, Measure) and o.key.ref]
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


class _Decline(Exception):
    def __init__(self, reason: str, words: Sequence[str] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.words = tuple(words)


# ---------------------------------------------------------------------------------------------
# labels and kinds


def column_kind(lex: Lexicon, table: str, column: str) -> str:
    t = lex.table(table)
    c = t.column(column) if t else None
    return c.kind if c else "other"


def label_columns(lex: Lexicon, table: str) -> list[str]:
    """The columns that name a row of `table` for a person: name, title, first + last name..."""
    t = lex.table(table)
    if t is None:
        return []
    tname = table.lower().replace("_", "")
    texts = [c for c in t.columns if c.kind == "text"]

    def flat(name: str) -> str:
        return name.lower().replace("_", "")

    for want in ("name", f"{tname}name", "title", f"{tname}title", "fullname"):
        hit = [c.name for c in texts if flat(c.name) == want]
        if hit:
            return hit[:1]
    first = [c.name for c in texts if flat(c.name) in ("firstname", "givenname", "fname")]
    last = [c.name for c in texts if flat(c.name) in ("lastname", "surname", "familyname", "lname")]
    if first and last:
        return [first[0], last[0]]
    named = [c.name for c in texts if flat(c.name).endswith(("name", "title"))]
    if named:
        return named[:1]
    key = list(lex.key_of(table))
    if key:
        return key[:1]
    ids = [c.name for c in t.columns if flat(c.name).endswith("id")]
    if ids:
        return ids[:1]
    return [t.columns[0].name] if t.columns else []


def _is_numeric(lex: Lexicon, ref: Ref) -> bool:
    return column_kind(lex, ref.table, ref.column) in NUMERIC


def _generic(words: str) -> bool:
    """'name', 'id', 'code': a word that needs the noun before it."""
    return words.lower().strip() in (
        "name",
        "names",
        "id",
        "ids",
        "code",
        "codes",
        "title",
        "titles",
        "number",
    )


def _singular(words: str) -> str:
    """'datacenters' → 'datacenter', 'business categories' → 'business category'."""
    parts = words.split()
    return " ".join([*parts[:-1], stem(parts[-1].lower())]) if parts else words


def _plural(word: str) -> bool:
    w = word.lower().split()[-1] if word.strip() else word
    return stem(w) != w


# ---------------------------------------------------------------------------------------------
# building the plan


@dataclass
class _Item:
    pos: int
    kind: Literal["cue", "literal", "mention"]
    cue: Cue | None = None
    literal: Literal_ | None = None
    mention: Mention | None = None


@dataclass
class _Role:
    """What a mention does in the query."""

    kind: str = ""  # measure | group | order | entity | projection | filter | subject | having | absorbed
    governed_by_list: bool = False


class Planner:
    def __init__(
        self, shape: Shape, matching: Matching, lex: Lexicon, today: dt.date, readings: Sequence[Reading] = ()
    ) -> None:
        self.readings = list(readings)
        self.shape = shape
        self.matching = matching
        self.lex = lex
        self.today = today
        self.plan = Plan()
        self.roles: dict[int, _Role] = {}  # id(mention) → role
        self.used_literals: set[int] = set()
        self.entities: list[tuple[Mention, bool]] = []  # (table mention, listed?)
        self.pending_dates: list[tuple[Literal_, str, Mention | None]] = []  # (literal, prep, subject)
        self.superlative: tuple[Cue, Mention | None] | None = None
        self.top: tuple[Cue, int | None] | None = None
        self.order_dir: bool | None = None  # from 'descending' / 'alphabetically'...
        self.alpha = False
        self.skipped_cues: set[int] = set()  # cue positions a recognised phrase already read
        self.explicit: list[Mention] = []  # columns the question asks to see
        self.loose_columns: list[Mention] = []

    # -- entry -------------------------------------------------------------------------------

    def build(self) -> Plan:
        self._ratio()
        self._check_unsupported()
        self._check_words()
        items = self._items()
        pending: list[Cue] = []
        last: Mention | None = None
        list_scope = False  # right after a list cue ('what are the X')
        chained: Mention | None = None  # the last mention a list cue governed ('X and Y' follow it)
        for n, item in enumerate(items):
            if item.kind == "cue":
                cue = item.cue
                assert cue is not None
                if cue.start in self.skipped_cues:
                    continue
                if cue.kind == "dir":
                    self.order_dir = cue.arg == "desc"
                elif cue.kind == "alpha":
                    self.alpha = True
                    self.order_dir = False
                elif cue.kind == "distinct":
                    self.plan.distinct = True
                elif cue.kind == "list":
                    if self._clause_start(cue.start):
                        list_scope = True
                        pending = [c for c in pending if c.kind not in ("list",)] + [cue]
                    # else: 'the instructor who taught', a relative pronoun
                elif cue.kind in ("and", "or"):
                    pass  # connectives: 'X and Y' is read by _chained and _merge_filters
                else:
                    pending.append(cue)
                    if cue.kind not in ("date_prep",):
                        list_scope = False
            elif item.kind == "literal":
                lit = item.literal
                assert lit is not None
                nxt = next((it.mention for it in items[n + 1 :] if it.kind == "mention"), None)
                pending = self._literal(lit, pending, last, nxt)
            else:
                m = item.mention
                assert m is not None
                if m.sense is None or self._role(m).kind == "absorbed":
                    list_scope, pending = False, []  # the cues before it governed it
                    continue
                if (
                    _generic(m.words)
                    and last is not None
                    and last.end == m.start
                    and m.sense.kind == "column"
                ):
                    self._role(m).kind = "absorbed"  # 'region name', 'paper ID': said of the word before
                    continue
                head = self._compound_head(m, items, n)
                if head is not None:
                    # 'each business category', 'highest population density': the last noun is
                    # the head and takes the cues; the words before it only qualify it
                    self._modifier(m, head)
                    continue
                governed = list_scope or any(c.kind == "list" for c in pending)
                if not governed and chained is not None and self._chained(chained, m):
                    governed = True
                self._mention(m, pending, last, governed)
                list_scope = False
                if m.names_value or (m.sense is not None and m.sense.kind == "value"):
                    pass  # 'the city of Boston': the chain goes on past it
                else:
                    chained = m if governed else None
                if m.sense is not None and m.sense.kind == "value":
                    # 'how many active clients': the value qualifies what follows, cues carry over
                    pending = [c for c in pending if c.kind not in ("text",)]
                else:
                    pending = []
                last = m
        for cue in pending:
            self._leftover(cue)
        self._finish()
        return self.plan

    # -- walk ----------------------------------------------------------------------------------

    def _items(self) -> list[_Item]:
        items = [_Item(c.start, "cue", cue=c) for c in self.shape.cues]
        items += [
            _Item(lit.start, "literal", literal=lit) for lit in self.shape.literals if lit.kind != "quoted"
        ]
        items += [_Item(m.start, "mention", mention=m) for m in self.matching.mentions]
        return sorted(items, key=lambda it: (it.pos, it.kind != "cue"))

    def _check_unsupported(self) -> None:
        cues = self.shape.cues
        for k, cue in enumerate(cues):
            if cue.kind != "unsupported" or cue.start in self.skipped_cues:
                continue
            prev = cues[k - 1] if k > 0 else None
            low = cue.words.lower()
            if low == "both" and prev is not None and prev.kind == "list" and prev.end == cue.start:
                continue  # 'give both X and Y' lists two columns
            raise _Decline(
                f"it asks for {cue.arg} ('{cue.words}'), which keyword mode does not compute", [cue.words]
            )

    def _role(self, m: Mention) -> _Role:
        return self.roles.setdefault(id(m), _Role())

    def _ratio(self) -> None:
        """'the ratio of helpfulness score to clarity score (for each course)': two numbers of the
        same row, divided. Any other ratio (of counts, across tables) is declined."""
        cue = next(
            (c for c in self.shape.cues if c.kind == "unsupported" and c.words.lower() == "ratio"), None
        )
        if cue is None:
            return
        after = [m for m in self.matching.mentions if m.start >= cue.end and m.sense is not None]
        if len(after) < 2:
            return
        a, b = after[0], after[1]
        toks = self.shape.tokens
        lead = {t.low for t in toks[cue.end : a.start]}
        link = [t.low for t in toks[a.end : b.start] if t.low not in ("the", "a", "an", "its", "their")]
        if not lead <= {"of", "the", "between"} or link not in (
            ["to"],
            ["over"],
            ["per"],
            ["and"],
            ["divided", "by"],
        ):
            return
        refs = []
        for m in (a, b):
            s = m.sense
            if (
                s is None
                or s.kind != "column"
                or not s.column
                or not _is_numeric(self.lex, Ref(s.table, s.column))
            ):
                return
            refs.append(Ref(s.table, s.column))
        if refs[0].table != refs[1].table:
            return
        self.plan.ratio = (refs[0], refs[1])
        for m in (a, b):
            self._role(m).kind = "absorbed"
        self.skipped_cues |= {c.start for c in self.shape.cues if cue.start <= c.start < b.start}

    def _literal(
        self, lit: Literal_, pending: list[Cue], last: Mention | None, nxt: Mention | None
    ) -> list[Cue]:
        """Attach a number or date to what governs it; returns the cues still pending."""
        kinds = [c.kind for c in pending]
        table_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"
        if lit.kind == "number" and "list" in kinds and table_next and self._adjacent_after(lit, nxt):  # type: ignore[arg-type]
            # 'which 3 clients …': the first three
            cue = next(c for c in pending if c.kind == "list")
            self.top = (Cue("top", "desc", cue.start, cue.end, f"{cue.words} {lit.words}"), int(lit.value))
            self.used_literals.add(lit.start)
            return [*pending, self.top[0]]
        if lit.kind == "number" and "top" in kinds:
            cue = next(c for c in pending if c.kind == "top")
            self.top = (cue, int(lit.value))
            self.used_literals.add(lit.start)
            return [c for c in pending if c.kind != "top"] + [cue]
        if lit.kind in ("number", "year") and "cmp" in kinds:
            cue = next(c for c in reversed(pending) if c.kind == "cmp")
            self.used_literals.add(lit.start)
            self._compare(cue.arg, float(lit.value), f"{cue.words} {lit.words}", last, nxt)
            return [c for c in pending if c.kind != "cmp"]
        if lit.kind in ("year", "month", "date", "period"):
            prep = next((c for c in reversed(pending) if c.kind in ("date_prep", "between")), None)
            subject = (
                last if last is not None and self._date_subject(last) and self._adjacent(last, lit) else None
            )
            self.used_literals.add(lit.start)
            how = (
                ("between" if prep.kind == "between" else prep.arg)
                if prep
                else ("in" if lit.kind != "period" else "")
            )
            self.pending_dates.append((lit, how, subject))
            if subject is not None:
                self._role(subject).kind = "subject"
            return [c for c in pending if c.kind not in ("date_prep", "between")]
        if lit.kind in ("number", "year"):
            # 'paper ID 2', 'semester 1': the column named just before; '3 stops': just after
            named = self._numeric_neighbour(lit, last, nxt)
            if named is not None:
                m, ref = named
                self.used_literals.add(lit.start)
                self._role(m).kind = "subject"
                self.plan.filters.append(Filter(ref, "=", lit.value, f"{m.words} {lit.words}"))
        return pending  # an unattached literal is reported by _check_understood

    def _numeric_neighbour(
        self, lit: Literal_, last: Mention | None, nxt: Mention | None
    ) -> tuple[Mention, Ref] | None:
        if last is not None and self._adjacent(last, lit) and last.sense is not None:
            s = last.sense
            if s.kind == "column" and s.column and self._role(last).kind in ("", "projection"):
                return last, Ref(s.table, s.column)
        if (
            lit.kind == "number"
            and nxt is not None
            and nxt.sense is not None
            and self._adjacent_after(lit, nxt)
        ):
            s = nxt.sense
            if s.kind == "column" and s.column and _is_numeric(self.lex, Ref(s.table, s.column)):
                return nxt, Ref(s.table, s.column)
        return None

    def _counts(self, s: Sense) -> bool:
        """A numeric column that holds a count ('num_enrolled', 'review_count', 'numcitedby')."""
        if not s.column or column_kind(self.lex, s.table, s.column) not in NUMERIC:
            return False
        low = s.column.lower()
        return bool(
            re.match(r"(num|n_|no_|number|count|total)", low) or re.search(r"(count|_num|number|total)$", low)
        )

    def _clause_start(self, i: int) -> bool:
        """Nothing but punctuation or 'and' before position i in its sentence."""
        j = i - 1
        while j >= 0:
            t = self.shape.tokens[j]
            if t.text in (".", "?", "!", ";", ":"):
                return True
            if t.kind == "punct" or t.low in ("and", "please", "also", "then", "now", "so"):
                j -= 1
                continue
            return False
        return True

    def _compound_head(self, m: Mention, items: list[_Item], n: int) -> Mention | None:
        nxt = items[n + 1] if n + 1 < len(items) else None
        if nxt is None or nxt.kind != "mention" or nxt.mention is None or nxt.mention.sense is None:
            return None
        other = nxt.mention
        if other.start != m.end or m.sense is None or other.sense is None:
            return None
        if m.sense.kind == "value" or other.sense.kind == "value" or m.names_value or other.names_value:
            return None
        if m.sense.kind == "table" and other.sense.kind == "column" and self._counts(other.sense):
            return other  # 'number of students enrolled' is the num_enrolled column
        if other.words.lower().endswith(("ed", "ing")):
            return None  # 'which datacenter opened …': a verb, not the head of a compound
        if _plural(m.words) or min(m.sense.score, other.sense.score) < 0.9:
            return None  # 'authors wrote papers' is a clause, 'business category' a compound
        if m.sense.kind == "column" and other.sense.kind == "column" and _generic(other.words):
            return None  # 'region name' means the region column itself
        return other

    def _modifier(self, m: Mention, head: Mention) -> None:
        s = m.sense
        assert s is not None
        if s.kind == "table":
            self._role(m).kind = "entity"
            self.entities.append((m, False))
        else:
            self._role(m).kind = "absorbed"

    def _chained(self, prev: Mention, m: Mention) -> bool:
        """'names and areas', 'name, rating and city': joined by 'and' or commas only."""
        between = range(prev.end, m.start)
        joined = False
        for i in between:
            t = self.shape.tokens[i]
            cue = self.shape.cue_at(i)
            if t.text == "," or (cue is not None and cue.kind == "and"):
                joined = True
            elif not (
                self.shape.role[i] == "stop" and t.low in ("the", "their", "its", "a", "an", "both", "also")
            ):
                return False
        return joined

    def _adjacent(self, m: Mention, lit: Literal_) -> bool:
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

    def _adjacent_after(self, lit: Literal_, m: Mention) -> bool:
        return all(self.shape.role[i] == "stop" for i in range(lit.end, m.start))

    def _date_subject(self, m: Mention) -> bool:
        s = m.sense
        if s is None or s.kind != "column" or not s.column:
            return False
        kind = column_kind(self.lex, s.table, s.column)
        return kind in TEMPORAL or (kind in NUMERIC and "year" in s.column.lower())

    def _compare(self, op: str, value: float, words: str, last: Mention | None, nxt: Mention | None) -> None:
        """'rating above 4' (the column before), 'more than 2 papers' (a count of what follows)."""
        number = int(value) if float(value).is_integer() else value
        if last is not None and last.sense is not None and last.sense.kind == "column" and last.sense.column:
            ref = Ref(last.sense.table, last.sense.column)
            if _is_numeric(self.lex, ref) or column_kind(self.lex, ref.table, ref.column) in TEMPORAL:
                role = self._role(last)
                if role.kind in ("", "projection", "subject") and not role.governed_by_list:
                    role.kind = "subject"
                self.plan.filters.append(Filter(ref, op, number, f"{last.words} {words}"))  # type: ignore[arg-type]
                return
        if (
            last is not None
            and last.sense is not None
            and last.sense.kind == "table"
            and not self._counted_next(nxt)
        ):
            column = self._only_measure_column(last.sense.table)
            if column is not None:
                # 'orders above 50': the one number an order has
                ref = Ref(last.sense.table, column)
                self.plan.filters.append(Filter(ref, op, number, f"{last.words} {words}"))  # type: ignore[arg-type]
                self.plan.notes.append(f"'{words}' read as {last.sense.table} {column}")
                return
        if nxt is not None and nxt.sense is not None:
            s = nxt.sense
            if s.kind == "table":
                self._role(nxt).kind = "having"
                self.plan.having.append(
                    Having(Measure("COUNT", s.table, words=nxt.words), op, number, f"{words} {nxt.words}")
                )
                return
            if s.kind == "column" and s.column and _is_numeric(self.lex, Ref(s.table, s.column)):
                self._role(nxt).kind = "subject"
                self.plan.filters.append(Filter(Ref(s.table, s.column), op, number, f"{words} {nxt.words}"))  # type: ignore[arg-type]
                return
        raise _Decline(f"it could not tell what '{words}' applies to", [words])

    def _counted_next(self, nxt: Mention | None) -> bool:
        """'more than 2 papers': the number counts the thing that follows it."""
        return nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"

    def _mention(self, m: Mention, pending: list[Cue], last: Mention | None, governed: bool) -> None:
        s = m.sense
        assert s is not None
        role = self._role(m)
        role.governed_by_list = governed
        kinds = [c.kind for c in pending]
        if m.names_value:
            role.kind = "absorbed"
            return
        if s.kind == "value":
            role.kind = "filter"
            text = next((c for c in pending if c.kind == "text"), None)
            op = text.arg if text is not None else s.op
            value = s.value if text is None else m.words
            self.plan.filters.append(Filter(Ref(s.table, s.column or ""), op, value, m.words, s.meaning))  # type: ignore[arg-type]
            return
        if "text" in kinds:
            raise _Decline(f"it could not tell which text '{m.words}' should match", [m.words])
        agg = next((c for c in pending if c.kind == "agg"), None)
        count = "count" in kinds
        sup = next((c for c in pending if c.kind == "super"), None)
        if s.kind == "table":
            self._table_mention(m, s, pending, agg, count, sup, governed)
        else:
            self._column_mention(m, s, pending, agg, count, sup, governed, last)

    def _table_mention(
        self,
        m: Mention,
        s: Sense,
        pending: list[Cue],
        agg: Cue | None,
        count: bool,
        sup: Cue | None,
        governed: bool,
    ) -> None:
        role = self._role(m)
        kinds = [c.kind for c in pending]
        if sup is not None and (count or sup.words.lower() in ("most", "least", "fewest")):
            role.kind = "order"
            measure = Measure("COUNT", s.table, words=m.words)
            self.plan.order.append(OrderKey(measure, sup.arg == "desc", f"{sup.words} {m.words}"))
            self.superlative = (sup, None)
            return
        if count and ("order" in kinds or ("by" in kinds and self._by_orders())):
            # 'top 3 datacenters by number of hosts', 'sorted by the number of papers'
            role.kind = "order"
            desc = (
                self.order_dir if self.order_dir is not None else not (self.top and self.top[0].arg == "asc")
            )
            self.plan.order.append(
                OrderKey(Measure("COUNT", s.table, words=m.words), desc, f"number of {m.words}")
            )
            return
        if count or (agg is not None and agg.arg == "SUM" and "count" in kinds):
            role.kind = "measure"
            self.plan.measures.append(Measure("COUNT", s.table, words=m.words))
            if "group" in kinds or "by" in kinds:
                raise _Decline(f"it could not tell how '{m.words}' is counted per group", [m.words])
            return
        if agg is not None:
            measure_col = self._only_measure_column(s.table)
            if measure_col is None:
                raise _Decline(
                    f"'{agg.words}' needs a numeric column and '{m.words}' has none or several", [m.words]
                )
            role.kind = "measure"
            self.plan.measures.append(Measure(agg.arg, s.table, measure_col, words=f"{agg.words} {m.words}"))  # type: ignore[arg-type]
            return
        if "order" in kinds or ("by" in kinds and self._by_orders()):
            role.kind = "order"
            for c in label_columns(self.lex, s.table):
                self.plan.order.append(OrderKey(Ref(s.table, c), False, m.words))
            return
        if "group" in kinds or ("by" in kinds and self._by_groups(pending)):
            role.kind = "group"
            for c in label_columns(self.lex, s.table):
                self.plan.groups.append(Ref(s.table, c))
                self.plan.names[Ref(s.table, c)] = _singular(m.words)
            return
        if sup is not None:
            raise _Decline(f"it could not tell what '{sup.words}' ranks '{m.words}' by", [sup.words])
        if "top" in kinds:
            role.kind = "entity"
            self.entities.append((m, True))
            if self.top is None:
                cue = next(c for c in pending if c.kind == "top")
                self.top = (cue, None)
            return
        role.kind = "entity"
        self.entities.append((m, governed))

    def _column_mention(
        self,
        m: Mention,
        s: Sense,
        pending: list[Cue],
        agg: Cue | None,
        count: bool,
        sup: Cue | None,
        governed: bool,
        last: Mention | None,
    ) -> None:
        role = self._role(m)
        kinds = [c.kind for c in pending]
        ref = Ref(s.table, s.column or "")
        kind = column_kind(self.lex, ref.table, ref.column)
        if count and (agg is None or agg.arg == "SUM") and (self._is_key(ref) or self._is_pointer(ref)):
            # 'number of publications' matched publication.pid, 'number of restaurants' matched
            # location.restaurant_id: count the things it identifies
            role.kind = "order" if sup is not None else "measure"
            measure = (
                Measure("COUNT", ref.table, words=m.words)
                if self._is_key(ref)
                else Measure("COUNT", ref.table, ref.column, True, m.words)
            )
            if sup is not None:
                self.plan.order.append(OrderKey(measure, sup.arg == "desc", f"{sup.words} {m.words}"))
                self.superlative = (sup, None)
            else:
                self.plan.measures.append(measure)
            return
        if count and agg is None and sup is None and kind in NUMERIC:
            total = any(c.kind == "count" and "total" in c.words.lower() for c in pending)
            if total or any(c.kind == "group" for c in self.shape.cues):
                # 'total number of citations (per author)': the column already counts something
                role.kind = "measure"
                self.plan.measures.append(Measure("SUM", ref.table, ref.column, words=m.words))
                return
        if agg is not None:
            func = agg.arg
            if func in ("AVG", "SUM") and kind not in NUMERIC:
                if count and func == "SUM":  # 'total number of cities' → count distinct
                    role.kind = "measure"
                    self.plan.measures.append(Measure("COUNT", ref.table, ref.column, True, m.words))
                    return
                raise _Decline(
                    f"'{agg.words}' needs a number and '{m.words}' is not numeric", [agg.words, m.words]
                )
            role.kind = "measure"
            self.plan.measures.append(Measure(func, ref.table, ref.column, words=f"{agg.words} {m.words}"))  # type: ignore[arg-type]
            return
        if sup is not None:
            role.kind = "order"
            self.plan.order.append(OrderKey(ref, sup.arg == "desc", f"{sup.words} {m.words}"))
            self.superlative = (sup, m)
            return
        if count and kind not in NUMERIC:
            role.kind = "measure"
            self.plan.measures.append(Measure("COUNT", ref.table, ref.column, True, m.words))
            return
        if "order" in kinds or ("by" in kinds and self._by_orders()):
            role.kind = "order"
            self.plan.order.append(OrderKey(ref, bool(self.top and self.top[0].arg == "desc"), m.words))
            return
        if "group" in kinds or ("by" in kinds and self._by_groups(pending)):
            role.kind = "group"
            self.plan.groups.append(ref)
            return
        if governed or count:
            role.kind = "projection"
            self.explicit.append(m)
            return
        role.kind = "loose"
        self.loose_columns.append(m)

    def _is_key(self, ref: Ref) -> bool:
        keys = {k.lower() for k in self.lex.key_of(ref.table)}
        return ref.column.lower() in keys

    def _is_pointer(self, ref: Ref) -> bool:
        """A foreign key column: it names another table's rows."""
        return any(
            e.table.lower() == ref.table.lower()
            and len(e.columns) == 1
            and e.columns[0].lower() == ref.column.lower()
            for e in self.lex.db.graph.edges
        )

    def _by_groups(self, pending: list[Cue]) -> bool:
        """'by X' groups after a measure ('clients by country'), but ranks after 'top'."""
        if self._by_orders():
            return False
        by = next(c for c in pending if c.kind == "by")
        prev = self.shape.tokens[by.start - 1].low if by.start > 0 else ""
        if prev in GLUE or prev.endswith(("ed", "en")):
            return False  # 'written by', 'paid by': a relation, not a grouping
        return bool(self.plan.measures)

    def _by_orders(self) -> bool:
        return self.top is not None and not any(
            isinstance(o.key, Measure) or o.words for o in self.plan.order
        )

    def _only_measure_column(self, table: str) -> str | None:
        t = self.lex.table(table)
        if t is None:
            return None
        key = {k.lower() for k in self.lex.key_of(table)}
        fks = {
            c.lower() for e in self.lex.db.graph.edges if e.table.lower() == table.lower() for c in e.columns
        }
        nums = [
            c.name
            for c in t.columns
            if c.kind in NUMERIC
            and c.name.lower() not in key
            and c.name.lower() not in fks
            and not c.name.lower().endswith("id")
        ]
        return nums[0] if len(nums) == 1 else None

    def _leftover(self, cue: Cue) -> None:
        if cue.kind in ("date_prep", "cmp", "by", "list", "and", "or", "between"):
            return  # prepositions and connectives that governed nothing change nothing
        if cue.kind == "agg" and any(m.func == "COUNT" for m in self.plan.measures):
            return  # 'how many papers were published in total'
        if cue.kind == "order" and (self.order_dir is not None or self.plan.order):
            return  # 'in descending order'
        if cue.kind == "super" and (cue.words.lower() in IMPLIED or cue.words.lower() in TEMPORAL_ADJ):
            self.superlative = (cue, None)
            return
        if cue.kind == "group" and self.plan.groups:
            return
        if cue.kind in ("top",) and self.top is not None:
            return
        raise _Decline(f"it could not tell what '{cue.words}' refers to", [cue.words])

    # -- finishing -----------------------------------------------------------------------------

    def _finish(self) -> None:
        plan = self.plan
        self._implied_superlative()
        listed = [m for m, listed in self.entities if listed]
        entity_tables = [m.sense.table for m, _ in self.entities if m.sense]
        # the target: the listed or ranked entity, else the counted table, else any entity
        if listed:
            plan.target = listed[0].sense.table if listed[0].sense else None
        elif any(m.func == "COUNT" and m.column is None for m in plan.measures):
            plan.target = next(m.table for m in plan.measures if m.func == "COUNT" and m.column is None)
        elif entity_tables:
            plan.target = entity_tables[0]
        elif self.explicit:
            plan.target = self.explicit[0].sense.table if self.explicit[0].sense else None
        elif plan.measures:
            plan.target = plan.measures[0].table
        elif plan.order and isinstance(plan.order[0].key, Ref):
            plan.target = plan.order[0].key.table
        elif plan.ratio is not None:
            plan.target = plan.ratio[0].table
        elif plan.filters:
            plan.target = plan.filters[0].ref.table
        if plan.target is None:
            raise _Decline("none of its words named a table or a column")
        self._loose()
        self._dates()
        self._superlative(listed)
        self._shape_output(listed)
        self._check_understood()
        self._merge_filters()
        plan.measures = list(dict.fromkeys(plan.measures))
        entity_tables = [
            m.sense.table for m, _ in self.entities if m.sense and self._role(m).kind == "entity"
        ]
        self._local_keys(entity_tables)
        tables = [plan.target, *entity_tables]
        tables += [r.table for r in plan.all_refs()]
        tables += [h.measure.table for h in plan.having] + [m.table for m in plan.measures]
        tables += [o.key.table for o in plan.order if isinstance(o.key, Measure)]
        plan.tables = list(dict.fromkeys(tables))

    def _local_keys(self, entity_tables: list[str]) -> None:
        """Read a column where another needed table already holds it: 'lakes per state' groups by
        lake.state_name rather than joining state for state.state_name (the join's own key)."""
        plan = self.plan
        needed = {t.lower() for t in entity_tables}
        needed |= {m.table.lower() for m in plan.measures} | {h.measure.table.lower() for h in plan.having}
        needed |= {f.ref.table.lower() for f in plan.filters}
        needed |= {o.key.table.lower() for o in plan.order if isinstance(o.key, Measure)}
        if plan.target:
            needed.add(plan.target.lower())  # the view always holds it
        edges = [e for e in self.lex.db.graph.edges if len(e.columns) == 1 and not e.is_self]

        def local(r: Ref) -> Ref:
            if r.table.lower() in needed:
                return r
            for e in edges:
                ends = [
                    ((e.table, e.columns[0]), (e.ref_table, e.ref_columns[0])),
                    ((e.ref_table, e.ref_columns[0]), (e.table, e.columns[0])),
                ]
                for (ta, ca), (tb, cb) in ends:
                    if (
                        ta.lower() == r.table.lower()
                        and ca.lower() == r.column.lower()
                        and tb.lower() in needed
                    ):
                        return Ref(tb, cb)
            return r

        plan.groups = list(dict.fromkeys(local(r) for r in plan.groups))
        plan.projection = list(dict.fromkeys(local(r) for r in plan.projection))
        plan.order = [
            OrderKey(local(o.key), o.desc, o.words) if isinstance(o.key, Ref) else o for o in plan.order
        ]

    def _loose(self) -> None:
        """Columns named with no cue: the column of a neighbouring value ('city of Boston'), a
        column to show (list questions), or something keyword mode cannot place."""
        for m in self.loose_columns:
            s = m.sense
            assert s is not None
            ref = Ref(s.table, s.column or "")
            if any(f.ref == ref for f in self.plan.filters) or ref in self.plan.all_refs():
                self._role(m).kind = "absorbed"  # 'city of Boston', or named twice ('range in miles')
                continue
            if self._date_subject(m) and self.pending_dates:
                lit, prep, subject = self.pending_dates[0]
                if subject is None:
                    self.pending_dates[0] = (lit, prep, m)
                    self._role(m).kind = "subject"
                    continue
            before = {t.low for t in self.shape.tokens[max(0, m.start - 3) : m.start]}
            if before & {"have", "has", "had", "having", "with"}:
                # 'courses with a final exam', 'students who have a minor': the thing is there
                boolean = column_kind(self.lex, ref.table, ref.column) == "boolean" or re.match(
                    r"(has|is|can|was|did)_", ref.column.lower()
                )
                self._role(m).kind = "filter"
                self.plan.filters.append(Filter(ref, "true" if boolean else "present", None, m.words))
                continue
            raise _Decline(f"it could not tell how '{m.words}' affects the result", [m.words])

    def _implied_superlative(self) -> None:
        """'the longest rivers' names no column: the adjective implies one ('length')."""
        if (
            self.superlative is None
            or self.superlative[1] is not None
            or any(isinstance(o.key, Measure) for o in self.plan.order)
        ):
            return
        cue = self.superlative[0]
        adj = cue.words.lower()
        if adj in TEMPORAL_ADJ:
            for m in list(self.loose_columns):
                if self._date_subject(m) and m.sense is not None and m.sense.column:
                    # 'which datacenter opened most recently': the date the verb names
                    self.loose_columns.remove(m)
                    self._role(m).kind = "order"
                    desc = adj in ("latest", "newest", "most recent", "most recently", "youngest")
                    key = OrderKey(Ref(m.sense.table, m.sense.column), desc, f"{m.words} {cue.words}")
                    self.plan.order.append(key)
                    return
        tables = [m.sense.table for m, _ in self.entities if m.sense] or [
            f.ref.table for f in self.plan.filters
        ]
        if not tables:
            raise _Decline(f"it could not tell what '{cue.words}' ranks", [cue.words])
        table = tables[0]
        t = self.lex.table(table)
        assert t is not None
        column: str | None = None
        if adj in TEMPORAL_ADJ:
            dates = [c.name for c in t.columns if c.kind in TEMPORAL]
            column = dates[0] if len(dates) == 1 else None
            desc = adj in ("latest", "newest", "most recent", "most recently", "youngest")
        else:
            desc = cue.arg == "desc"
            for noun in IMPLIED.get(adj, ()):
                hits = [
                    x
                    for x in self.lex.schema(noun)
                    if x.kind == "column" and x.table == table and x.score >= 0.85
                ]
                if hits:
                    column = hits[0].column
                    break
        if column is None:
            raise _Decline(f"it could not tell which column '{cue.words}' ranks by", [cue.words])
        self.plan.order.append(OrderKey(Ref(table, column), desc, cue.words))
        self.plan.notes.append(f"'{cue.words}' read as {'highest' if desc else 'lowest'} {table} {column}")

    def _dates(self) -> None:
        dates = list(self.pending_dates)
        while dates:
            lit, prep, subject = dates.pop(0)
            ref = self._date_column(lit, subject)
            if prep == "between":
                if not dates or dates[0][0].kind != lit.kind:
                    raise _Decline(f"it could not read the range starting at '{lit.words}'", [lit.words])
                end = dates.pop(0)[0]
                self.plan.filters.extend(self._between(lit, end, ref))
                continue
            self.plan.filters.extend(self._date_filters(lit, prep, ref))

    def _between(self, first: Literal_, last: Literal_, ref: Ref) -> list[Filter]:
        words = f"between {first.words} and {last.words}"
        if column_kind(self.lex, ref.table, ref.column) in NUMERIC:
            if first.kind != "year":
                raise _Decline(f"it could not compare '{words}' with the number column {ref.column}", [words])
            return [Filter(ref, ">=", first.value, words), Filter(ref, "<=", last.value, words)]
        lo, _ = period(self.today, first)
        _, hi = period(self.today, last)
        if lo is None or hi is None:
            raise _Decline(f"it could not read the range '{words}'", [words])
        return [Filter(ref, "range", (lo, hi), words)]

    def _date_column(self, lit: Literal_, subject: Mention | None) -> Ref:
        if subject is not None and subject.sense is not None and subject.sense.column:
            return Ref(subject.sense.table, subject.sense.column)
        # the counted or listed table's own date first, then the other tables the question names
        tables = [self.plan.target or "", *(m.table for m in self.plan.measures)]
        tables += [m.sense.table for m, _ in self.entities if m.sense]
        tables += [f.ref.table for f in self.plan.filters]
        tables = [t for t in dict.fromkeys(tables) if t]
        for table in tables:
            t = self.lex.table(table)
            if t is None:
                continue
            if lit.kind == "year":
                years = [
                    c.name
                    for c in t.columns
                    if c.kind in NUMERIC and c.name.lower() in ("year", f"{table.lower()}_year", "yr")
                ]
                if len(years) == 1:
                    return Ref(table, years[0])
            dates = [c.name for c in t.columns if c.kind in TEMPORAL]
            chosen = self._chosen_column(lit.words, table, dates)
            if chosen is not None:
                return chosen
            if len(dates) == 1:
                return Ref(table, dates[0])
            if len(dates) > 1:
                hinted = self._hinted_date(table, dates)
                if hinted is not None:
                    return hinted
                raise _AmbiguousDate(lit, [Ref(table, d) for d in dates])
            if lit.kind in ("year", "month"):
                years = [c.name for c in t.columns if c.kind in NUMERIC and "year" in c.name.lower()]
                if len(years) == 1:
                    return Ref(table, years[0])
        raise _Decline(f"it found no date to compare with '{lit.words}'", [lit.words])

    def _chosen_column(self, words: str, table: str, columns: list[str]) -> Ref | None:
        """The column the person picked for these words in an earlier clarification."""
        for r in self.readings:
            if r.column and fold(r.words) == fold(words) and r.table == table and r.column in columns:
                return Ref(r.table, r.column)
        return None

    def _hinted_date(self, table: str, dates: list[str]) -> Ref | None:
        """'signed up in 2024' → signup_date: the question's other words name one of the dates."""
        toks = self.shape.tokens
        loose = [i for i in self.matching.unmatched] + [
            i for i, r in enumerate(self.shape.role) if r == "content" and i not in self.matching.unmatched
        ]
        words = [toks[i].low for i in sorted(set(loose))]
        phrases = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
        scores = {}
        for d in dates:
            target = fold(d.replace("_", " "))
            best = max((similarity(fold(p), target) for p in phrases), default=0.0)
            for p in phrases:
                for x in self.lex.schema(p):
                    if x.kind == "column" and x.table == table and x.column == d:
                        best = max(best, x.score)
            scores[d] = best
        ranked = sorted(scores.items(), key=lambda kv: -kv[1])
        if ranked and ranked[0][1] >= 0.6 and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 0.2):
            self.plan.notes.append(f"the date is {table} {ranked[0][0].replace('_', ' ')}")
            return Ref(table, ranked[0][0])
        return None

    def _date_filters(self, lit: Literal_, prep: str, ref: Ref) -> list[Filter]:
        kind = column_kind(self.lex, ref.table, ref.column)
        words = lit.words if not prep or prep == "in" else f"{prep} {lit.words}"
        if kind in NUMERIC:  # a year column
            if lit.kind not in ("year", "month") or (lit.kind == "month" and lit.value[0] is None):
                raise _Decline(
                    f"it could not compare '{lit.words}' with the number column {ref.column}", [lit.words]
                )
            year = lit.value if lit.kind == "year" else lit.value[0]
            out = [self._year_op(ref, prep, year, words)]
            if lit.kind == "month":
                if prep not in ("in", ""):
                    raise _Decline(f"it could not compare '{words}' with month names", [lit.words])
                month_col = self._month_text_column(ref.table)
                if month_col is None:
                    raise _Decline(f"it found no month to compare with '{lit.words}'", [lit.words])
                out.append(Filter(month_col, "=", calendar.month_name[lit.value[1]], words))
            return out
        lo, hi = period(self.today, lit)
        if lo is None and hi is None:  # a month of any year
            return [Filter(ref, "month", lit.value[1], words)]
        if prep == "before":
            return [Filter(ref, "range", (None, lo), words)]
        if prep == "after" and lit.kind != "period":
            start = hi if self.shape.tokens[lit.start - 1].low == "after" else lo
            return [Filter(ref, "range", (start, None), words)]
        return [Filter(ref, "range", (lo, hi), words)]

    def _year_op(self, ref: Ref, prep: str, year: int, words: str) -> Filter:
        if prep == "before":
            return Filter(ref, "<", year, words)
        if prep == "after":
            return Filter(ref, ">", year, words)
        return Filter(ref, "=", year, words)

    def _month_text_column(self, table: str) -> Ref | None:
        for s in self.lex.values("April"):
            if s.table == table and s.kind == "value":
                return Ref(s.table, s.column or "")
        return None

    def _superlative(self, listed: list[Mention]) -> None:
        """'which X has the highest Y' ranks X (LIMIT 1 for one X); 'what is the highest Y' is MAX(Y)."""
        plan = self.plan
        if self.superlative is None:
            if self.top is not None and self.top[1] is None:
                cue = self.top[0]
                plan.limit = 1 if listed and not _plural(listed[0].words) else 10
                plan.notes.append(f"'{cue.words}' without a number: the first {plan.limit}")
            elif self.top is not None:
                plan.limit = self.top[1]
            return
        cue, col_mention = self.superlative
        if self.top is not None and self.top[1] is not None:
            plan.limit = self.top[1]
            return
        wants_entity = bool(listed) or bool(self.explicit)
        if not wants_entity and col_mention is not None and not plan.measures:
            # 'what is the highest population' → MAX(population)
            key = plan.order.pop()
            assert isinstance(key.key, Ref)
            self._role(col_mention).kind = "measure"
            plan.measures.append(
                Measure("MAX" if key.desc else "MIN", key.key.table, key.key.column, words=key.words)
            )
            return
        noun = listed[0].words if listed else (self.explicit[0].words if self.explicit else "")
        if self.top is not None:
            plan.limit = 1 if not _plural(noun) else 10
        elif not noun or not _plural(noun) or not listed:
            plan.limit = 1
        # plural and no number: every row, ranked ('which states have the highest density')

    def _shape_output(self, listed: list[Mention]) -> None:
        plan = self.plan
        target = plan.target
        assert target is not None
        explicit = [Ref(m.sense.table, m.sense.column or "") for m in self.explicit if m.sense]
        explicit = list(dict.fromkeys(explicit))
        ranked_entity = any(isinstance(o.key, Measure) for o in plan.order) or self._ranked_by_child()
        if plan.ratio is not None and (plan.measures or plan.having or ranked_entity):
            raise _Decline("it asks for a ratio of totals or averages, which keyword mode does not compute")
        if plan.measures or plan.having or ranked_entity:
            # aggregates: group by the listed entity and the columns asked for
            if (listed or (ranked_entity and not plan.measures)) and not explicit:
                entity = listed[0].sense.table if listed and listed[0].sense else target
                if not any(
                    m.func == "COUNT" and m.column is None and m.table == entity for m in plan.measures
                ):
                    labels = [Ref(entity, c) for c in label_columns(self.lex, entity)]
                    plan.groups = list(dict.fromkeys([*labels, *plan.groups]))
                    noun = _singular(listed[0].words) if listed else entity
                    plan.names.update({r: noun for r in labels})
            plan.groups = list(dict.fromkeys([*explicit, *plan.groups]))
            for o in list(plan.order):
                if isinstance(o.key, Measure) and o.key not in plan.measures:
                    plan.measures.append(o.key)
                    if explicit:
                        plan.hidden.append(o.key)  # 'the latitude of the business with the highest rating'
            if plan.having and not plan.groups:
                if plan.measures and all(m.func == "COUNT" and m.column is None for m in plan.measures):
                    # 'how many authors have more than 2 papers': count the qualifying groups
                    counted = plan.measures[0].table
                    plan.groups = [
                        Ref(counted, c)
                        for c in (self.lex.key_of(counted) or label_columns(self.lex, counted))
                    ]
                    plan.count_groups = plan.measures[0].words or counted
                    plan.measures = []
                else:
                    plan.groups = [Ref(target, c) for c in label_columns(self.lex, target)]
            self._ranked_child_measure()
            for o in plan.order:
                if isinstance(o.key, Ref) and o.key not in plan.groups:
                    same = [g for g in plan.groups if g.table == o.key.table]
                    if same and (self._is_key(o.key) or o.key.column.lower().endswith("id")):
                        # 'each paper, ordered by the paper ID': show and group by the id
                        plan.groups = [o.key if g == same[0] else g for g in plan.groups if g not in same[1:]]
                    else:
                        plan.groups.append(o.key)
            if plan.groups and not plan.order and plan.measures:
                g = plan.groups[0]
                temporal = column_kind(self.lex, g.table, g.column) in TEMPORAL or any(
                    w in g.column.lower() for w in ("year", "month", "date", "day", "week", "quarter")
                )
                if self.order_dir is not None or self.alpha:
                    plan.order.append(OrderKey(g if self.alpha else plan.measures[0], bool(self.order_dir)))
                elif temporal:
                    plan.order.append(OrderKey(g, False))
                else:
                    plan.order.append(OrderKey(plan.measures[0], True))
            elif self.order_dir is not None and plan.order:
                plan.order = [replace(o, desc=self.order_dir) if not o.words else o for o in plan.order]
            if not plan.groups and plan.order and not plan.count_groups:
                plan.order = []  # one row: nothing to order
            return
        # lists: the asked-for columns, else the entity's name ('the cities ... and their
        # population': the listed entity's name comes first)
        if plan.ratio is not None:
            # 'for each course id' names the rows of the ratio, one per row of its table
            if any(g.table != plan.ratio[0].table for g in plan.groups):
                raise _Decline("it asks for a ratio per group, which keyword mode does not compute")
            explicit = list(dict.fromkeys([*explicit, *plan.groups]))
            plan.groups = []
        if plan.groups:
            raise _Decline("it groups by something but names nothing to count or compute per group")
        labels = [Ref(target, c) for c in label_columns(self.lex, target)]
        plan.entity_rows = not explicit
        identifying = {c.lower() for c in label_columns(self.lex, target)} | {
            k.lower() for k in self.lex.key_of(target)
        }
        if (
            explicit
            and listed
            and not any(
                r.table == target and (r.column.lower() in identifying or r.column.lower().endswith("id"))
                for r in explicit
            )
        ):
            explicit = [*labels, *explicit]
        plan.projection = explicit or labels
        if plan.ratio is not None and not explicit:
            plan.projection = []  # 'the ratio of X to Y': the ratio is the answer
        if plan.order and not explicit and (listed or self.top):
            for o in plan.order:
                if isinstance(o.key, Ref) and o.key not in plan.projection:
                    plan.projection.append(o.key)
        if self.alpha and not plan.order:
            plan.order = [OrderKey(plan.projection[0], False)]
        elif self.order_dir is not None and plan.order:
            plan.order = [replace(o, desc=self.order_dir) for o in plan.order]
        elif self.order_dir is not None and not plan.order:
            raise _Decline("it could not tell what to order by", [])

    def _ranked_by_child(self) -> bool:
        """Ranking an entity by a column of another table ('clients by cpu hours') aggregates it."""
        if not self.plan.order or self.plan.target is None:
            return False
        key = self.plan.order[0].key
        return isinstance(key, Ref) and key.table != self.plan.target and bool(self.top or self.superlative)

    def _ranked_child_measure(self) -> None:
        plan = self.plan
        for k, o in enumerate(plan.order):
            if (
                isinstance(o.key, Ref)
                and o.key.table != plan.target
                and plan.groups
                and not any(g.table == o.key.table for g in plan.groups)
            ):
                if not _is_numeric(self.lex, o.key):
                    continue
                func: Func = "AVG" if _AVERAGED.search(o.key.column) else "SUM"
                measure = Measure(func, o.key.table, o.key.column, words=o.words)
                plan.order[k] = OrderKey(measure, o.desc, o.words)
                if measure not in plan.measures:
                    plan.measures.append(measure)
                    if self.explicit:
                        plan.hidden.append(measure)
                plan.notes.append(
                    f"each {plan.target}'s {o.key.table} rows {'averaged' if func == 'AVG' else 'added up'}"
                )

    def _check_understood(self) -> None:
        unknown = [
            lit.words
            for lit in self.shape.literals
            if lit.kind != "quoted" and lit.start not in self.used_literals
        ]
        if unknown:
            raise _Decline("some numbers or dates could not be placed", unknown)

    def _check_words(self) -> None:
        unknown: list[str] = []
        tokens = self.shape.tokens
        mention_at = {i: m for m in self.matching.mentions for i in range(m.start, m.end)}
        for i in self.matching.unmatched:
            low = tokens[i].low
            if low in GLUE or len(low) <= 2 or low.isdigit():
                continue
            nxt = next((j for j in range(i + 1, len(tokens)) if self.shape.role[j] != "stop"), None)
            adjectival = (
                nxt is not None
                and nxt in mention_at
                and mention_at[nxt].sense is not None
                and mention_at[nxt].sense.kind == "table"
            )
            if low.endswith(("ed", "ing")) and not adjectival:
                continue  # 'published in', 'serving': a relation between the things named
            unknown.append(tokens[i].text)
        for m in self.matching.mentions:
            if m.quoted and not m.senses:
                unknown.append(f'"{m.words}"')
        if unknown:
            raise _Decline("some words matched nothing in this database", unknown)

    def _merge_filters(self) -> None:
        """Several values of one column: any of them ('grade A or C'), never all at once."""
        plan = self.plan
        merged: list[Filter] = []
        by_ref: dict[Ref, list[Filter]] = {}
        for f in plan.filters:
            by_ref.setdefault(f.ref, []).append(f)
        for ref, fs in by_ref.items():
            eq = [f for f in fs if f.op == "="]
            if len(eq) > 1 and all(isinstance(f.value, str) for f in eq):
                merged.append(
                    Filter(
                        ref, "in", tuple(dict.fromkeys(f.value for f in eq)), " or ".join(f.words for f in eq)
                    )
                )
                merged.extend(f for f in fs if f.op != "=")
            else:
                merged.extend(fs)
        plan.filters = merged


class _AmbiguousDate(Exception):
    def __init__(self, lit: Literal_, refs: list[Ref]) -> None:
        super().__init__(lit.words)
        self.lit = lit
        self.refs = refs


# ---------------------------------------------------------------------------------------------
# entry


def understood_words(matching: Matching) -> list[str]:
    out = []
    for m in matching.mentions:
        s = m.sense
        if s is None:
            continue
        if s.kind == "value":
            shown = f"{s.value!r}" + (f" ({s.meaning})" if s.meaning else "")
            out.append(f"'{m.words}' → {s.table}.{s.column} = {shown}")
        else:
            out.append(f"'{m.words}' → {s.where}")
    return out


def make_plan(
    shape: Shape,
    matching: Matching,
    lex: Lexicon,
    today: dt.date,
    readings: Sequence[Reading] = (),
    near: bool = False,
) -> Plan | Abstain | Ambiguity:
    """The plan of the question, or why not (Abstain), or the readings to choose from.

    A question is only asked back when its plan is otherwise complete: asking which 'Frankfurt'
    is meant, then declining the question anyway, would waste the person's time. `near` (after
    the person rejected an answer) also asks about readings that matched less well than the
    chosen one, not only about ties (core/clarify)."""
    planner = Planner(shape, matching, lex, today, readings)
    try:
        plan = planner.build()
        for m in matching.mentions:
            if (
                m.sense is None
                or planner.roles.get(id(m)) is None
                or planner.roles[id(m)].kind in ("", "absorbed")
            ):
                continue
            role = planner.roles[id(m)].kind
            pool = m.alternatives or (_near_senses(m) if near else [])
            alternatives = [
                a for a in pool if not lex.same_thing(a, m.sense) and _fits_role(lex, a, m.sense, role)
            ]
            if alternatives:
                options = [m.sense, *alternatives][:4]
                kind: Literal["AmbValue", "AmbTableColumn"] = (
                    "AmbValue" if m.sense.kind == "value" else "AmbTableColumn"
                )
                return Ambiguity(
                    words=m.words,
                    kind=kind,
                    readings=tuple(s.reading(m.words) for s in options),
                    labels=tuple(_sense_label(lex, s) for s in options),
                )
        return plan
    except _AmbiguousDate as amb:
        readings = tuple(Reading(words=amb.lit.words, table=r.table, column=r.column) for r in amb.refs[:4])
        labels = tuple(f"{r.table} {r.column.replace('_', ' ')}" for r in amb.refs[:4])
        return Ambiguity(words=amb.lit.words, kind="AmbTableColumn", readings=readings, labels=labels)
    except _Decline as d:
        return Abstain(
            reason=d.reason,
            understood=tuple(understood_words(matching)),
            not_understood=d.words,
            suggestion=suggest(lex, planner.plan, matching),
        )


def _near_senses(m: Mention) -> list[Sense]:
    """Other readings of a mention of the same kind, one per table/column, best first."""
    if m.pinned or m.sense is None:
        return []
    seen = {(m.sense.table, m.sense.column)}
    out = []
    for s in m.senses:
        if s.kind == m.sense.kind and (s.table, s.column) not in seen:
            seen.add((s.table, s.column))
            out.append(s)
    return out[:3]


def _fits_role(lex: Lexicon, alt: Sense, chosen: Sense, role: str) -> bool:
    """Only readings that could play the same part are worth asking about: the date a year is
    compared with must be a date, what is summed must be a number."""
    if alt.kind != "column" or not alt.column or not chosen.column:
        return True
    a = column_kind(lex, alt.table, alt.column)
    c = column_kind(lex, chosen.table, chosen.column)
    if role in ("subject", "measure", "order") and (c in TEMPORAL or c in NUMERIC):
        return a in TEMPORAL if c in TEMPORAL else a in NUMERIC
    return True


def _sense_label(lex: Lexicon, s: Sense) -> str:
    where = f"{s.table} {(s.column or '').replace('_', ' ')}".strip()
    if s.kind != "value":
        return where
    if s.op == "contains":
        sample = ", ".join(repr(v) for v in s.examples[:2])
        return f"{where} containing '{s.value}'" + (f" ({sample}…)" if sample else "")
    return f"{where} = '{s.value}'" + (f" ({s.meaning})" if s.meaning else "")


def suggest(lex: Lexicon, plan: Plan, matching: Matching) -> str:
    """A rephrasing keyword mode can answer, built from what it did understand."""
    tables = [m.sense.table for m in matching.mentions if m.sense]
    table = plan.target or (tables[0] if tables else None)
    if table is None:
        graph = lex.db.graph
        central = sorted(lex.catalog.tables, key=lambda t: (-len(graph.neighbors(t.name)), t.name))
        names = ", ".join(t.name for t in central[:6])
        return (
            f"Try naming what to count or list, e.g. 'How many {_plural_of(central[0].name)} are there?' "
            f"(tables: {names})."
        )
    t = lex.table(table)
    cols = [c for c in (t.columns if t else ()) if c.kind in ("text",) and not c.name.lower().endswith("id")]
    nums = [c for c in (t.columns if t else ()) if c.kind in NUMERIC and not c.name.lower().endswith("id")]
    many = _plural_of(table)
    examples = [f"'How many {many} are there?'"]
    if cols:
        examples.append(f"'Number of {many} per {cols[-1].name.replace('_', ' ')}'")
    if nums:
        examples.append(f"'Top 5 {many} by {nums[0].name.replace('_', ' ')}'")
    return "Try a simpler question in the data's words, e.g. " + ", ".join(examples) + "."


def _plural_of(table: str) -> str:
    words = table.replace("_", " ")
    if words.endswith(("s", "x", "ch", "sh")):
        return words + ("es" if not words.endswith("s") else "")
    return words[:-1] + "ies" if words.endswith("y") and words[-2:-1] not in "aeiou" else words + "s"
