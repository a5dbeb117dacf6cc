"""Binding: the question tree on one schema — which table, column or stored value each phrase means.

Why a pass of its own: the grammar (core/keyword/grammar.py) reads a question the same way on
every database; only here does 'active hosts' become compute.status = 'active' and compute, and
'per datacenter' a group by datacenter.name. Each phrase is split into the names and values it
spells (the keyword dictionary and the value index), every part takes the senses its place in the
tree allows (what is counted is a table, what is summed a number, a filter a stored value), and
one sense per part is chosen so that the senses match well *and* join cheaply (DANKE's matching
optimisation, core/keyword/match.py `choose`). The result is the existing Query
(core/keyword/plan.py), compiled by core/keyword/compile.py, and the parts with their senses, which
the confidence model (core/keyword/confidence.py) judges.

A part that takes no sense, a value said of a column that does not hold it, a comparison with
nothing numeric to compare: each is a `Decline` with the words and the reason, never a guess.
"""

from __future__ import annotations

import datetime as dt
import re
import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from dateutil.relativedelta import relativedelta

from core.dictionary import name_words, split_identifier
from core.dictionary import words as folded_words
from core.keyword.columns import (
    NUMERIC,
    TEMPORAL,
    column_kind,
    is_birth_date,
    is_key,
    label_columns,
    measure_columns,
    money_column,
    parent_levels,
    pointed_at,
    ranking_measure,
)
from core.keyword.grammar import Reading, Token
from core.keyword.lexicon import WORDS
from core.keyword.match import (
    Lexicon,
    Matching,
    Mention,
    Sense,
    choose,
)
from core.keyword.plan import Absent, Decline, Filter, Having, Measure, OrderKey, Query, Ref, frozen_map
from core.keyword.plan import Op as PlanOp
from core.keyword.readings import Reading as Pinned
from core.keyword.time_buckets import MONTH_NAMES, WEEKDAY_NAMES
from core.keyword.tree import Condition, Group, Order, Phrase, Question, Value, Window, days
from core.keyword.tree import Measure as Asked
from core.plurals import plural, singular
from core.values import fold, similarity

MAX_PART = 4  # words one part of a phrase may have
PART_MIN = 0.9  # several words are one part only when they match a name this well
SENSE_MARGIN = 0.12  # senses this far below a part's best are not considered
KEY_WORDS = WORDS.sets["key_words"]
AGES_HIGH, AGES_LOW = WORDS.sets["ages_high"], WORDS.sets["ages_low"]  # the oldest, the youngest
ID_WORDS = KEY_WORDS | {"code", "codes", "key", "number", "numbers", "no", "nr"}
NAME_WORDS = WORDS.sets["labels"]  # what a row is called
_FUNCS = {"count": "COUNT", "sum": "SUM", "avg": "AVG", "min": "MIN", "max": "MAX"}


# ---------------------------------------------------------------------------------------------
# the schema's words, as the grammar asks for them


class SchemaNames:
    """The lexer's view of one database: names and stored values spelled word for word, and the
    business definitions by their names."""

    def __init__(self, lex: Lexicon, definitions: Sequence[tuple[str, str]] = ()) -> None:
        self.lex = lex
        self._defined = {" ".join(folded_words(w)): ref for w, ref in definitions}
        self._terms = {t.text for t in lex.dictionary.terms}

    def spells(self, words: str) -> bool:
        said = " ".join(folded_words(words))
        if said and said in self._terms:
            return True
        return any(s.via == "value" and s.score >= 1.0 for s in self.lex.values(words))

    def defined(self, words: str) -> str:
        return self._defined.get(" ".join(folded_words(words)), "")

    def acronym(self, word: str) -> str:
        """The one column name `word` is a whole word of (a name of two words or more: 'gpa' in
        total_gpa) or the initials of ('dob': date_of_birth); '' if none or several."""
        found = _short_forms(self.lex).get(word, set())
        return next(iter(found)) if len(found) == 1 else ""


_SHORT_FORMS: weakref.WeakKeyDictionary[Lexicon, dict[str, set[str]]] = weakref.WeakKeyDictionary()


def _short_forms(lex: Lexicon) -> dict[str, set[str]]:
    """Each word of a column name of two words or more, and each such name's initials → the
    names (built once per schema: a warehouse has many thousands)."""
    index = _SHORT_FORMS.get(lex)
    if index is None:
        index = {}
        for t in lex.dictionary.terms:
            said = t.text.split()
            if t.via != "name" or not t.column or t.table_part or len(said) < 2:
                continue
            for w in {*said, "".join(w[0] for w in said)}:
                index.setdefault(w, set()).add(t.text)
        _SHORT_FORMS[lex] = index
    return index


# ---------------------------------------------------------------------------------------------
# parts: a phrase split into what it names


@dataclass(frozen=True)
class Part:
    """Words of a phrase that name one thing, the senses they may have and the role they play."""

    start: int
    end: int
    words: str
    senses: tuple[Sense, ...]
    role: str = ""  # thing | value | subject | measure | group | shown | owner | date


def parts(reading: Reading, lex: Lexicon, phrase: Phrase, recent: bool = False) -> list[Part]:
    """The best split of the phrase's words into parts: most words covered by good matches, then
    fewest parts. Row nouns ('faculty members', 'usage records') are covered by nothing, and so
    are 'new', 'recent' in a question with a period or a time grouping, which says how new."""
    tokens = reading.tokens
    tree = reading.tree
    dated = recent and tree is not None and bool(tree.windows or any(g.unit for g in tree.groups))
    skipped = ROW_NOUNS | (WORDS.sets["recent"] if dated else frozenset())
    idx = [k for k in range(phrase.start, phrase.end) if tokens[k].low not in skipped or k == phrase.start]
    if len(idx) > 1 and tokens[idx[0]].low in WORDS.sets["recent"] and dated:
        idx = idx[1:]
    if not idx:
        return []
    n = len(idx)
    empty: list[tuple[int, int]] = []
    best: list[tuple[float, int, list[tuple[int, int]]]] = [(0.0, 0, empty)] + [(-1.0, 0, empty)] * n
    found: dict[tuple[int, int], list[Sense]] = {}
    for k in range(1, n + 1):
        for i in range(max(0, k - MAX_PART), k):
            if idx[k - 1] - idx[i] != k - 1 - i:
                continue  # a row noun splits two parts
            senses = found.setdefault((i, k), _senses(tokens, lex, idx[i], idx[k - 1] + 1))
            if not senses and k - i > 1:
                continue
            weight = best[i][0] + (k - i) * (senses[0].score if senses else 0.0)
            count = best[i][1] - 1
            if weight > best[k][0] + 1e-9 or (abs(weight - best[k][0]) <= 1e-9 and count > best[k][1]):
                best[k] = (weight, count, [*best[i][2], (i, k)])
    out: list[Part] = []
    for i, k in best[n][2]:
        s, e = idx[i], idx[k - 1] + 1
        part = Part(s, e, _said(tokens, s, e), tuple(found[(i, k)]))
        merged = (_merged(tokens, lex, out[-1], part) or _one_value(tokens, out[-1], part)) if out else None
        if merged is None and out:
            merged = _key_of(tokens, lex, out[-1], part)
        if merged is None and out and _names_it(tokens, lex, out[-1], part):
            merged = replace(out[-1], end=part.end, words=_said(tokens, out[-1].start, part.end))
        if merged is not None:
            out[-1] = merged
        else:
            out.append(part)
    return out


def _one_value(tokens: Sequence[Token], a: Part, b: Part) -> Part | None:
    """'SEPA direct debits', read as 'SEPA' and 'direct debits': two words for one stored value
    side by side (a code and its description) are one part, not the value said twice."""
    if a.end != b.start or not a.senses or not b.senses:
        return None
    x, y = a.senses[0], b.senses[0]
    if x.kind != "value" or y.kind != "value" or (x.table, x.column, x.value) != (y.table, y.column, y.value):
        return None
    return Part(a.start, b.end, _said(tokens, a.start, b.end), a.senses if x.score >= y.score else b.senses)


def _key_of(tokens: Sequence[Token], lex: Lexicon, a: Part, b: Part) -> Part | None:
    """'the claim ids' where claims are Claim_Headers keyed by Claim_Header_ID: a table's name
    then 'id(s)' is that table's one key column — when no column is spelled so ('client id' is
    client.id by name, and stays so)."""
    said = {t.low for t in tokens[b.start : b.end]}
    top = a.senses[0] if a.senses else None
    exact = any(x.score >= 0.95 for x in b.senses)
    if exact or not said <= KEY_WORDS or top is None or top.kind != "table" or a.end != b.start:
        return None
    key = lex.key_of(top.table)
    if len(key) != 1:
        return None
    sense = Sense("column", top.table, key[0], score=top.score, via="name")
    return Part(a.start, b.end, _said(tokens, a.start, b.end), (sense,))


def _names_it(tokens: Sequence[Token], lex: Lexicon, a: Part, b: Part) -> bool:
    """'the region name': a text column followed by a label word is that column (the region is
    what the region's name is), not the column plus some other table's name."""
    said = {t.low for t in tokens[b.start : b.end]}
    top = a.senses[0] if a.senses else None
    return (
        said <= NAME_WORDS
        and top is not None
        and top.kind == "column"
        and column_kind(lex, top.table, top.column or "") == "text"
    )


def _merged(tokens: Sequence[Token], lex: Lexicon, a: Part, b: Part) -> Part | None:
    """Two words that name tables not linked to each other, and together name a third more
    loosely ('faculty participants': Faculty_Participates_in, not Faculty and Participates_in)."""
    ta = {s.table for s in a.senses if s.kind == "table"}
    tb = {s.table for s in b.senses if s.kind == "table"}
    if not ta or not tb or any(linked(lex, x, y) for x in ta for y in tb) or a.end != b.start:
        return None
    phrase = " ".join(t.low for t in tokens[a.start : b.end])
    whole = [
        s for s in lex.schema(phrase) if s.kind == "table" and s.score >= 0.85 and s.table not in ta | tb
    ]
    return Part(a.start, b.end, _said(tokens, a.start, b.end), tuple(whole[:1])) if whole else None


ROW_NOUNS = WORDS.sets["row_nouns"]


def _said(tokens: Sequence[Token], s: int, e: int) -> str:
    out = ""
    for k in range(s, e):
        out += (" " if k > s and tokens[k].start > tokens[k - 1].end else "") + tokens[k].text
    return out


def _senses(tokens: Sequence[Token], lex: Lexicon, s: int, e: int) -> list[Sense]:
    """What the words s..e may mean: tables and columns by name or synonym, stored values; a
    quoted name only a stored value, as said."""
    if any(t.kind == "quoted" for t in tokens[s:e]):
        if e - s > 1:
            return []
        return lex.values(tokens[s].text[1:-1].strip(), quoted=True)
    lows = [t.low for t in tokens[s:e]]
    phrase = " ".join(lows)
    coded = any(ch.isdigit() for ch in phrase)
    schema = [] if coded else [x for x in lex.schema(phrase) if x.via != "description"]
    values = lex.values(_said(tokens, s, e)) if not (len(lows) == 1 and lows[0] in KEY_WORDS) else []
    if schema and values and schema[0].score >= 0.95:
        values = [replace(v, score=v.score * 0.97) for v in values]  # a name is a name first
    if schema and schema[0].kind == "table" and schema[0].score >= 0.95 and not set(lows) & KEY_WORDS:
        # 'hosts' names the table; a column whose name holds the word only points at it
        schema = [
            x for x in schema if (x.score >= 0.95 or x.via != "name") if x.kind == "table" or not _id_like(x)
        ]
    senses = sorted([*schema, *values], key=lambda x: -x.score)
    if not senses or (e - s > 1 and senses[0].score < PART_MIN):
        return []
    if e - s > 1 and senses[0].kind == "table" and _bridge(lex, senses[0].table):
        last = [
            x
            for x in lex.schema(lows[-1])
            if x.kind == "table" and x.score >= 0.95 and not _bridge(lex, x.table)
        ]
        if last:
            return []  # 'film categories': the categories (through film_category), not its rows
    top = senses[0].score
    return [x for x in senses if x.score >= top - SENSE_MARGIN][:6]


def _bridge(lex: Lexicon, table: str) -> bool:
    """A table that exists to pair the rows of two others (film_category)."""
    return table.lower() in {r for roots in lex.db.graph.bridges.values() for r in roots}


def _id_like(x: Sense) -> bool:
    low = (x.column or "").lower()
    return low.endswith(("_id", "id", "_code", "_key", "_no")) and low not in ("paid", "valid", "void")


# ---------------------------------------------------------------------------------------------
# the bound reading


@dataclass(frozen=True)
class Bound:
    """The tree bound: the query, and each part with the sense chosen for it."""

    tree: Question
    query: Query
    mentions: tuple[Mention, ...]
    notes: tuple[str, ...] = ()
    roles: tuple[tuple[int, str], ...] = ()  # by a part's first token: the role it plays
    predicate: tuple[Filter, ...] = ()  # a share ('what % of payments failed'): its numerator's filters
    ratio: tuple[Measure, Measure] | None = None  # 'cost per CPU hour': numerator, denominator
    periods: tuple[tuple[Ref, Value], ...] = ()  # each period said, on the date it restricts
    doubts: tuple[tuple[float, str], ...] = ()  # readings it chose between close rivals: (score, why)

    @property
    def computable(self) -> str:
        """'' when the query is the whole reading; else what keyword mode does not compute."""
        if self.predicate or any(m.func == "share" for m in self.tree.measures):
            return "a share of rows"
        if self.ratio is not None:
            return "a ratio of two figures"
        return ""

    def placed(self) -> list[tuple[Mention, str]]:
        roles = dict(self.roles)
        return [(m, roles.get(m.start, "")) for m in self.mentions]


@dataclass
class _Binder:
    """One question's binding (local to one call): its parts as they are found and placed."""

    reading: Reading
    lex: Lexicon
    today: dt.date
    pinned: Sequence[Pinned] = ()
    mentions: list[Mention] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    roles: dict[int, str] = field(default_factory=dict)
    doubts: list[tuple[float, str]] = field(default_factory=list)

    # -- parts and their senses ----------------------------------------------------------------

    def split(self, phrase: Phrase) -> list[Part]:
        found = parts(self.reading, self.lex, phrase)
        unplaced = [p.words for p in found if not p.senses]
        if unplaced:
            raise Decline(f"it could not place {', '.join(repr(w) for w in unplaced)}", unplaced)
        return found

    def settle(self, part: Part, role: str, allowed: Sequence[Sense]) -> Mention:
        """A part with the senses its role allows, kept for the joint choice."""
        if not allowed:
            raise Decline(f"'{part.words}' names nothing that fits where it is said", [part.words])
        pin = next((r for r in self.pinned if fold(r.words) == fold(part.words)), None)
        if pin is not None:
            kind = "value" if pin.value is not None else ("column" if pin.column else "table")
            sense = Sense(kind, pin.table, pin.column, pin.value, 1.0, "choice", op=pin.op)  # type: ignore[arg-type]
            m = Mention(part.start, part.end, part.words, (sense,), sense=sense, pinned=True)
        else:
            m = Mention(part.start, part.end, part.words, tuple(allowed))
        self.mentions.append(m)
        self.roles[m.start] = role
        return m

    def chosen(self) -> dict[int, Sense]:
        """One sense per part: the best total match minus the cost of their joins."""
        matching = choose(Matching(tuple(sorted(self.mentions, key=lambda m: m.start)), ()), self.lex)
        self.mentions = list(matching.mentions)
        return {m.start: m.sense for m in matching.mentions if m.sense is not None}


class Ambiguous(Exception):
    """Words with two to four readings as good as each other, each of which could play their part:
    a question for the person, not a guess."""

    def __init__(self, words: str, senses: Sequence[Sense]) -> None:
        super().__init__(words)
        self.words = words
        self.senses = tuple(senses)


def bind(
    reading: Reading, lex: Lexicon, today: dt.date, pinned: Sequence[Pinned] = (), near: bool = False
) -> Bound:
    """The query the tree asks for on this schema; raises Decline with the reason it cannot,
    Ambiguous or AmbiguousDate when the person must say which reading they mean. `near` (after
    the person rejected an answer) also asks about readings that matched a little less well."""
    tree = reading.tree
    if tree is None:
        raise Decline("its words fit no question keyword mode reads")
    b = _Binder(reading, lex, today, pinned)
    try:
        slots = _slots(b, tree)
        sense = b.chosen()
        q = _building(b, tree, slots, sense)
        query = _finished(b, q)
        _who_by_number(b, query)
    except Decline as d:
        raise Decline(d.reason, d.words, understood([*b.mentions, *_verb_mentions(b)])) from None
    _ask_back(b, near)
    return Bound(
        tree,
        query,
        tuple(b.mentions),
        tuple(b.notes),
        tuple(b.roles.items()),
        tuple(q.predicate),
        q.ratio,
        tuple(q.periods),
        tuple(b.doubts),
    )


WHO_BY_NUMBER = 0.3  # the confidence left when 'who …' would be answered by a number alone


def _who_by_number(b: _Binder, query: Query) -> None:
    """'Who is the advisor of Linda Smith' answered with Student.Advisor, a number: 'who' asks
    for someone by name, and a number that is not declared to point at anyone (it may be a
    faculty id, a count, a code) names nobody the person asked about. A doubt the threshold
    declines, saying why."""
    if not b.reading.tokens or b.reading.tokens[0].low != "who" or query.measures or not query.projection:
        return
    if any(column_kind(b.lex, r.table, r.column) not in NUMERIC for r in query.projection):
        return
    shown = ", ".join(name_words(r.column) for r in query.projection)
    b.doubts.append((WHO_BY_NUMBER, f"'who' asks for someone by name, and {shown} is only a number"))


def _verb_mentions(b: _Binder) -> list[Mention]:
    """The question's verbs that spell a column ('paid' → payment.paid_on): part of what a decline
    says it understood, so an analyst sees which column a rewording could use."""
    tree = b.reading.tree
    out = []
    for v in tree.verbs if tree is not None else ():
        found = [s for s in b.lex.schema(v.text.lower()) if s.kind == "column" and s.score >= 0.8]
        if found:
            out.append(Mention(v.start, v.end, v.text, tuple(found[:1]), sense=found[0]))
    return out


def understood(mentions: Sequence[Mention]) -> list[str]:
    """What each part was read as ('clients' → client; 'active' → client.status = 'ACT')."""
    out = []
    for m in sorted(mentions, key=lambda m: m.start):
        s = m.sense or (m.senses[0] if m.senses else None)
        if s is None:
            continue
        if s.kind == "value":
            out.append(
                f"'{m.words}' → {s.table}.{s.column} = {s.value!r}" + (f" ({s.meaning})" if s.meaning else "")
            )
        else:
            out.append(f"'{m.words}' → {s.where}")
    return list(dict.fromkeys(out))


def _ask_back(b: _Binder, near: bool) -> None:
    """The first part with another reading as good as the chosen one (of the same kind, that could
    play its part): Ambiguous."""
    for m in sorted(b.mentions, key=lambda m: m.start):
        if m.sense is None or m.pinned or b.roles.get(m.start) == "place":
            continue  # (a column that only says where a value is: the value settles it)
        pool = list(m.alternatives)
        if near and not pool:
            seen = {(m.sense.table, m.sense.column)}
            for s in m.senses:
                if s.kind == m.sense.kind and (s.table, s.column) not in seen:
                    seen.add((s.table, s.column))
                    pool.append(s)
        others = [s for s in pool if not b.lex.same_thing(s, m.sense) and s.kind == m.sense.kind]
        if others:
            raise Ambiguous(m.words, [m.sense, *others][:4])


# ---------------------------------------------------------------------------------------------
# slots: each phrase of the tree split into parts, each part with the senses its role allows


@dataclass
class _Slots:
    thing: list[Mention] = field(default_factory=list)  # the head last
    thing_filters: list[Mention] = field(default_factory=list)
    conditions: list[tuple[Condition, list[Mention]]] = field(default_factory=list)
    measures: list[tuple[Asked, list[Mention]]] = field(default_factory=list)
    groups: list[tuple[Group, list[Mention]]] = field(default_factory=list)
    order: list[Mention] = field(default_factory=list)
    shown: list[list[Mention]] = field(default_factory=list)
    windows: list[tuple[Window, list[Mention]]] = field(default_factory=list)


def _placed_values(p: Part, places: Sequence[Part]) -> list[Sense]:
    """A part's readings in a condition; a value said with the name of its column or table ('the
    Jazz genre', 'the enterprise segment') is only read in that column or table."""
    allowed = _kinds(p, "value", "column", "table")
    if p in places or not places:
        return allowed
    where = {(s.table.lower(), (s.column or "").lower()) for x in places for s in x.senses}
    kept = [
        s
        for s in allowed
        if s.kind == "value"
        and ((s.table.lower(), (s.column or "").lower()) in where or (s.table.lower(), "") in where)
    ]
    return kept or allowed


def _figure_first(senses: list[Sense], m: Asked) -> list[Sense]:
    """An extreme of words that name a table and one of its columns as well ('the highest CPU
    usage': runtime_cpu, and its overall_usage) asks for the column: a table's rows are no
    figure. Only a column as good as its own table; any other order stays."""
    if m.func not in ("max", "min", "sum", "avg"):
        return senses
    tables = {(s.table.lower(), s.score) for s in senses if s.kind == "table"}
    figures = [s for s in senses if s.kind == "column" and (s.table.lower(), s.score) in tables]
    if len(figures) != 1:
        return senses
    return [figures[0], *(s for s in senses if s is not figures[0])]


def _kinds(part: Part, *kinds: str) -> list[Sense]:
    return [s for s in part.senses if s.kind in kinds]


def _slots(b: _Binder, tree: Question) -> _Slots:
    """Every phrase of the tree split into parts, each part with the senses its role allows."""
    slots = _Slots()
    _thing_slots(b, tree, slots)
    owner = {s.table.lower() for m in slots.thing[-1:] for s in m.senses[:1]}
    sides = [x for m in tree.measures if m.func == "ratio" for x in (m.top, m.over) if x is not None]
    for m in (*tree.measures, *sides):
        said = []
        for p in b.split(m.of) if m.of is not None and m.of != tree.thing else ():
            allowed = _figure_first(_kinds(p, "table", "column"), m)
            own = [s for s in allowed if s.table.lower() in owner]  # 'the date of the payment'
            said.append(b.settle(p, "measure", own or allowed))
        slots.measures.append((m, said))
    slots.conditions = [(c, _condition_slots(b, c)) for c in tree.conditions]
    for g in tree.groups:
        found = b.split(g.by) if g.by else []
        slots.groups.append(
            (g, [b.settle(p, "group", _kinds(p, "table", "column") or _kinds(p, "value")) for p in found])
        )
    key = tree.order.key if tree.order is not None else None
    if isinstance(key, Phrase):
        slots.order = [b.settle(p, "order", _kinds(p, "table", "column")) for p in b.split(key)]
    if isinstance(key, Asked) and key.of is not None:
        slots.measures.append(
            (key, [b.settle(p, "measure", _kinds(p, "table", "column")) for p in b.split(key.of)])
        )
    for item in tree.shown:
        if isinstance(item, Asked) and item.of is not None:
            slots.measures.append(
                (item, [b.settle(p, "measure", _kinds(p, "table", "column")) for p in b.split(item.of)])
            )
        shown: list[Mention] = []
        if isinstance(item, Phrase) and not _names_only(item):
            found = _owned(b, item, tree.thing)
            shown = [b.settle(p, "shown", _kinds(p, "column", "table")) for p in found]
        slots.shown.append(shown)
    for w in tree.windows:
        found = parts(b.reading, b.lex, w.subject) if w.subject is not None else []
        slots.windows.append(
            (
                w,
                [
                    b.settle(p, "date", _kinds(p, "column", "table"))
                    for p in found
                    if _kinds(p, "column", "table")
                ],
            )
        )
    return slots


def _owned(b: _Binder, item: Phrase, owner: Phrase | None) -> list[Part]:
    """The parts of a column asked for of a thing. The thing's own column spelled with its words
    and the item's comes first ('the colors of the school' → school.school_colors, not another
    table's colors; 'the type of document' → document_type_code), as schemas name a thing's own
    columns; else the item's words alone."""
    own = _spelled_with(b, item, owner)
    try:
        found = b.split(item)
    except Decline:
        if own is None:
            raise
        return [own]
    return [own] if own is not None and len(found) == 1 else found


def _spelled_with(b: _Binder, item: Phrase, owner: Phrase | None) -> Part | None:
    """The item as a column the owner's words and its own spell together, if any does well."""
    if owner is None:
        return None
    tokens = (*b.reading.tokens[owner.start : owner.end], *b.reading.tokens[item.start : item.end])
    senses = [
        s for s in b.lex.schema(" ".join(t.low for t in tokens)) if s.kind == "column" and s.score >= 0.95
    ]
    return Part(item.start, item.end, item.text, tuple(senses)) if senses else None


def _thing_slots(b: _Binder, tree: Question, slots: _Slots) -> None:
    """The thing's phrase: its head (a table, else a column), the values said of it (before it,
    or spelled exactly after it: 'payments failed'), and the words that qualify it."""
    found = parts(b.reading, b.lex, tree.thing, recent=True) if tree.thing is not None else []
    if found and all(s.kind == "value" for p in found for s in p.senses):
        for p in found:  # 'the total usage cost of Polaris Cloud': the value says whose
            slots.thing_filters.append(b.settle(p, "value", _kinds(p, "value")))
        return
    if not found:
        return
    head = _head(found)
    for p in found:
        if p is head:
            slots.thing.append(b.settle(p, "thing", _rows_first(p)))
        elif p.start > head.start and _dated(b.lex, head, p):
            b.notes.append(f"'{p.words}' says which date")  # 'policies expire in 2026'
        elif not p.senses:
            raise Decline(f"it could not place '{p.words}'", [p.words])
        elif p.start > head.start and not any(s.kind == "value" and s.score >= EXACT for s in p.senses):
            raise Decline(f"'{p.words}' is only like a stored value", [p.words])
        elif any(s.kind == "value" for s in p.senses):
            slots.thing_filters.append(b.settle(p, "value", _kinds(p, "value")))
        else:
            slots.thing.insert(0, b.settle(p, "owner", _kinds(p, "table", "column")))


def _rows_first(p: Part) -> list[Sense]:
    """The senses a thing may take: a table or a column; but words that name a table as well as
    they name a column of another ('airlines': the table, or routes.airline, a code) are the
    table — what is listed, counted or ranked is rows, and the column only holds something about
    them. (The joint choice would otherwise take whichever joins cheaper.)"""
    allowed = _kinds(p, "table", "column")
    tables = [s for s in allowed if s.kind == "table"]
    best = max((s.score for s in allowed), default=0.0)
    if tables and max(s.score for s in tables) >= best - 0.02:
        return [s for s in allowed if s.kind == "table" or s.score > max(t.score for t in tables)]
    return allowed


def _condition_slots(b: _Binder, c: Condition) -> list[Mention]:
    """A condition's subject (a table or column) and values (a value said with the name of its
    column or table is read only there: 'the Jazz genre')."""
    out: list[Mention] = []
    named: list[Part] = []
    if isinstance(c.subject, Phrase):
        named = b.split(c.subject)
        out += [b.settle(p, "subject", _kinds(p, "table", "column")) for p in named]
    if c.op in ("contains", "prefix", "suffix") and isinstance(c.value, Phrase):
        out.append(_text_part(b, c.value, named))
        return out
    for phrase in (c.value, *c.also):
        if isinstance(phrase, Phrase):
            found = b.split(phrase)
            places = [p for p in [*named, *found] if p.senses and p.senses[0].kind != "value"]
            for p in found:
                role = "place" if p in places and len(found) > 1 else "value"
                out.append(b.settle(p, role, _placed_values(p, places)))
    return out


def _text_part(b: _Binder, value: Phrase, named: list[Part]) -> Mention:
    """'containing Digital', 'starting with Orbit': the words as said, part of the stored texts
    that hold them (as if quoted) — in the column said with them ('names starting with …'), if any."""
    words = value.text.strip("\"'“”`")
    senses = [s for s in b.lex.values(words, quoted=True) if s.column]
    columns = {
        (s.table.lower(), (s.column or "").lower()) for p in named for s in p.senses[:1] if s.kind == "column"
    }
    if columns:
        senses = [s for s in senses if (s.table.lower(), (s.column or "").lower()) in columns]
    part = Part(value.start, value.end, words, tuple(senses))
    if not senses:
        raise Decline(f"it could not place '{words}'", [words])
    return b.settle(part, "value", senses)


EXACT = 0.97  # a value said after what it is of ('payments failed') is one only when spelled so


def _dated(lex: Lexicon, head: Part, p: Part) -> bool:
    """The words name a date of the thing by a verb ('policies expire' → expiration_date)."""
    tables = {s.table for s in head.senses[:1]}
    return any(names_date(w, d) for w in p.words.lower().split() for t in tables for d in _own_dates(lex, t))


def names_date(word: str, ref: Ref) -> bool:
    """'graduate' names predicted_graduation_semester, 'expire' expiration_date: the word and a
    word of the column's name share their first five letters or more."""
    word = fold(word)
    parts_ = fold(ref.column.replace("_", " ")).split()
    return len(word) >= 5 and any(len(w) >= 5 and w[:5] == word[:5] for w in parts_)


def _head(found: Sequence[Part]) -> Part:
    """The part a phrase is about: its last table, else its last column ('active hosts' → hosts,
    'client segment' → segment, 'payments failed' → payments)."""
    for kinds in (("table",), ("column",)):
        for p in reversed(found):
            if (p.senses and p.senses[0].kind in kinds) or any(
                s.kind in kinds and s.score >= p.senses[0].score - 0.02 for s in p.senses
            ):
                return p
    return found[-1]


# ---------------------------------------------------------------------------------------------
# the query


@dataclass
class _Query:
    """The query as it is put together (local to one binding)."""

    target: str | None = None
    measures: list[Measure] = field(default_factory=list)
    groups: list[Ref] = field(default_factory=list)
    projection: list[Ref] = field(default_factory=list)
    filters: list[Filter] = field(default_factory=list)
    absent: list[Absent] = field(default_factory=list)
    order: list[OrderKey] = field(default_factory=list)
    names: dict[Ref, str] = field(default_factory=dict)
    compared: list[Ref] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    limit: int | None = None
    distinct: bool = False
    ties: bool = False
    having: list[Having] = field(default_factory=list)
    count_groups: str = ""
    predicate: list[Filter] = field(default_factory=list)  # a share: the rows counted above the line
    ratio: tuple[Measure, Measure] | None = None  # a measure divided by another ('cost per CPU hour')
    periods: list[tuple[Ref, Value]] = field(default_factory=list)  # each period, on its date
    thing_column: Ref | None = None  # the thing is a column ('the usage cost …')
    sort: tuple[str, bool] | None = None  # an order said with no key: ('alpha' | 'dir', desc)
    hidden: list[Measure] = field(default_factory=list)  # computed to order by, not shown
    thing_date: Ref | None = None  # the thing's words name its rows by their date ('accounts opened')
    row_ratio: tuple[Ref, Ref] | None = None  # each row's first number divided by its second


def _building(b: _Binder, tree: Question, slots: _Slots, sense: dict[int, Sense]) -> _Query:
    def of(m: Mention) -> Sense:
        return sense.get(m.start) or m.senses[0]

    lex = b.lex
    q = _Query()
    dates_listed = _lists_dates(b, tree)
    if dates_listed:  # 'when did Jensen Muller place his orders': each order with its date
        tree = replace(tree, ask="list", measures=())
    thing_column: Ref | None = None
    if slots.thing:
        head = of(slots.thing[-1])
        q.target = head.table
        q.tables.append(head.table)
        if head.kind == "column" and _dated_rows(b, tree, slots.thing[-1].words, head):
            q.thing_date = Ref(head.table, head.column or "")  # 'accounts opened in 2014'
        elif head.kind == "column":
            said = slots.thing[-1].words
            thing_column = q.thing_column = _by_name(lex, Ref(head.table, head.column or ""), said)
    said_of = {of(m).table for m in slots.thing_filters}
    last = slots.thing_filters[-1].words.split()[-1].lower() if slots.thing_filters else ""
    if not slots.thing and tree.ask == "count" and len(said_of) == 1 and singular(last) != last:
        # 'how many failed SEPA direct debits': the rows holding those values, said in the plural
        # (not 'how many Germany', which names no rows to count)
        q.target = said_of.pop()
        q.tables.append(q.target)
    _counted_by_group(q, tree, slots, of)
    _listed_columns_table(q, tree, slots, of)
    share = any(m.func == "share" for m in tree.measures)
    head_start = slots.thing[-1].start if slots.thing else 0
    for m in slots.thing_filters:
        f = _value_filter(of(m), m.words, "=")
        (q.predicate if share and m.start > head_start else q.filters).append(f)
    if slots.thing:
        for m in slots.thing[:-1]:
            _qualifier(lex, q, of(slots.thing[-1]), of(m), m.words)
    for cond, ms in slots.conditions:
        before = len(q.filters)
        _condition(b, q, cond, [(m, of(m)) for m in ms])
        if share and not cond.whole:  # 'what % of payments failed': said of the rows, the numerator
            q.predicate += q.filters[before:]
            del q.filters[before:]
    measures = {id(m): [of(x) for x in ms] for m, ms in slots.measures}
    for asked in tree.measures:
        if asked.func == "ratio" and asked.top is not None and asked.over is not None:
            _ratio(b, q, asked.top, asked.over, measures)
            continue
        q.measures.append(
            _own_figure(lex, q, asked, _measure(b, q, asked, measures.get(id(asked), []), thing_column))
        )
    for g, ms in slots.groups:
        _group(b, q, g, [of(m) for m in ms])
    if tree.order is not None:
        _order(b, q, tree, slots, measures, of)
    for w, ms in slots.windows:
        _window(b, q, w, [of(m) for m in ms])
    shown: list[list[Ref]] = []
    if dates_listed and q.target is not None:
        shown.append([_fact_date(b, q.target, "when")])  # asked for: shown whatever else is
    for phrase, ms in zip(tree.shown, slots.shown, strict=True):
        if isinstance(phrase, Asked):
            figure = _measure(b, q, phrase, measures.get(id(phrase), []), thing_column)
            known = [
                replace(m, words="")
                for m in (*q.measures, *(o.key for o in q.order))
                if isinstance(m, Measure)
            ]
            if replace(figure, words="") not in known:  # however it was worded
                q.measures.append(figure)  # 'show the count …': the figure asked for, else one more
            shown.append([])
        elif _names_only(phrase):
            shown.append(labels(lex, q.target) if q.target else [])
        else:
            shown.append(_shown(lex, [of(m) for m in ms], phrase.text))
    _columns_of_one_table(q, tree, shown)
    _output(b, q, tree, thing_column, [r for refs in shown for r in refs])
    if q.sort is not None:
        _sorted(lex, q, *q.sort)
    _all_shown(q, tree, shown)
    return q


def _all_shown(q: _Query, tree: Question, shown: list[list[Ref]]) -> None:
    """A column asked for by name is in the answer, or the question is declined: 'which country
    has the datacenter with the most hosts' answered with the datacenter's name (the country said
    and dropped) would answer another question."""
    if not tree.only_shown:
        return
    answer = {r.table.lower() for r in (*q.projection, *q.groups)}
    for phrase, refs in zip(tree.shown, shown, strict=False):
        if isinstance(phrase, Phrase) and refs and not any(r.table.lower() in answer for r in refs):
            raise Decline(f"it could not show '{phrase.text}' beside what it ranks", [phrase.text])


def _columns_of_one_table(q: _Query, tree: Question, shown: list[list[Ref]]) -> None:
    """'give me the dates and zip codes with a storm event': columns listed with no thing said
    are rows of their table when every one of them is a column of that one table."""
    if q.target is not None or tree.ask != "list" or tree.thing is not None or not shown:
        return
    tables = {r.table for refs in shown for r in refs}
    if len(tables) == 1 and all(shown):
        q.target = tables.pop()
        q.tables.append(q.target)


def _by_name(lex: Lexicon, ref: Ref, words: str) -> Ref:
    """A thing read as an identifying column ('start stations' → trip.start_station_id) is shown
    by the name its table keeps beside it (trip.start_station_name): people ask for stations,
    not their numbers, unless the words say id or number."""
    if set(words.lower().split()) & ID_WORDS or not _id_name(ref.column):
        return ref
    stem = re.sub(r"_?(id|no|number|key)$", "", ref.column, flags=re.IGNORECASE)
    t = lex.table(ref.table)
    if not stem or t is None:
        return ref
    names = [
        c.name
        for c in t.columns
        if c.kind == "text"
        and name_words(c.name) in (f"{name_words(stem)} name", f"{name_words(stem)} title")
    ]
    return Ref(ref.table, names[0]) if len(names) == 1 else ref


DATE_WORDS = WORDS.sets["date_words"]


def _dated_rows(b: _Binder, tree: Question, words: str, head: Sense) -> bool:
    """'accounts opened in 2014': the words name the rows (accounts) and the verb their date
    (date_account_opened), and the period restricts that date — the rows are what is listed or
    counted, not their different dates. Said with a date word ('account opening dates in 2014')
    the date itself is the thing."""
    if not tree.windows or any(w.subject is not None for w in tree.windows):
        return False
    if column_kind(b.lex, head.table, head.column or "") not in TEMPORAL:
        return False
    said = [w for w in folded_words(words)]
    table = set(name_words(head.table).split())
    return not set(said) & DATE_WORDS and any(singular(w) in table for w in said)


WHICH_DATE = frozenset([("relative", "last"), ("top", "asc")])  # 'when did … last / first …'


def _lists_dates(b: _Binder, tree: Question) -> bool:
    """'when did X place his orders' asks when each of several rows happened: their dates, listed.
    The grammar reads 'when' as the latest date, which is the answer only when one date is meant:
    'last' or 'first' said, or one row asked about ('when did X pay'). A plural thing with no
    such word is every row's date, and the latest of them alone would answer another question."""
    if tree.ask != "measure" or tree.groups or tree.thing is None or len(tree.measures) != 1:
        return False
    m = tree.measures[0]
    if m.hint != "date" or m.of is not None or m.func not in ("max", "min"):
        return False
    if any((x.cat, x.arg) in WHICH_DATE or x.cat == "super" for x in b.reading.lexemes):
        return False
    head = b.reading.tokens[tree.thing.end - 1].low
    return head.isalpha() and singular(head) != head


def _sorted(lex: Lexicon, q: _Query, how: str, desc: bool) -> None:
    """An order said with no key ('ordered alphabetically', 'from highest to lowest') sorts by
    what the answer shows: figures per group by the figure, names A to Z by the first text column."""
    if how == "dir" and q.measures:
        q.order = [OrderKey(q.measures[0], desc)]
        return
    shown = [*q.groups, *q.projection]
    texts = [r for r in shown if column_kind(lex, r.table, r.column) == "text"]
    key = (texts if how == "alpha" else shown)[:1]
    if not key:
        raise Decline("it could not tell what to order by")
    q.order = [OrderKey(key[0], desc)]


def linked(lex: Lexicon, a: str, b: str) -> bool:
    """One table's rows belong to the other's: the same table, a foreign key between them, or a
    bridge table pairing them ('film categories': film_category)."""
    a, b = a.lower(), b.lower()
    return a == b or bool(lex.db.graph.edges_between(a, b)) or frozenset((a, b)) in lex.db.graph.bridges


def _qualifier(lex: Lexicon, q: _Query, head: Sense, s: Sense, words: str) -> None:
    """A word before what a phrase is about: the table a column is of ('client segment'), a table
    the thing belongs to ('race results', 'film categories'), or a yes/no column said as an
    adjective ('active customers' → active = 1). Anything else is not placed."""
    if s.kind == "table" and linked(lex, s.table, head.table):
        return
    if s.kind == "column" and any(f.ref == Ref(s.table, s.column or "") for f in q.filters):
        return  # 'enterprise segment clients': the column the value is in
    if s.kind == "column" and s.table.lower() == head.table.lower() and s.column:
        flag = yes(lex, Ref(s.table, s.column))
        if flag is not None:
            q.filters.append(Filter(Ref(s.table, s.column), "=", flag, words))
            return
    raise Decline(
        f"it could not tell how '{words}' restricts the {name_words(head.column or head.table)}", [words]
    )


def yes(lex: Lexicon, ref: Ref) -> object | None:
    """The stored 'yes' of a yes/no column (True, or 1 for 0/1 numbers); None for any other column."""
    t = lex.table(ref.table)
    c = t.column(ref.column) if t else None
    if c is None:
        return None
    if c.kind == "boolean":
        return True
    if c.kind != "integer":
        return None
    key = ("yes_no", ref.table.lower(), ref.column.lower())
    found = lex.catalog.memo(key, lambda: _distinct(lex, ref))
    return 1 if found and set(found) <= {0, 1} else None


def _distinct(lex: Lexicon, ref: Ref) -> tuple[object, ...]:
    import sqlalchemy as sa

    t = lex.table(ref.table)
    assert t is not None
    try:
        with lex.db.engine.connect() as conn:
            query: sa.Select[Any] = (
                sa.select(sa.column(ref.column))
                .select_from(sa.table(t.name, schema=t.schema))
                .distinct()
                .limit(3)
            )
            return tuple(r[0] for r in conn.execute(query))
    except sa.exc.SQLAlchemyError:
        return ()


def _value_filter(s: Sense, words: str, op: str) -> Filter:
    if s.kind != "value" or not s.column:
        raise Decline(f"'{words}' is not a value to filter by", [words])
    if s.op == "contains":
        if op != "=":
            raise Decline(f"'{words}' is only part of stored values", [words])
        return Filter(Ref(s.table, s.column), "contains", s.value, words)
    return Filter(Ref(s.table, s.column), "=" if op == "=" else "!=", s.value, words, s.meaning)


def _condition(b: _Binder, q: _Query, cond: Condition, said: list[tuple[Mention, Sense]]) -> None:
    lex = b.lex
    values = [(m, s) for m, s in said if s.kind == "value"]
    named = [s for _, s in said if s.kind != "value"]
    if cond.also and len(values) == 1 + len(cond.also):  # 'from Aberdeen or from Denver'
        columns = {(s.table, s.column) for _, s in values}
        if len(columns) != 1 or any(s.op == "contains" for _, s in values) or cond.op != "=":
            raise Decline(
                "it could not tell which column holds every one of the values", [m.words for m, _ in values]
            )
        s = values[0][1]
        q.filters.append(
            Filter(
                Ref(s.table, s.column or ""),
                "in",
                tuple(x.value for _, x in values),
                " or ".join(m.words for m, _ in values),
            )
        )
        q.tables.append(s.table)
        return
    if cond.op in ("=", "!=") and not isinstance(cond.value, Value):
        for m, s in values:
            f = _value_filter(s, m.words, cond.op)
            for n in named:  # 'the enterprise segment', 'the Jazz genre': the words name the value's place
                if n.kind == "table" and linked(lex, n.table, s.table):
                    q.tables.append(n.table)  # 'London clients': the clients of that city
                    continue
                if n.table.lower() != s.table.lower() or (
                    n.kind == "column" and not lex.same_thing(n, replace(s, kind="column", value=None))
                ):
                    raise Decline(f"'{m.words}' is no {name_words(n.column or n.table)}", [m.words])
            q.filters.append(f)
            q.tables.append(s.table)
        if not values:
            words = cond.value.text if isinstance(cond.value, Phrase) else ""
            flags = [(s, yes(lex, Ref(s.table, s.column or ""))) for s in named if s.kind == "column"]
            if flags and all(f is not None for _, f in flags):  # 'have a final exam': has_final_exam
                q.filters += [
                    Filter(Ref(s.table, s.column or ""), "=" if cond.op == "=" else "!=", f, words)
                    for s, f in flags
                ]
                return
            if cond.op == "!=" or flags or not _scoped(cond.prep):
                raise Decline(f"it could not tell what '{words}' says of the rows", [words])
            # 'on a host', 'do students have', 'received by publications': whose rows
            q.tables += [s.table for s in named]
        return
    if cond.op == "absent":
        _absent(b, q, cond, named)
        return
    if cond.op in ("contains", "prefix", "suffix"):
        _text_filter(lex, q, cond, values)
        return
    tables = [s for s in named if s.kind == "table"]
    counted = tables and not cond.prep and not any(s.kind == "column" for s in named)
    if counted and q.target and tables[-1].table.lower() != q.target.lower():
        _having(lex, q, cond, tables[-1].table)
        return
    own = q.thing_column.table if q.thing_column is not None else ""
    if counted and own and tables[-1].table.lower() == own.lower():
        _having(lex, q, cond, own)  # 'cities with more than two airports': airports per city
        return
    column = _compared(b, q, cond, named)
    value = cond.value
    assert isinstance(value, Value)
    kind = column_kind(lex, column.table, column.column)
    if value.kind == "number" and kind not in NUMERIC and not (kind == "text" and cond.op in ("=", "!=")):
        raise Decline(f"it could not compare {name_words(column.column)} with {value.text}", [value.text])
    q.tables.append(column.table)
    words = f"{cond.op} {value.text}"
    if cond.op == "between":
        assert cond.upper is not None
        q.filters += [Filter(column, ">=", value.value, words), Filter(column, "<=", cond.upper.value, words)]
    else:
        q.filters.append(Filter(column, cond.op, value.value, words))
    if column not in q.compared and cond.op != "=":  # rows that differ in it show it
        q.compared.append(column)


def _text_filter(lex: Lexicon, q: _Query, cond: Condition, values: list[tuple[Mention, Sense]]) -> None:
    """'with "IEEE Transactions" in its name', 'starting with "Ha"': the quoted words as part of
    the one column the value index finds them in — a column never guessed."""
    said = cond.value.text.strip("\"'“”`") if isinstance(cond.value, Phrase) else ""
    columns = {Ref(s.table, s.column) for _, s in values if s.column}
    label = _label_holding(lex, q.target, said, cond.op) if said and q.target else None
    if label is not None:  # 'airlines starting with "Orbit"': their name, not the call sign ORBIT
        columns = {label}
    if not said or len(columns) != 1:
        raise Decline(f"it could not tell which column holds '{said}'", [said])
    ref = columns.pop()
    op: PlanOp = "contains" if cond.op == "contains" else "prefix" if cond.op == "prefix" else "suffix"
    q.filters.append(Filter(ref, op, said, f"{op} {said}"))
    q.tables.append(ref.table)


def _label_holding(lex: Lexicon, table: str, said: str, op: str) -> Ref | None:
    """The one column that names the rows of `table` ('name', 'title') when a stored value of it
    starts with, ends with or contains the words as said: text said of a thing is first its name."""
    import sqlalchemy as sa

    named_by = labels(lex, table)
    t = lex.table(table)
    if len(named_by) != 1 or t is None:
        return None
    low = said.lower().replace("%", "").replace("_", "")
    pattern = f"{low}%" if op == "prefix" else f"%{low}" if op == "suffix" else f"%{low}%"
    column: sa.ColumnClause[Any] = sa.column(named_by[0].column)
    try:
        with lex.db.engine.connect() as conn:
            query: sa.Select[Any] = (
                sa.select(sa.literal(1))
                .select_from(sa.table(t.name, schema=t.schema))
                .where(sa.func.lower(column).like(pattern))
                .limit(1)
            )
            held = conn.execute(query).first() is not None
    except sa.exc.SQLAlchemyError:
        return None
    return named_by[0] if held else None


# prepositions after which a table only says whose rows are meant ('the cores on a host', 'the
# majors students have', 'courses Mingoz teaches')
SCOPES = WORDS.sets["scopes"]


def _scoped(prep: str) -> bool:
    """The words before a table say only whose rows are meant: a scope preposition ('on a host'),
    or a relation verb, with or without 'with' or 'to' ('the authors who wrote the paper with the
    title …': the authors of that paper, which the condition said of it restricts; 'keyphrases
    associated with papers')."""
    said = prep.split()
    if said[-1] in WORDS.sets["verb_particles"] and len(said) > 1:
        said = said[:-1]  # 'associated with papers', 'linked to a client'
    if not said or WORDS.cues.get((said[-1],), ("",))[0] == "have":
        return False  # 'campuses had their fee recorded in 1996': whose fee, and so whose year, is unsaid
    return said[-1] in SCOPES or said[-1] in WORDS.sets["relation_verbs"]


def _compared(b: _Binder, q: _Query, cond: Condition, named: list[Sense]) -> Ref:
    """The column a number is compared with: the one said, a table's key said with its number
    ('store 2'), else the one the unit or the comparison word implies ('years old', 'longer than')."""
    lex = b.lex
    columns = [s for s in named if s.kind == "column" and s.column]
    if columns:
        return Ref(columns[-1].table, columns[-1].column or "")
    tables = [s.table for s in named if s.kind == "table"]
    if tables and q.target:
        pointer = _pointer(lex, q.target, tables[0])
        if pointer is not None:
            return pointer
    table = q.target or (tables[0] if tables else None)
    if table is None:
        raise Decline(f"it could not tell what '{cond.value.text if cond.value else ''}' is compared with")
    implied = _implied(lex, table, " ".join([cond.unit, cond.hint]))
    if implied is not None:
        return implied
    before = _named_before(b, cond.value.start if isinstance(cond.value, Value) else 0)
    implied = _implied(lex, before, " ".join([cond.unit, cond.hint])) if before else None
    if implied is not None:  # 'aircraft flown by pilots younger than 34': the pilots' age
        return implied
    raise Decline(
        f"it could not tell which number of {name_words(table)} '{cond.hint or cond.unit or cond.op} "
        f"{cond.value.text if cond.value else ''}' is about",
        [cond.value.text] if isinstance(cond.value, Value) else [],
    )


def _named_before(b: _Binder, start: int) -> str:
    """The table of the last thing named before token `start` ('pilots' in '… flown by pilots
    younger than 34'): what a comparison with no column of its own is said of."""
    tables = [
        m.sense.table
        for m in sorted(b.mentions, key=lambda m: m.end)
        if m.end <= start and m.sense and m.sense.kind == "table"
    ]
    return tables[-1] if tables else ""


def _having(lex: Lexicon, q: _Query, cond: Condition, child: str) -> None:
    """'clients with more than 10 payments': how many rows of another table each has, compared."""
    assert q.target is not None and isinstance(cond.value, Value)
    if not linked(lex, child, q.target) or cond.value.kind != "number":
        raise Decline(
            f"it could not tell how {name_words(child)} are counted for each {name_words(q.target)}"
        )
    m = Measure("COUNT", child, words=cond.subject.text if cond.subject else name_words(child))
    words = f"{cond.op} {cond.value.text}"
    if cond.op == "between":
        assert cond.upper is not None
        q.having += [
            Having(m, ">=", float(cond.value.value), words),
            Having(m, "<=", float(cond.upper.value), words),
        ]
    else:
        q.having.append(Having(m, cond.op, float(cond.value.value), words))
    q.tables.append(child)


def _pointer(lex: Lexicon, table: str, other: str) -> Ref | None:
    """The one column of `table` that points at `other` ('customers of store 2' → store_id)."""
    found = [
        e
        for e in lex.db.graph.edges
        if e.table.lower() == table.lower() and e.ref_table.lower() == other.lower() and len(e.columns) == 1
    ]
    return Ref(table, found[0].columns[0]) if len(found) == 1 else None


# words that name money a thing brings in or costs ('top clients by revenue'): its amount, not its rows
MONEY_WORDS = WORDS.sets["money_words"]
MONEY_HINTS = WORDS.sets["money_hints"]


def _implied(lex: Lexicon, table: str, said: str) -> Ref | None:
    """The one number column of `table` the words imply ('older' → age, lexicon.yaml `implied`;
    'earning' → its money column; '1024 GB' → memory_gb), or None."""
    said = said.lower().strip()
    words = re.findall(r"[a-z]+", said)
    numbers = measure_columns(lex, table)
    implied = [c for w in dict.fromkeys([said, *words]) for c in WORDS.implied.get(w, ())]
    for column_word in dict.fromkeys(implied):
        hits = [c for c in numbers if column_word in split_identifier(c) or column_word in c.lower()]
        if len(hits) == 1:
            return Ref(table, hits[0])
    if set(words) & MONEY_HINTS and not _named_amounts(lex, table, said):
        money = money_column(lex, table)
        if money is not None:
            return Ref(table, money)
    units = [w for w in words if w not in ("old", "long")]
    for c in numbers:  # '1024 GB' → memory_gb
        if set(units) & set(split_identifier(c)):
            return Ref(table, c)
    return None


def _named_amounts(lex: Lexicon, table: str, hint: str) -> list[Ref]:
    """The amounts of the tables below `table` that a money word names ('paid' → the customer's
    payments' amount_payment): a verb that names a table says whose amount better than a money
    column of `table` that only loosely fits it (Customers.amount_outstanding is owed, not paid)."""
    words = set(hint.lower().split())
    if not words & MONEY_HINTS:
        return []
    found = [r for t in _below(lex, table) if _says_table(hint, t) and (r := amount_of(lex, t)) is not None]
    return list(dict.fromkeys(found))


def _named_amount(lex: Lexicon, table: str, hint: str) -> Ref | None:
    """The one amount a money word names below `table`; two such tables are two readings, and
    which is meant is not guessed."""
    found = _named_amounts(lex, table, hint)
    if len(found) > 1:
        raise Decline(
            f"it could not tell whether '{hint}' is about " + " or ".join(name_words(r.table) for r in found),
            [hint],
        )
    return found[0] if found else None


def _absent(b: _Binder, q: _Query, cond: Condition, named: list[Sense]) -> None:
    """'clients without an email' (the column empty); 'clients with no payments' (no row of
    payment points at the client)."""
    lex = b.lex
    target = q.target
    if not named or target is None:
        raise Decline("it could not tell what must be missing")
    s = named[-1]
    if s.kind == "column" and s.table.lower() == target.lower():
        ref = Ref(s.table, s.column or "")
        # 'reservations with no kids': a number of them, zero (or not recorded); 'without an email':
        # empty. Of rows only: 'disciplines with no undergrads' says it of every row of a discipline
        counted = (
            column_kind(lex, ref.table, ref.column) in NUMERIC
            and not is_key(lex, ref)
            and q.thing_column is None
        )
        q.filters.append(
            Filter(ref, "none" if counted else "present", None if counted else False, "no " + ref.column)
        )
        return
    if s.kind == "table" and s.table.lower() != target.lower():
        pointer = _pointer(lex, s.table, target)
        key = lex.key_of(target)
        if pointer is not None and len(key) == 1:
            if b.reading.tree is not None and b.reading.tree.windows:
                raise Decline("it asks for a negation with a period, which may be said of either")
            words = cond.subject.text if cond.subject else plural(name_words(s.table))
            q.absent.append(Absent(s.table, pointer.column, Ref(target, key[0]), words))
            return
    raise Decline(
        f"it could not tell how '{cond.subject.text if cond.subject else ''}' can be missing from {name_words(target)}"
    )


def _group(b: _Binder, q: _Query, g: Group, named: list[Sense]) -> None:
    lex = b.lex
    if g.unit:
        dates = [
            s for s in named if s.kind == "column" and column_kind(lex, s.table, s.column or "") in TEMPORAL
        ]
        if dates:
            q.groups.append(Ref(dates[0].table, dates[0].column or "", g.unit))
            return
        if named:
            raise Decline(f"it could not group '{g.by.text if g.by else ''}' by {g.unit}")
        q.groups.append(Ref("", "", g.unit))  # placed once the fact is known (_finished)
        return
    s = named[-1] if named else None
    if s is None:
        raise Decline("it could not tell what to group by")
    values = [x for x in named if x.kind == "value"]
    q.filters += [_value_filter(x, g.by.text if g.by else "", "=") for x in values]
    if len(values) == len(named):  # 'payments by wire': those made so
        return
    if values:  # 'each Tier III datacenter': those datacenters, one figure each
        s = [x for x in named if x.kind != "value"][-1]
    if s.kind == "table" and any(
        m.table.lower() == s.table.lower() and m.func != "COUNT" for m in q.measures
    ):
        return  # 'average points per race result': over the rows, one figure
    per = Ref(s.table, s.column or "")
    if s.kind == "column" and per.column in measure_columns(lex, s.table) and not g.unit:
        top = next((m for m in q.measures if m.func in ("SUM", "AVG") and m.column), None)
        if (
            top is None
            and q.thing_column is not None
            and q.thing_column.column in measure_columns(lex, s.table)
        ):
            top = Measure("SUM", q.thing_column.table, q.thing_column.column)
        if top is not None and top.table.lower() == s.table.lower():  # 'cost per CPU hour'
            q.ratio = (
                replace(top, func="SUM"),
                Measure("SUM", per.table, per.column, words=g.by.text if g.by else ""),
            )
            return
    said_id = bool(set((g.by.text if g.by else "").lower().split()) & ID_WORDS)
    if s.kind == "column":
        ref = Ref(s.table, s.column or "")
        target = pointed_at(lex, ref)
        if target is not None and not said_id:  # 'per store' read as store_id: the store, by its name
            _group_by_table(lex, q, target, name_words(target), _fact(q))
        else:
            q.groups.append(ref)
        q.tables.append(s.table)
        return
    own = _head_column(lex, s.table, g.by.text if g.by else "")
    if own is not None:  # 'per marketing campaign' (retention's synonym): its campaign, by name
        q.groups.append(own)
        q.tables.append(s.table)
        return
    _group_by_table(lex, q, s.table, name_words(s.table), _fact(q))


def _head_column(lex: Lexicon, table: str, words: str) -> Ref | None:
    """The text column of `table` named by the last word of words that name the table as a
    whole ('marketing campaign', a synonym of retention, whose rows keep a campaign): what the
    rows are grouped by is that name, not each row."""
    said = words.lower().split()
    t = lex.table(table)
    if len(said) < 2 or t is None:
        return None
    head = singular(said[-1])
    own = [
        c.name
        for c in t.columns
        if name_words(c.name) == head and c.kind == "text" and not is_key(lex, Ref(t.name, c.name))
    ]
    return Ref(t.name, own[0]) if len(own) == 1 else None


def _group_by_table(lex: Lexicon, q: _Query, table: str, noun: str, fact: str | None = None) -> None:
    """One figure per row of `table`, shown by its name — or by the fact's own column that holds
    that name when the name is the table's key ('lakes per state': lake.state_name)."""
    key = list(lex.key_of(table))
    pointer = _pointer(lex, fact, table) if fact else None
    if (
        pointer is not None
        and len(key) == 1
        and named(lex, table)
        and [r.column for r in labels(lex, table)] == key
    ):
        q.groups.append(pointer)
        return
    shown = listed_columns(lex, table)
    if not shown:
        raise Decline(f"it could not tell which column names a {noun}")
    for r in shown:
        q.groups.append(r)
        q.names[r] = noun
    q.tables.append(table)


def _fact(q: _Query) -> str | None:
    """The table whose rows are counted or measured: what a date or a time bucket is about."""
    for m in q.measures:
        return m.table
    return q.target


CUE_IS_COLUMN = 0.3  # the confidence left when a count's cue word is also a figure of the rows


def _cue_not_column(b: _Binder, table: str, cue: str) -> None:
    """'the total count of check-ins' where check-ins have a number column 'count': the cue word
    is also a figure of the rows, and counting rows or summing that column differ. A doubt, not
    a decline: the confidence threshold declines it (saying which two it could not choose
    between), and a lower threshold tried from the benchmark's command line still answers."""
    said = set(cue.lower().split())
    for column in measure_columns(b.lex, table):
        if column.lower() in said:
            b.doubts.append(
                (
                    CUE_IS_COLUMN,
                    f"it could not tell whether '{cue}' counts {name_words(table)} or adds up their "
                    f"{column} column",
                )
            )


def _counted_by_group(q: _Query, tree: Question, slots: _Slots, of: Callable[[Mention], Sense]) -> None:
    """'how many per affiliation': a count that names no rows counts the rows of the table whose
    column it is grouped by (the one grouping, said as a column)."""
    if q.target is not None or tree.ask != "count" or slots.thing or len(slots.groups) != 1:
        return
    if any(m.of is not None or m.func != "count" for m in tree.measures):
        return
    said = [of(m) for m in slots.groups[0][1]]
    if len(said) == 1 and said[0].kind == "column":
        q.target = said[0].table
        q.tables.append(q.target)


def _listed_columns_table(q: _Query, tree: Question, slots: _Slots, of: Callable[[Mention], Sense]) -> None:
    """'company names and sales': columns listed with nothing else said are the rows of the one
    table they are all columns of."""
    if q.target is not None or tree.ask != "list" or slots.thing or tree.conditions or tree.windows:
        return
    said = [of(m) for ms in slots.shown for m in ms]
    tables = {s.table.lower(): s.table for s in said}
    if said and all(s.kind == "column" for s in said) and len(tables) == 1:
        q.target = next(iter(tables.values()))
        q.tables.append(q.target)


def _share(q: _Query) -> Measure:
    """The rows a share is of, counted; the rows counted above the line must be said — a share
    of rows that meet nothing ('what % of payments declined', the verb read as no value) is
    100 %, no answer."""
    if q.target is None:
        raise Decline("it could not tell what the share is of")
    if not q.predicate:
        raise Decline("it could not tell which rows the share counts")
    return Measure("COUNT", q.target, words="share of " + name_words(q.target))


def _measure(b: _Binder, q: _Query, asked: Asked, named: list[Sense], thing_column: Ref | None) -> Measure:
    lex = b.lex
    if asked.func == "share":
        return _share(q)
    if asked.func == "ratio" and asked.over is not None:
        top = _measure(b, q, replace(asked, func="sum"), named, thing_column)
        bottom = _measure(b, q, asked.over, [], None)
        q.ratio = (top, bottom)
        return top
    func = _FUNCS.get(asked.func)
    if func is None:
        raise Decline(f"it asks for a {asked.func}, which keyword mode does not compute")
    words = asked.of.text if asked.of else ""
    if asked.hint == "date" and asked.of is None and q.target is not None:  # 'when did … last pay'
        date = _fact_date(b, q.target, "when")
        q.tables.append(date.table)
        return Measure(func, date.table, date.column, words="date")  # type: ignore[arg-type]
    s = named[-1] if named else None
    for other in named[:-1]:  # 'payment amount': whose; 'connect time' as connections + time_zone: no
        if other.kind != "table" or s is None or not linked(lex, other.table, s.table):
            raise Decline(f"it could not tell which one thing '{words}' names", [words])
    if func == "COUNT":
        counted = s.table if s is not None and s.kind == "table" else q.target if s is None else None
        if counted is not None and thing_column is None:
            _cue_not_column(b, counted, asked.hint)
        if s is None and thing_column is not None:
            return _count_column(lex, thing_column, asked, words)
        if s is None:
            if q.target is None:
                raise Decline("it could not tell what to count")
            return Measure("COUNT", q.target, words=words or name_words(q.target))
        if s.kind == "table":
            q.tables.append(s.table)
            return Measure("COUNT", s.table, words=words)
        return _count_column(lex, Ref(s.table, s.column or ""), asked, words)
    if s is None and thing_column is not None:
        s = Sense("column", thing_column.table, thing_column.column)
    if s is None:
        table = q.target
        if table is None:
            raise Decline(f"it could not tell what '{asked.hint or asked.func}' is of")
        ref = _implied(lex, table, asked.hint) if asked.hint else None
        if ref is None and asked.hint:
            ref = _named_amount(lex, table, asked.hint)
            q.tables += [ref.table] if ref is not None else []
        if ref is None:
            column = money_column(lex, table) if asked.hint else None
            only = measure_columns(lex, table)
            column = column or (only[0] if len(only) == 1 else None)
            if column is None:
                raise Decline(f"it could not tell which number of {name_words(table)} to {asked.func}")
            ref = Ref(table, column)
        return Measure(func, ref.table, ref.column, words=asked.hint)  # type: ignore[arg-type]
    if s.kind == "table" and asked.counted:  # 'the average number of payments (per month)'
        said = {"avg": "average", "sum": "total", "max": "highest", "min": "lowest"}.get(asked.func, "")
        raise Decline(f"it asks for the {said} number of {words}, a figure over counts it does not compute")
    if s.kind == "table" and asked.func in ("max", "min") and asked.hint:
        raise Decline(f"'{asked.hint} {words}' names rows, not a figure", [words])  # 'the longest track'
    if s.kind == "table":  # 'total payments': the payments' amount; 'revenue': its payment's amount
        ref = amount_of(lex, s.table)
        if ref is None:
            raise Decline(f"it could not tell which number of {name_words(s.table)} to {asked.func}", [words])
        q.tables += [s.table, ref.table]
        return Measure(func, ref.table, ref.column, words=words)  # type: ignore[arg-type]
    ref = Ref(s.table, s.column or "")
    kind = column_kind(lex, ref.table, ref.column)
    if asked.hint and asked.func in ("max", "min") and kind == "text":
        raise Decline(f"'{asked.hint} {words}' ranks rows, it is no figure", [words])  # 'most expensive item'
    if asked.hint in AGES_HIGH | AGES_LOW and kind in NUMERIC:
        func = "MAX" if asked.hint in AGES_HIGH else "MIN"  # 'the age of the oldest student'
    if kind not in NUMERIC and not (func in ("MIN", "MAX") and kind in (*TEMPORAL, "text")):
        raise Decline(f"it could not {asked.func} {name_words(ref.column)}, which is not a number", [words])
    if func in ("SUM", "AVG") and (is_key(lex, ref) or pointed_at(lex, ref) is not None):
        raise Decline(f"it would add up {ref.column}, which identifies rows", [words])
    q.tables.append(ref.table)
    return Measure(func, ref.table, ref.column, words=words)  # type: ignore[arg-type]


def _own_figure(lex: Lexicon, q: _Query, asked: Asked, m: Measure) -> Measure:
    """A highest or lowest figure said of a thing ('the most CPU any pool is using', 'how much CPU
    the busiest pool uses') is the thing's own figure or its rows' (a table below it): a column of
    another table the words also name (the hosts' cores) would answer another question."""
    if not (asked.hint and asked.func in ("max", "min") and q.target and m.column):
        return m
    if m.table.lower() == q.target.lower() or m.table in _below(lex, q.target, 3):
        return m
    words = asked.of.text if asked.of else asked.hint
    raise Decline(f"it could not tell which figure of {name_words(q.target)} '{words}' is", [words])


def amount_of(lex: Lexicon, table: str) -> Ref | None:
    """The amount a row of `table` stands for: its money column or its only number; else the money
    of the one row it belongs to (an income line's payment amount), or of the one table of its
    parts named after it (a payment's payment_amount)."""
    column = money_column(lex, table)
    only = measure_columns(lex, table)
    column = column or (only[0] if len(only) == 1 else None)
    if column is not None:
        return Ref(table, column)
    if only:
        return None
    parts_ = [
        Ref(t, c)
        for t in _below(lex, table, 1)
        if name_words(table) in name_words(t) and (c := money_column(lex, t))
    ]
    if len(parts_) == 1:
        return parts_[0]
    for level in parent_levels(lex, table):
        found = [Ref(t, c) for t in level if (c := money_column(lex, t))]
        return found[0] if len(found) == 1 else None
    return None


def _below(lex: Lexicon, table: str, depth: int = 2) -> list[str]:
    """The tables whose rows belong to a row of `table`, `depth` hops down (payment, then its amounts)."""
    found: list[str] = []
    frontier = [table.lower()]
    for _ in range(depth):
        frontier = [
            e.table
            for e in lex.db.graph.edges
            if e.ref_table.lower() in frontier and e.ref_unique and e.table.lower() != table.lower()
        ]
        found += [t for t in frontier if t not in found]
        frontier = [t.lower() for t in frontier]
    return found


def _says_table(hint: str, table: str) -> bool:
    """A word of the hint implies a word of the table's name ('paid' → payment_amount)."""
    words = {c for w in hint.split() for c in WORDS.implied.get(w, ())}
    return bool(words & set(name_words(table).split()))


def _count_column(lex: Lexicon, ref: Ref, asked: Asked, words: str) -> Measure:
    """'how many different majors': the different values; 'how many points' where points is a
    number of each row: their total."""
    if asked.distinct:
        return Measure("COUNT", ref.table, ref.column, distinct=True, words=words)
    kind = column_kind(lex, ref.table, ref.column)
    asked_total = asked.hint in ("how many", "total number of", "how mnay")
    plain = kind in NUMERIC and not is_key(lex, ref) and pointed_at(lex, ref) is None
    if plain and set(split_identifier(ref.column)) & WORDS.sets["counts"]:
        return Measure("SUM", ref.table, ref.column, words=words)  # 'number of citations': citation_num
    if (
        asked_total
        and kind in NUMERIC
        and not is_key(lex, ref)
        and pointed_at(lex, ref) is None
        and words.lower().endswith("s")
    ):
        return Measure("SUM", ref.table, ref.column, words=words)  # 'how many points': their total
    if [k.lower() for k in lex.key_of(ref.table)] == [ref.column.lower()] and pointed_at(lex, ref) is None:
        # 'how many stations' read as gas_station.station_id, the one key of its table: each row
        # holds its own, so its rows are counted
        return Measure("COUNT", ref.table, words=words)
    raise Decline(f"it could not tell whether 'how many {words}' counts rows or different {words}", [words])


# -- periods -------------------------------------------------------------------------------------


def span(value: Value, today: dt.date) -> tuple[dt.date | None, dt.date | None]:
    """[start, end) of a time value; a period counts back from `today` ('last 30 days': no end)."""
    fixed = days(value)
    if fixed is not None:
        return fixed
    if value.kind != "period":
        return None, None
    unit, offset, length = value.value
    if length == 0:
        return _shift(today, unit, offset), None
    start = _shift(_unit_start(today, unit), unit, offset)
    return start, _shift(start, unit, length)


def _shift(d: dt.date, unit: str, n: int) -> dt.date:
    steps = {"day": relativedelta(days=n), "week": relativedelta(weeks=n), "month": relativedelta(months=n)}
    return d + steps.get(unit, relativedelta(months=3 * n) if unit == "quarter" else relativedelta(years=n))


def _unit_start(d: dt.date, unit: str) -> dt.date:
    if unit == "week":
        return d - dt.timedelta(days=d.weekday())
    if unit == "month":
        return d.replace(day=1)
    if unit == "quarter":
        return dt.date(d.year, 3 * ((d.month - 1) // 3) + 1, 1)
    return dt.date(d.year, 1, 1) if unit == "year" else d


def _date_column(b: _Binder, q: _Query, words: str, named: list[Sense], year: bool) -> Ref:
    """The date a period restricts: the one named, the one a time bucket groups by, a year column
    of the fact for a year, else the fact's own date (or its parent's), the words picking one of
    several — never a guess."""
    lex = b.lex
    # a verb that names a key ('surcharges were charged': a charge's id) says no date
    dated = [s for s in named if s.kind == "column" and s.column and not _id_like(s)]
    if dated:
        return Ref(dated[0].table, dated[0].column or "")
    if q.thing_date is not None:
        return q.thing_date
    buckets = [g for g in q.groups if g.bucket and g.column]
    if buckets:
        return buckets[0].raw
    tables = [t for t in [_fact(q), *(s.table for s in named), q.target] if t]
    for table in dict.fromkeys(tables):
        t = lex.table(table)
        if t is None:
            continue
        years = [
            c.name
            for c in t.columns
            if c.kind in NUMERIC and c.name.lower() in ("year", "yr", f"{table.lower()}_year")
        ]
        if year and len(years) == 1:
            return Ref(table, years[0])
        try:
            return _fact_date(b, table, words)
        except Decline:
            continue
    raise Decline(f"it found no date to compare with '{words}'", [words])


def _own_dates(lex: Lexicon, table: str) -> list[Ref]:
    t = lex.table(table)
    return (
        [Ref(t.name, c.name) for c in t.columns if column_kind(lex, t.name, c.name) in TEMPORAL] if t else []
    )


def _pick_date(b: _Binder, dates: list[Ref], words: str) -> Ref:
    """One of several dates: the only one, the one the person chose before, or the one the
    question's other words name ('signed up' → signup_date)."""
    if len(dates) == 1:
        return dates[0]
    for r in b.pinned:
        hit = next((d for d in dates if (d.table, d.column) == (r.table, r.column)), None)
        if hit is not None and fold(r.words) == fold(words):
            return hit
    said = [t.low for t in b.reading.tokens]
    tree = b.reading.tree
    # what happened to the rows, said alone or with the period ('that signed up in 2022')
    verbs = [p.text for p in (tree.verbs if tree else ())]
    verbs += [w.subject.text for w in (tree.windows if tree else ()) if w.subject is not None]
    spelled = [
        d
        for d in dates
        if any(
            s.kind == "column" and (s.table, s.column) == (d.table, d.column) and s.score >= 0.8
            for v in verbs
            for s in b.lex.schema(v)
        )
    ]
    if len(spelled) == 1:  # 'signed up' → signup_date (its synonym 'sign-up date')
        return spelled[0]
    evented = _events_dated(b.lex, dates, said)
    if len(evented) == 1:  # 'registrations per month' → signup_date (its synonym 'registration date')
        return evented[0]
    if set(said) & WORDS.sets["recent"]:  # 'new clients': by the date they began
        began = [d for d in dates if set(split_identifier(d.column)) & WORDS.sets["starts"]]
        if len(began) == 1:
            return began[0]
    named_by = [d for d in dates if any(names_date(w, d) for w in said)]
    content = [w for w in said if w not in WORDS.sets["stop"]]  # 'that' is no spelling of 'birth date'
    if len(named_by) == 1:
        b.notes.append(f"the date is {named_by[0].table} {name_words(named_by[0].column)}")
        return named_by[0]
    scores = sorted(
        (
            (
                max(
                    (similarity(w, fold(d.column.replace("_", " "))) for w in content if len(w) > 3),
                    default=0.0,
                ),
                d,
            )
            for d in dates
        ),
        key=lambda x: -x[0],
    )
    if scores[0][0] >= 0.6 and scores[0][0] - scores[1][0] >= 0.2:
        b.notes.append(f"the date is {scores[0][1].table} {name_words(scores[0][1].column)}")
        return scores[0][1]
    from core.keyword.plan import AmbiguousDate

    raise AmbiguousDate(words, dates)


def _events_dated(lex: Lexicon, dates: list[Ref], said: Sequence[str]) -> list[Ref]:
    """The dates the question's nouns of an event name as '<event> date' ('registrations',
    'onboardings': a date whose name or synonym is 'registration date', 'onboarding date')."""
    events = {singular(w) for w in said if w not in WORDS.sets["stop"] and len(w) > 3}
    found = []
    for d in dates:
        if any(
            s.kind == "column" and (s.table, s.column) == (d.table, d.column) and s.score >= 0.95
            for e in events
            for s in lex.schema(f"{e} date")
        ):
            found.append(d)
    return found


def _months_between(w: Window) -> Window:
    """'between July and September 2025': the first month is of the year said with the last
    (of the year before when it comes later in the calendar: 'between November and February
    2025'); a range of whole months that is exactly one quarter or one year is that period, as
    'in Q3 2025' is."""
    lo, up = w.value, w.upper
    if up is None or lo.kind != "month" or up.kind != "month" or up.value[0] is None:
        return w
    if lo.value[0] is None:
        year = up.value[0] if lo.value[1] <= up.value[1] else up.value[0] - 1
        lo = replace(lo, value=(year, lo.value[1]))
    (y0, m0), (y1, m1) = lo.value, up.value
    text = f"{lo.text} and {up.text}"
    if y0 == y1 and m0 == 1 and m1 == 12:
        return replace(w, value=Value("year", y0, lo.start, up.end, text), upper=None)
    if y0 == y1 and m0 % 3 == 1 and m1 == m0 + 2:
        return replace(w, value=Value("quarter", (y0, m1 // 3), lo.start, up.end, text), upper=None)
    return replace(w, value=lo)


def _window(b: _Binder, q: _Query, w: Window, named: list[Sense]) -> None:
    lex = b.lex
    if w.prep == "between":
        w = _months_between(w)
    years = w.value.kind == "year" and (w.upper is None or w.upper.kind == "year")
    try:
        ref = _date_column(b, q, w.value.text, named, years)
    except Decline:
        if _year_and_month(b, q, w):
            return
        raise
    q.periods.append((ref, w.value))
    words = f"{w.prep} {w.value.text}" + (f" and {w.upper.text}" if w.upper else "")
    if w.prep == "until":
        words = f"{w.value.text} or earlier"  # 'until' alone would leave out the period said
    q.tables.append(ref.table)
    if column_kind(lex, ref.table, ref.column) in NUMERIC:
        if not years:
            raise Decline(
                f"it could not compare '{w.value.text}' with the number {ref.column}", [w.value.text]
            )
        ops = {
            "in": ("=",),
            "before": ("<",),
            "after": (">",),
            "since": (">=",),
            "until": ("<=",),
            "between": (">=", "<="),
            "on": ("=",),
        }
        vals = (w.value.value, w.upper.value if w.upper else None)
        q.filters += [Filter(ref, op, v, words) for op, v in zip(ops.get(w.prep, ("=",)), vals, strict=False)]  # type: ignore[arg-type]
        dated = _own_dates(lex, ref.table)
        if len(dated) == 1 and dated[0] not in q.compared:  # rows of a season, listed with their date
            q.compared.append(dated[0])
        elif not dated and ref not in q.compared:  # 'campuses founded before 1900': with their year
            q.compared.append(ref)
        return
    lo, hi = span(w.value, b.today)
    if w.upper is not None:
        hi = span(w.upper, b.today)[1]
    if lo is None and hi is None:
        raise Decline(f"it could not tell which year '{w.value.text}' is in", [w.value.text])
    if w.prep == "before":
        lo, hi = None, lo
    elif w.prep == "after":
        lo, hi = hi if w.value.kind != "period" else lo, None
    elif w.prep == "since":  # 'since 2024', '2024 or later': from the start of the period said
        hi = None
    elif w.prep == "until":  # '2024 or earlier': to the end of the period said
        lo = None
    q.filters.append(Filter(ref, "range", (lo, hi), words))
    if ref not in q.compared:  # listed rows of a period differ in their dates
        q.compared.append(ref)


def _year_and_month(b: _Binder, q: _Query, w: Window) -> bool:
    """'in April 2021' on rows that keep no date but a year number and a month name (review.year,
    review.month = 'April'): both compared, when the table has exactly one of each. Whether it
    applied."""
    if w.value.kind != "month" or w.prep != "in" or w.upper is not None or w.value.value[0] is None:
        return False
    year, month = w.value.value
    for table in dict.fromkeys(t for t in (_fact(q), q.target) if t):
        t = b.lex.table(table)
        if t is None:
            continue
        years = [c.name for c in t.columns if c.kind in NUMERIC and c.name.lower() == "year"]
        months = [
            c.name
            for c in t.columns
            if column_kind(b.lex, table, c.name) == "text" and _month_names(b.lex, Ref(table, c.name))
        ]
        if len(years) == 1 and len(months) == 1:
            words = f"in {w.value.text}"
            q.filters += [
                Filter(Ref(table, years[0]), "=", year, words),
                Filter(Ref(table, months[0]), "=", MONTH_NAMES[month - 1], words),
            ]
            q.tables.append(table)
            return True
    return False


def _month_names(lex: Lexicon, ref: Ref) -> bool:
    """The text column stores month names ('April'), as the value index finds them."""
    return sum(any(_stores(s, ref) for s in lex.values(n)) for n in MONTH_NAMES[:4]) >= 2


# -- order and output ----------------------------------------------------------------------------

TEMPORAL_HINTS = {
    "earliest": False,
    "first": False,
    "oldest": False,
    "latest": True,
    "newest": True,
    "most recent": True,
    "last": True,
}


def _order(
    b: _Binder, q: _Query, tree: Question, slots: _Slots, measures: dict[int, list[Sense]], of: object
) -> None:
    lex = b.lex
    order = tree.order
    assert order is not None
    target = q.target or (q.measures[0].table if q.measures else None)
    q.limit = tree.limit or None
    if target is None and q.groups and isinstance(order.key, Phrase):  # 'which month had the most payments'
        s = [of(m) for m in slots.order][-1]  # type: ignore[operator]
        m = (
            Measure("COUNT", s.table, words=order.key.text)
            if s.kind == "table"
            else _ranked_by(lex, Ref(s.table, s.column or ""), order.key.text)
        )
        if m is None:
            raise Decline(f"it could not rank by {order.key.text}", [order.key.text])
        q.ties, q.target = order.ties, s.table
        q.order.append(OrderKey(m, order.desc, order.key.text))
        q.measures.append(m)
        q.tables.append(s.table)
        return
    if target is None:
        raise Decline("it could not tell what is ranked")
    q.ties = order.ties
    key = order.key
    again = (
        isinstance(key, Asked) and key in tree.measures and bool(q.groups)
    )  # 'sorted from fewest cards to most'
    if tree.ask == "measure" and not (isinstance(key, Phrase) and q.groups) and not again:
        return  # 'the age of the oldest student': the measure is the answer
    if key is None and order.hint in ("alpha", "dir"):
        q.sort = (order.hint, order.desc)  # 'ordered alphabetically': by what the answer shows
        return
    if isinstance(key, Asked):
        if key.of is None and key.func != "count":
            m = _measure(b, q, key, [], None)
        else:
            m = _measure(b, q, key, measures.get(id(key), []), None)
        own = stored_count(lex, m)
        if key.func == "count" and not own.column and key.of is not None:
            spelled = [
                c
                for c in measure_columns(lex, target)
                if name_words(c) == f"number of {name_words(key.of.text)}"
            ]
            if len(spelled) == 1:  # 'the largest number of hosts' of a party with a number_of_hosts
                own = Measure("SUM", target, spelled[0])
        listed = tree.only_shown or (tree.ask == "list" and not tree.measures)  # 'sorted by number of hosts'
        if key.func == "count" and own.column and own.table.lower() == target.lower() and listed:
            # 'the highest number of citations' of a publication with a citation_num: its own
            # number, no count of rows, not shown when what to show is said ('the title of …')
            q.order.append(OrderKey(Ref(own.table, own.column), order.desc))
            return
        same = [
            x
            for x in q.measures
            if (x.func, x.table, x.column, x.distinct) == (m.func, m.table, m.column, m.distinct)
        ]
        if again and same:  # the figure asked for, said again to order by: not computed twice
            q.order.append(OrderKey(same[0], order.desc, key.of.text if key.of else key.hint))
            return
        q.order.append(OrderKey(m, order.desc, key.of.text if key.of else key.hint))
        q.measures.append(m)
        return
    if isinstance(key, Phrase):
        _order_by_phrase(b, q, tree, key, [of(m) for m in slots.order], target)  # type: ignore[operator]
        return
    ref = _implied_order(b, q, order)
    if ref.table.lower() == target.lower():
        _order_rows(q, ref, _direction(lex, ref, order))
        return
    m = ranking_measure(ref, order.hint)
    if ref.column in (money_column(lex, ref.table) or "",):
        m = Measure("SUM", ref.table, ref.column, words=order.hint)
    q.tables.append(ref.table)
    q.order.append(OrderKey(m, order.desc, order.hint))
    q.measures.append(m)


def _order_by_phrase(
    b: _Binder, q: _Query, tree: Question, key: Phrase, said: list[Sense], target: str
) -> None:
    """A ranking by what a phrase names: the thing's own rows ('the fewest members'), another
    table's rows counted or their amounts added up, a column of the rows, or a figure of another
    table's column per row ranked."""
    lex = b.lex
    order = tree.order
    assert order is not None
    rows_only = all(b.reading.tokens[k].low in ROW_NOUNS for k in range(key.start, key.end))
    if rows_only:  # 'the fewest members': the thing's own rows
        m = Measure("COUNT", _row_table(q), words=key.text)
    else:
        s = _owned_column(said)
        if s.kind == "table" and set(key.text.lower().split()) & WORDS.sets["key_words"]:
            raise Decline(f"'{key.text}' names the rows' identifier, not a number of them", [key.text])
        if s.kind == "table" and s.table.lower() != target.lower():
            spoken = {
                w
                for p in (key, *tree.verbs, *(w.subject for w in tree.windows if w.subject))
                if p
                for w in p.text.lower().split()
            }
            amount = amount_of(lex, s.table) if spoken & (MONEY_WORDS | MONEY_HINTS) else None
            m = (
                Measure("SUM", amount.table, amount.column, words=key.text)
                if amount
                else Measure("COUNT", s.table, words=key.text)
            )
            q.tables += [s.table, *([amount.table] if amount else [])]
        elif s.kind == "column":
            ref = Ref(s.table, s.column or "")
            if ref in q.groups:  # '… per region, ordered by the region name'
                q.order.append(OrderKey(ref, order.desc))
                return
            if ref.table.lower() == target.lower() and not q.groups:
                _order_rows(q, ref, _direction(lex, ref, order))
                return
            if is_key(lex, ref) and any(g.table.lower() == ref.table.lower() for g in q.groups):
                raise Decline(
                    f"'{key.text}' identifies each {name_words(ref.table)}: no figure to rank by", [key.text]
                )
            ranked = _ranked_by(lex, ref, key.text)
            if ranked is None:
                raise Decline(f"it could not rank {name_words(target)} by {key.text}", [key.text])
            m = ranked
            q.tables.append(ref.table)
        else:
            raise Decline(f"it could not rank {name_words(target)} by {key.text}", [key.text])
    q.order.append(OrderKey(m, order.desc, key.text))
    q.measures.append(m)


def _owned_column(said: Sequence[Sense]) -> Sense:
    """What a ranking key names: its last part, but a table said after one of its own columns
    names the column's rows, not a count of them ('by CPU-hour consumption': the usage's CPU
    hours added up, not the number of usage rows)."""
    s = said[-1]
    if s.kind != "table":
        return s
    own = [x for x in said[:-1] if x.kind == "column" and x.table.lower() == s.table.lower()]
    return own[-1] if own else s


def _ranked_by(lex: Lexicon, ref: Ref, words: str) -> Measure | None:
    """What ranks groups by another table's column: its numbers added up or averaged; but a
    column that identifies rows ('the most orders' read as order_id) is no amount — adding up ids
    ranks by an accident of numbering — so its rows are counted (the different ones it points
    at, for a pointer). None for a column that is neither a number nor an identifier."""
    if is_key(lex, ref) and len(lex.key_of(ref.table)) == 1:
        return Measure("COUNT", ref.table, words=words)
    if pointed_at(lex, ref) is not None or _id_name(ref.column):
        return Measure("COUNT", ref.table, ref.column, distinct=True, words=words)
    if column_kind(lex, ref.table, ref.column) not in NUMERIC:
        return None
    return ranking_measure(ref, words)


def _row_table(q: _Query) -> str:
    assert q.target is not None
    return q.target


def _direction(lex: Lexicon, ref: Ref, order: Order) -> bool:
    """Highest first when the words say so; in ages, the oldest have the lowest birth date."""
    aged = [w for w in order.hint.lower().split() if w in AGES_HIGH | AGES_LOW]
    kind = column_kind(lex, ref.table, ref.column)
    if aged and kind in NUMERIC:
        return aged[0] in AGES_HIGH
    if aged and kind in TEMPORAL:  # 'sorted by born, youngest first': the latest birth date first
        return aged[0] in AGES_LOW
    return order.desc


def _order_rows(q: _Query, ref: Ref, desc: bool) -> None:
    q.order.append(OrderKey(ref, desc))
    if ref not in q.compared:
        q.compared.append(ref)


def _implied_order(b: _Binder, q: _Query, order: Order) -> Ref:
    """What 'the shortest tracks', 'the oldest hosts', 'earn the most', 'spent the most' rank by."""
    lex = b.lex
    target = q.target
    assert target is not None
    hint = order.hint.lower()
    if any(hint.startswith(w) for w in TEMPORAL_HINTS) and not _implied(lex, target, hint):
        dates = _own_dates(lex, target)
        born = [d for d in dates if is_birth_date(d.column)]
        if hint.split()[0] in WORDS.sets["by_birth"] and len(born) == 1:
            return born[0]  # 'the oldest employee': the earliest birth date, not the hire date
        if dates:
            return _pick_date(b, dates, hint)
    ref = _implied(lex, target, hint)
    if ref is not None:
        return ref
    if set(hint.split()) & MONEY_HINTS:  # 'which customer spent the most': their invoices' totals
        money = list(dict.fromkeys(r for t in _below(lex, target) if (r := amount_of(lex, t)) is not None))
        named = [r for r in money if _says_table(hint, r.table)]  # 'paid' → payment_amount
        if len(named or money) == 1:
            return (named or money)[0]
    raise Decline(f"it could not tell what '{order.hint}' ranks {name_words(target)} by", [order.hint])


def _names_only(phrase: Phrase) -> bool:
    """'names', 'their name': what is shown is the label of what is listed or grouped."""
    return set(phrase.text.lower().split()) <= WORDS.sets["names_only"]


def _shown(lex: Lexicon, named: list[Sense], words: str = "") -> list[Ref]:
    """The columns to show for a phrase: a column; a table by its name; a column that points at
    another table's rows by that row's name ('the advisor of Linda Smith' is a person, not an id),
    unless the words ask for the id."""
    out: list[Ref] = []
    for s in named:
        pointed = pointed_at(lex, Ref(s.table, s.column or "")) if s.kind == "column" else None
        if pointed is not None and not set(words.lower().split()) & ID_WORDS and named_rows(lex, pointed):
            out += labels(lex, pointed)
        elif s.kind == "column":
            out.append(Ref(s.table, s.column or ""))
        elif s.kind == "table":
            out += [Ref(s.table, c) for c in label_columns(lex, s.table)]
    return out


FIRST_NAMES = WORDS.sets["first_names"]
LAST_NAMES = WORDS.sets["last_names"]


def labels(lex: Lexicon, table: str) -> list[Ref]:
    """The columns that name a row of `table` for a person: a first and a last name, else its
    name or title (core/keyword/columns.py `label_columns`)."""
    t = lex.table(table)
    if t is None:
        return []
    texts = [c.name for c in t.columns if c.kind == "text"]
    single = table.lower().replace("_", "").rstrip("s")

    def bare(name: str) -> str:
        low = name.lower().replace("_", "")
        return low[len(single) :] if low.startswith(single) and low != single else low

    first = [c for c in texts if bare(c) in FIRST_NAMES]
    last = [c for c in texts if bare(c) in LAST_NAMES]
    if first and last:
        return [Ref(t.name, first[0]), Ref(t.name, last[0])]
    return [Ref(t.name, c) for c in label_columns(lex, table)]


def named_rows(lex: Lexicon, table: str) -> bool:
    return named(lex, table)


def named(lex: Lexicon, table: str) -> bool:
    """Rows of `table` have a name (not only a number that identifies them)."""
    found = labels(lex, table)
    key = [k.lower() for k in lex.key_of(table)]
    if len(key) > 1 and [r.column.lower() for r in found] == key[:1]:
        return False  # a classroom is its building and room number together
    return bool(found) and all(
        column_kind(lex, r.table, r.column) == "text" or not _id_name(r.column) for r in found
    )


def _id_name(column: str) -> bool:
    low = column.lower()
    return low == "id" or low.endswith(("_id", "id", "_no", "number", "_key"))


def listed_columns(lex: Lexicon, table: str, everything: bool = False) -> list[Ref]:
    """What shows a row of `table` to a person: its name; listing every row, also its other
    unique names and codes (in the table's order). A row with no name is shown by its key (all of
    it when it has several columns) and its other unique texts; listing every such row, by all its
    columns but those that only point at other tables — never by its id alone."""
    t = lex.table(table)
    if t is None:
        return []
    unique = {u[0].lower() for u in t.unique if len(u) == 1}
    codes = [c.name for c in t.columns if c.kind == "text" and c.name.lower() in unique]
    if named(lex, table):
        shown = {r.column.lower() for r in labels(lex, table)}
        if everything:
            shown |= {c.lower() for c in codes if re.search(r"(code|name|title)$", c.lower())}
        return [Ref(t.name, c.name) for c in t.columns if c.name.lower() in shown]
    key = list(lex.key_of(table))
    if len(key) > 1 or (key and not _id_name(key[0])):
        return [Ref(t.name, c) for c in key]
    if everything:
        pointers = {
            c.lower() for e in lex.db.graph.edges if e.table.lower() == table.lower() for c in e.columns
        }
        return [Ref(t.name, c.name) for c in t.columns if c.name.lower() not in pointers]
    return [Ref(t.name, c) for c in dict.fromkeys([*key, *codes])]


def _output(b: _Binder, q: _Query, tree: Question, thing_column: Ref | None, shown: list[Ref]) -> None:
    """Groups or projection, and the default order."""
    lex = b.lex
    if q.row_ratio is not None:
        _row_ratio_output(lex, q, shown)
        return
    target = q.target
    aggregated = bool(q.measures)
    if q.having and target is not None:
        if tree.ask == "count" and not q.groups:  # 'how many clients have more than 10 payments'
            q.groups = [
                Ref(target, k) for k in (lex.key_of(target) or [r.column for r in labels(lex, target)])
            ]
            q.count_groups = name_words(target)
            q.measures = []
            return
        if tree.ask == "list" and not q.groups:
            # 'which clients have more than 20 payments', 'which cities have more than two
            # airports' (airport.city); a count they are only sorted by is not shown
            q.hidden = [m for m in q.measures if any(o.key == m for o in q.order)]
            if thing_column is not None:
                q.groups = [thing_column]
            else:
                _group_by_table(lex, q, target, name_words(target))
            return
    # 'list the party themes sorted by number of hosts': each thing's figure ranks the things, as
    # a ranking's does
    ranks = tree.ask == "rank" or (
        tree.ask == "list"
        and tree.order is not None
        and isinstance(tree.order.key, Asked)
        and not tree.measures
    )
    if tree.ask in ("count", "measure") or aggregated:
        if not q.measures:
            raise Decline("it names nothing to count or compute")
        for m in q.measures:
            if (
                m.func == "AVG"
                and target
                and m.table.lower() != target.lower()
                and not q.groups
                and not (ranks and tree.thing is not None)  # ranked: each one's average
                and _pointer(lex, m.table, target)
            ):
                # 'the average rating of businesses': over every review, or of each business's average?
                raise Decline(
                    f"it could not tell whether the average is over {name_words(m.table)} rows or per {name_words(target)}"
                )
        if ranks and tree.thing is not None:
            if _shown_ranked(lex, q, tree, shown):
                pass
            elif thing_column is not None:
                q.groups.insert(0, thing_column)
            elif target is not None and not any(r.table == target for r in q.groups):
                _group_by_table(lex, q, target, name_words(target))
        _key_shown_for_group(lex, q, shown)
        if q.groups and not q.order:
            first = q.groups[0]
            timely = bool(first.bucket) or column_kind(lex, first.table, first.column) in TEMPORAL
            q.order.append(OrderKey(first, False) if timely else OrderKey(q.measures[0], True))
        return
    if q.ratio is not None:
        q.measures = list(q.ratio)
        return
    if q.groups and target is not None and thing_column is None and not tree.shown:
        q.measures = [Measure("COUNT", target, words=name_words(target))]  # 'clients per segment'
        first = q.groups[0]
        timely = bool(first.bucket) or column_kind(lex, first.table, first.column) in TEMPORAL
        q.order.append(OrderKey(first, False) if timely else OrderKey(q.measures[0], True))
        return
    if q.groups:
        raise Decline("it groups by something but names nothing to count or compute per group")
    if target is None:
        raise Decline("it names nothing to list")
    _listed(b, q, tree, target, thing_column, shown)


def _key_shown_for_group(lex: Lexicon, q: _Query, shown: list[Ref]) -> None:
    """'for each customer, show the customer ID and the number of cards': the group's own key asked
    for stands for the group, and what is shown of it is what was asked — not its name columns
    beside. Only when the key is among what is shown (each group still one row of the table)."""
    if not shown or not q.groups or any(r.bucket for r in q.groups):
        return
    tables = {r.table.lower() for r in q.groups}
    if len(tables) != 1 or any(r.table.lower() not in tables for r in shown):
        return
    table = q.groups[0].table
    key = [k.lower() for k in lex.key_of(table)]
    if not key or not set(key) <= {r.column.lower() for r in shown}:
        return
    q.groups = list(dict.fromkeys(shown))


def _shown_ranked(lex: Lexicon, q: _Query, tree: Question, shown: list[Ref]) -> bool:
    """'the latitude and longitude of the business with the highest rating': one row ranked by a
    figure of its rows (its reviews' average), showing only the columns asked for — grouped by
    them and by the row's key, the figure only ordering the rows. Whether it applied."""
    target = q.target
    if not (tree.only_shown and shown and target and tree.limit and not q.ties):
        return False
    if any(r.table.lower() != target.lower() for r in shown):
        return False
    for r in shown:
        q.groups.append(r)
        q.names[r] = name_words(target)
    q.hidden = [o.key for o in q.order if isinstance(o.key, Measure)]
    q.tables.append(target)
    return True


def _ratio(b: _Binder, q: _Query, top: Asked, over: Asked, named: dict[int, list[Sense]]) -> None:
    """'the ratio of A to B': two numbers of one row said with no aggregate are divided row by
    row (q.row_ratio); any other pair is a ratio of two aggregates (q.ratio: a side that names
    rows counts them, one that names a column adds it up), which the query carries for the
    verified-answer matcher and keyword mode does not compute (Bound.computable)."""
    said_top, said_over = named.get(id(top), []), named.get(id(over), [])
    if top.func == over.func == "value":
        row = _row_ratio(b.lex, said_top, said_over)
        if row is not None:
            q.row_ratio, q.target = row, row[0].table
            q.tables.append(row[0].table)
            return
    sides = []
    for side, said in ((top, said_top), (over, said_over)):
        func = side.func
        if func == "value":
            func = "count" if said and said[-1].kind == "table" else "sum"
        sides.append(_measure(b, q, replace(side, func=func), said, None))
    q.ratio = (sides[0], sides[1])
    q.measures.append(sides[0])


def _row_ratio(lex: Lexicon, top: list[Sense], over: list[Sense]) -> tuple[Ref, Ref] | None:
    """The two numeric columns of one table the sides name, each side naming one column (words
    before it may only name that table: 'aircraft capacity'); None otherwise."""
    refs: list[Ref] = []
    for said in (top, over):
        if not said or said[-1].kind != "column" or not said[-1].column:
            return None
        s = said[-1]
        if any(o.kind != "table" or o.table.lower() != s.table.lower() for o in said[:-1]):
            return None
        if column_kind(lex, s.table, s.column or "") not in NUMERIC:
            return None
        refs.append(Ref(s.table, s.column or ""))
    if refs[0].table.lower() != refs[1].table.lower() or refs[0] == refs[1]:
        return None
    return refs[0], refs[1]


def _row_ratio_output(lex: Lexicon, q: _Query, shown: list[Ref]) -> None:
    """A row-by-row ratio lists each row with it: 'for each course ID' names the rows (a column
    of the ratio's own table, shown beside it); with no such words, the rows' label columns. A
    grouping by another table's column would ask for a ratio per group, not per row: declined."""
    assert q.row_ratio is not None
    table = q.row_ratio[0].table
    if q.measures or q.having or any(g.table.lower() != table.lower() or g.bucket for g in q.groups):
        raise Decline("it asks for a ratio per group, which keyword mode does not compute")
    said = [*q.groups, *(r for r in shown if r.table.lower() == table.lower())]
    q.projection = list(dict.fromkeys(said or labels(lex, table)))
    q.groups = []


def _listed(
    b: _Binder, q: _Query, tree: Question, target: str, thing_column: Ref | None, shown: list[Ref]
) -> None:
    """The columns a listing shows: what was asked for, what names the rows (never their id
    alone), and what they were compared or ranked by; each row once when a join could repeat it."""
    lex = b.lex
    if thing_column is not None:
        # 'what type of document is …': the thing is only whose column is asked for
        lead: list[Ref] = [] if tree.only_shown and shown else [thing_column]
        # 'the different region names, sorted by label': each name once, the label only places it
        ordered = [] if tree.distinct else [o.key for o in q.order if isinstance(o.key, Ref)]
        q.projection = list(dict.fromkeys([*lead, *shown, *ordered]))
        q.distinct = tree.distinct or not is_key(lex, q.projection[0])
        return
    everything = not (q.filters or q.absent or q.order or shown)
    if tree.shown and not tree.thing:
        q.projection = shown
    elif tree.only_shown:
        # 'the names of the restaurants in Los Angeles with a rating over 4', 'the names of the 3
        # oldest': what was asked, only — not what the rows were compared or ranked by
        q.projection = list(dict.fromkeys(shown))
    else:
        q.projection = list(dict.fromkeys([*listed_columns(lex, target, everything), *shown, *q.compared]))
    children = {e.table.lower() for e in lex.db.graph.edges if e.ref_table.lower() == target.lower()}
    used = [*q.tables, *(f.ref.table for f in q.filters)]
    through = any(t.lower() in children for t in used)  # 'courses that have a final exam': each once
    q.distinct = q.distinct or tree.distinct or through


def _fact_date(b: _Binder, table: str, words: str) -> Ref:
    """The date of a fact's rows: its own, else the row it belongs to (a payment line's payment)."""
    dates = _own_dates(b.lex, table)
    for level in parent_levels(b.lex, table) if not dates else ():
        dates = [d for t in level for d in _own_dates(b.lex, t)]
        if dates:
            break
    if not dates:
        raise Decline(f"it found no date of {name_words(table)} to group by", [words])
    return _pick_date(b, dates, words)


def stored_count(lex: Lexicon, m: Measure) -> Measure:
    """A count of rows whose table stores the count itself ('how many faculty' where each row of
    faculty holds a number Faculty; 'the most degrees' where degrees holds Degrees): the column
    added up, not the rows counted — each row is a tally, and counting them answers 'how many
    rows', a wrong number said with confidence. The column is the one number of the table (not
    its key, not a pointer) spelled as the words counted or as the table's own name."""
    if m.func != "COUNT" or m.column:
        return m
    said = {name_words(m.table), name_words(m.words)} - {""}
    stored = [c for c in measure_columns(lex, m.table) if name_words(c) in said]
    if len(stored) != 1:
        return m
    return Measure("SUM", m.table, stored[0], words=m.words or name_words(m.table))


def _stored_counts(lex: Lexicon, q: _Query) -> None:
    """Every count of the query (shown, ranked by, compared) read through `stored_count`."""
    q.measures = [stored_count(lex, m) for m in q.measures]
    q.hidden = [stored_count(lex, m) for m in q.hidden]
    q.order = [replace(o, key=stored_count(lex, o.key)) if isinstance(o.key, Measure) else o for o in q.order]
    q.having = [replace(h, measure=stored_count(lex, h.measure)) for h in q.having]


def _finished(b: _Binder, q: _Query) -> Query:
    lex = b.lex
    _stored_counts(lex, q)
    groups = []
    for g in q.groups:
        if g.bucket and not g.column:  # 'per month': the fact's own date
            fact = _fact(q)
            if fact is None:
                raise Decline(f"it groups by {g.bucket} but names nothing to count per {g.bucket}")
            fact_table = lex.table(fact)
            years = [
                c.name
                for c in (fact_table.columns if fact_table is not None else ())
                if c.name.lower() == g.bucket and column_kind(lex, fact, c.name) not in TEMPORAL
            ]
            if years:
                g = Ref(fact, years[0])
            else:
                date = _fact_date(b, fact, f"per {g.bucket}")
                g = Ref(date.table, date.column, g.bucket)
        groups.append(g)
    refs = [*groups, *q.projection, *(f.ref for f in q.filters)]
    tables = [
        q.target or "",
        *(m.table for m in q.measures),
        *(r.table for r in refs),
        *q.tables,
        *(a.key.table for a in q.absent),
    ]
    tables = [t for t in dict.fromkeys(t for t in tables if t)]
    order = [
        OrderKey(groups[0], o.desc) if isinstance(o.key, Ref) and o.key.bucket and not o.key.column else o
        for o in q.order
    ]
    return Query(
        target=q.target,
        measures=tuple(dict.fromkeys(q.measures)),
        groups=tuple(dict.fromkeys(groups)),
        projection=tuple(q.projection),
        filters=tuple(q.filters),
        order=tuple(order),
        limit=q.limit,
        distinct=q.distinct,
        tables=tuple(tables),
        names=frozen_map(q.names),
        absent=tuple(q.absent),
        ties=q.ties,
        ratio=q.row_ratio,
        having=tuple(q.having),
        count_groups=q.count_groups,
        hidden=tuple(q.hidden),
        calendar=frozen_map(_calendar(lex, order, groups)),
    )


def _calendar(lex: Lexicon, order: Sequence[OrderKey], groups: Sequence[Ref]) -> dict[Ref, str]:
    """The text columns of month or weekday names the answer is ordered by, with which names they
    hold: 'reviews per month of 2021, ordered by the month' on a month column that stores 'April'
    is in calendar order, not alphabetical ('April' before 'August' only by accident)."""
    found: dict[Ref, str] = {}
    for o in order:
        if not isinstance(o.key, Ref) or o.key.bucket or o.key not in groups:
            continue
        if column_kind(lex, o.key.table, o.key.column) != "text":
            continue
        for kind, names in (("month", MONTH_NAMES), ("weekday", WEEKDAY_NAMES)):
            stored = [n for n in names[:4] if any(_stores(s, o.key) for s in lex.values(n))]
            if len(stored) >= 2:
                found[o.key] = kind
                break
    return found


def _stores(s: Sense, ref: Ref) -> bool:
    return s.table == ref.table and s.column == ref.column and s.via == "value"
