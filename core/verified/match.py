"""Does a new question ask what a verified question asked, with other values? (no LLM, no SQL run)

Both questions are read by keyword mode's grammar and bound to the schema the same way
(core/keyword/grammar.py, core/keyword/bind.py): typos of common words (the lexicon's spellings,
and any word one slip away from exactly one lexicon word, mended first: core/verified/typos.py),
the catalog's synonyms, 'Q4 2024' and 'the fourth quarter of 2024', 'data centres' and 'per DC'
read alike. What each asks
is then a set of facts — which measure over which rows (a share's numerator and denominator, a
ratio's two figures, each in its place), the filters, the grouping, the period and its grain, the
order and the limit. The verified question's parameters are slots in its facts; a new question
is answered from it only when its facts are the same, slot for slot, and every value it puts in
a slot is of the slot's kind. Equality, not similarity: a missing or extra fact ("active",
"per city", "not", "average", a ratio turned round) makes another question. Similar questions
are still useful to the SQL writer, so they come back as near matches (few-shot examples).

A match is confident only when every value it fills names a stored value surely and the
question fits exactly one verified SQL. Anything less is a near match.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rapidfuzz import fuzz

from core.dictionary import stem
from core.keyword.bind import Ambiguous, Bound, SchemaNames, bind, labels
from core.keyword.grammar import Reading, Token, read
from core.keyword.match import Lexicon as KeywordLexicon
from core.keyword.match import lexicon as keyword_lexicon
from core.keyword.plan import AmbiguousDate, Decline, Filter, Measure, Ref
from core.keyword.tree import Measure as TreeMeasure
from core.keyword.tree import Order, Phrase, Question, Value
from core.normalize import normalize_question
from core.verified.lexicon import DatabaseLexicon as Lexicon
from core.verified.params import CONFIDENT, plural_of, surely
from core.verified.partial import reread
from core.verified.partial import said as partial_said
from core.verified.query import Param, VerifiedQuery
from core.verified.reading import Span
from core.verified.substitute import Binding, SubstitutionError, substitute
from core.verified.typos import mend

log = logging.getLogger(__name__)
NEAR_TEXT = 70.0  # token-set similarity of the normalized questions that makes a near match
MAX_NEAR = 2
NAME_SCORE = 0.9  # a word the value index spells this closely may be a name: never mended as a typo
SLOT = "⟨slot⟩"
WORDED = -2  # Fact.at of a fact keyed by the words of a phrase (a tree the schema did not bind)
# the words a share's question turns on: what is said before them restricts the rows it is a
# share of ('of clients in Germany | are startups'), what after, the rows counted above the line
SHARE_VERBS = frozenset(["is", "are", "was", "were", "that", "who", "which"])


@dataclass(frozen=True)
class Fact:
    """One thing a question says: its kind and what it is about (`key`), and the value a
    parameter may change (None when it has none), with the words that said it."""

    kind: str  # target | measure | share | ratio | group | filter | predicate | period | order | limit | having | absent
    key: tuple[object, ...]
    value: object = None
    text: str = ""
    score: float = 1.0
    at: int = -1  # unbound facts: the token the value starts at

    @property
    def shape(self) -> tuple[object, ...]:
        return (self.kind, self.key)

    def describe(self) -> str:
        value = "" if self.value is None else f" = {self.value!r}"
        return f"{self.kind} {'/'.join(str(k) for k in self.key if k not in (None, ''))}{value}"


@dataclass(frozen=True)
class Shape:
    """What a question asks, as facts; `slots` say which facts a parameter fills (by position)."""

    facts: tuple[Fact, ...]
    slots: tuple[tuple[int, Param], ...] = ()
    left: frozenset[str] = frozenset()  # unknown words the reading left unplaced (core/verified/partial.py)
    words: frozenset[str] = frozenset()  # every word the question says, stemmed (where `left` is looked for)

    def describe(self) -> str:
        slotted = {i for i, _ in self.slots}
        return "; ".join(
            f.describe() if i not in slotted else f"{f.kind} {'/'.join(str(k) for k in f.key if k)} = {SLOT}"
            for i, f in enumerate(self.facts)
        )


@dataclass(frozen=True)
class Template:
    """A verified question read with its parameters as slots."""

    query: VerifiedQuery
    shape: Shape | None  # None: the question is not read, or its parameters fit no fact of it


@dataclass(frozen=True)
class Match:
    query: VerifiedQuery
    bindings: tuple[Binding, ...]
    confident: bool
    shape: Shape

    def describe(self) -> str:
        changes = "; ".join(
            f"{b.param.name}: {b.param.shown} → {b.shown}" + ("" if b.score >= 1 else f" ({b.score:.2f})")
            for b in self.bindings
        )
        return (
            f"verified #{self.query.id} ({self.query.question!r}) reads the same: {self.shape.describe()}"
            + (f"; {changes}" if changes else "")
        )


@dataclass(frozen=True)
class Matching:
    """The matcher's answer: a verified query to answer from (or none), and near ones."""

    reuse: Match | None
    near: tuple[VerifiedQuery, ...]
    considered: int
    why: str  # in words, for the trace


# ---------------------------------------------------------------------------------------------
# reading a question into facts


def meaning(question: str, lexicon: Lexicon) -> Shape | None:
    """The facts of the first of the question's trees the schema binds; when none binds (a word
    names a masked column, say), the first tree's own facts, its words standing for themselves.
    When the grammar places no tree, the question read with a few words left unplaced
    (core/verified/partial.py); None when that reads none either."""
    assert lexicon.db is not None, "the verified lexicon of a database"
    lex = keyword_lexicon(lexicon.db)
    known = _known(lexicon, lex)
    question = mend(question, known)
    names = SchemaNames(lex)
    words = partial_said(question)
    reading = read(question, names)
    bound = _bound(reading, lex, question) if reading.tree is not None else None
    if bound is not None:
        return replace(bound, words=words)
    binds = (lambda r: _bound(r, lex, question) is not None) if reading.tree is not None else None
    got = reread(question, names, known, binds) if binds is not None else reread(question, names, known)
    if got is not None:
        bound = _bound(got.reading, lex, question)
        if bound is not None:
            return replace(bound, left=got.left, words=words)
    if reading.tree is not None:  # no reading binds: the first tree's own words
        return Shape(said(reading.tree, reading, lexicon.concept), words=words)
    if got is None or got.reading.tree is None:
        return None
    return Shape(said(got.reading.tree, got.reading, lexicon.concept), left=got.left, words=words)


def _known(lexicon: Lexicon, lex: KeywordLexicon) -> Callable[[str], bool]:
    """A word the schema names, the value index spells, or a word of a stored value ('overage' in
    'egress overage', one slip from 'average'): never mended as a typo."""
    schema: frozenset[str] = lexicon.memo(
        ("schema_words", id(lex.dictionary)),
        lambda: frozenset(w for t in lex.dictionary.terms for w in t.text.split()),
    )

    def known(word: str) -> bool:
        return stem(word) in schema or any(
            m.score >= NAME_SCORE or word in str(m.value).lower().split() for m in lexicon.values(word)
        )

    return known


def _bound(reading: Reading, lex: KeywordLexicon, question: str) -> Shape | None:
    for tree in reading.trees:
        try:
            bound = bind(reading.with_tree(tree), lex, dt.date.today())
        except (Decline, Ambiguous, AmbiguousDate):
            continue
        except Exception:  # a reader bug must cost one reuse, never the question
            log.exception("the verified matcher could not read %r", question)
            return None
        return Shape(facts(bound, reading.tokens, lex))
    return None


def said(tree: Question, reading: Reading, concept: Concept | None = None) -> tuple[Fact, ...]:
    """A tree's facts by its own words, for a question the schema cannot bind: two such questions
    ask the same when their trees are the same, word for word, values apart. A word or run of
    words the schema names is read as the table or column it names (`concept`: 'DCs', 'sites'
    and 'data centres' are the datacenter table by the catalog's names and synonyms), any other
    word stemmed."""

    def words(p: object) -> str:
        if isinstance(p, Phrase):
            return _named(reading.tokens[p.start : p.end], concept)
        if isinstance(p, Value):
            return p.kind
        return ""

    out = [Fact("ask", (tree.ask, words(tree.thing), tree.distinct), at=WORDED)]
    out += [Fact("measure", (m.func, words(m.of), m.distinct, m.hint), at=WORDED) for m in tree.measures]
    out += [Fact("show", (words(p) if isinstance(p, Phrase) else p.func,), at=WORDED) for p in tree.shown]
    for c in tree.conditions:
        if isinstance(c.value, Phrase):
            out.append(
                Fact(
                    "filter",
                    (words(c.subject), c.op, c.prep),
                    c.value.text.lower(),
                    c.value.text,
                    at=c.value.start,
                )
            )
        else:
            value = c.value.value if isinstance(c.value, Value) else None
            out.append(
                Fact(
                    "compare",
                    (words(c.subject), c.op, c.unit, c.hint),
                    value,
                    c.value.text if c.value else "",
                )
            )
    for w in tree.windows:
        out.append(Fact("period", (w.value.kind, w.prep), _when(w.value) or w.value.value, w.value.text))
    out += [Fact("group", (words(g.by), g.unit), at=WORDED) for g in tree.groups]
    if tree.order is not None:
        key, hint = _ranked_by(tree.order, words)
        out.append(Fact("order", (key, tree.order.desc, hint, tree.order.ties), at=WORDED))
    if tree.limit:
        out.append(Fact("limit", (), tree.limit, str(tree.limit)))
    return tuple(out)


Concept = Callable[..., str | None]  # DatabaseLexicon.concept(text, phrase=…)
MAX_NAME_WORDS = 3  # the longest run of words looked up as one schema name ('resource pool')


def _named(tokens: Sequence[Token], concept: Concept | None) -> str:
    """The words, each run the schema names read as that name's table or column (longest first)."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for n in range(min(MAX_NAME_WORDS, len(tokens) - i), 0, -1):
            run = " ".join(t.low for t in tokens[i : i + n])
            key = (
                concept(run, phrase=n > 1) if concept is not None and run.replace(" ", "").isalpha() else None
            )
            if key is not None:
                out.append(key)
                i += n
                break
        else:
            out.append(stem(tokens[i].low))
            i += 1
    return " ".join(out)


def _ranked_by(order: Order, words: Callable[[object], str]) -> tuple[str, str]:
    """What an unbound ranking is by, and the word that says how: 'the most active pools' and 'the
    largest number of active pools' both rank by the number of those rows (a table named as the
    key is counted, as the binding pass counts it), and then the superlative's own word says
    nothing more; any other key keeps its word ('the oldest' implies an age)."""
    key = order.key
    if isinstance(key, TreeMeasure) and key.func == "count" and key.of is not None:
        return f"count {words(key.of)}", ""
    if isinstance(key, Phrase):
        said = words(key)
        counted = any(w.startswith("t:") for w in said.split())
        return (f"count {said}", "") if counted else (said, order.hint)
    return repr(key), order.hint


def _measure(m: Measure) -> tuple[object, ...]:
    return (m.func, m.table.lower(), (m.column or "").lower(), m.distinct)


def _ref(r: Ref) -> tuple[str, str, str]:
    return (r.table.lower(), r.column.lower(), r.bucket or "")


def _when(v: Value) -> tuple[int, ...]:
    if v.kind == "year":
        return (v.value,)
    if v.kind in ("month", "quarter") and v.value[0] is not None:
        return (v.value[0], v.value[1])
    if v.kind == "date":
        return (v.value.year, v.value.month, v.value.day)
    if v.kind == "number":
        return (v.value,)
    return ()


def facts(bound: Bound, tokens: Sequence[Token] = (), lex: KeywordLexicon | None = None) -> tuple[Fact, ...]:
    """What a bound question says, fact by fact: the ratio or share first (numerator and
    denominator in their places), then measures, groups, filters, periods, order and limit.
    `tokens` (the question's) place a share's filters on their side of its verb; with `lex`, the
    columns listed rows are shown with are only those the question asks for (`_said_columns`)."""
    q = bound.query
    scores = {m.words: (m.sense.score if m.sense else 1.0) for m in bound.mentions}
    out: list[Fact] = []
    if bound.tree.ask in ("list", "rank") and not q.measures:  # what is listed, and how it is shown
        out.append(Fact("target", ((q.target or "").lower(),)))
        out += [Fact("show", _ref(r)) for r in _said_columns(bound, lex)]
    if bound.ratio is not None:  # 'average cost per CPU hour' may be a mean of per-row ratios: not the same
        aggs = tuple(sorted({m.func for m in bound.tree.measures} - {"sum", "ratio"}))
        out.append(Fact("ratio", (_measure(bound.ratio[0]), _measure(bound.ratio[1]), aggs)))
    elif q.ratio is not None:  # each row's own ratio ('capacity to range'): turned round, another question
        out.append(Fact("ratio", (_ref(q.ratio[0]), _ref(q.ratio[1]), ("row",))))
        out += [Fact("show", _ref(r)) for r in q.projection]
    elif bound.computable:  # a share: of the rows, those that meet the predicate
        out.append(Fact("share", ((q.target or "").lower(),)))
    else:
        out += [Fact("measure", _measure(m)) for m in q.measures]
    out += [Fact("group", _ref(g)) for g in q.groups]
    periods = {_ref(r)[:2] for r, _ in bound.periods}
    denominator, numerator = _share_sides(bound, tokens)
    for f in denominator:
        if _ref(f.ref)[:2] in periods and f.op in ("range", "=", "<", ">", "<=", ">="):
            continue  # said as a period, below
        out.append(_filter("filter", f, scores))
    out += [_filter("predicate", f, scores) for f in numerator]
    preps = {w.value: w.prep for w in bound.tree.windows}
    for r, v in bound.periods:
        out.append(Fact("period", (*_ref(r)[:2], v.kind, preps.get(v, "in")), _when(v) or v.value, v.text))
    out += [Fact("absent", (a.table.lower(), a.column.lower())) for a in q.absent]
    out += [Fact("having", (*_measure(h.measure), h.op), h.value) for h in q.having]
    out += _orders(bound)
    if q.limit:
        out.append(Fact("limit", (), q.limit, str(q.limit)))
    # the tables the rows are reached through: 'pools in London datacenters' is not 'clients in London'
    out.append(Fact("tables", tuple(sorted({t.lower() for t in q.tables}))))
    return tuple(out)


def _said_columns(bound: Bound, lex: KeywordLexicon | None) -> list[Ref]:
    """The columns listed rows are shown with that are part of the question: not the columns that
    name a row ('the hostnames of the machines' lists what 'which machines' lists), nor, when the
    question names no column to show, the compared columns keyword mode adds to show why a row
    is there ('which hosts have at least 1536 GB' shows the memory). Why: two questions that ask
    for the same rows are one question however keyword mode would show them; a column asked for
    ('the emails of the clients') is part of the question."""
    q = bound.query
    if lex is None:
        return list(q.projection)
    own = {_ref(r)[:2] for r in labels(lex, q.target)} if q.target else set()
    if not bound.tree.shown:
        own |= {_ref(f.ref)[:2] for f in q.filters}
    return [r for r in q.projection if _ref(r)[:2] not in own]


def _share_sides(bound: Bound, tokens: Sequence[Token]) -> tuple[list[Filter], list[Filter]]:
    """A share's filters as (the rows it is a share of, the rows counted above the line).

    Why: the binding puts every condition of a share above the line, but 'what % of clients in
    Germany are startups' (a share of Germany's clients) and 'what % of all clients are startups
    in Germany' (a share of all clients) differ only in where 'in Germany' stands: a condition
    said before the share's verb ('are', 'were', 'that') restricts the rows it is a share of."""
    filters, predicate = list(bound.query.filters), list(bound.predicate)
    thing = bound.tree.thing
    if not predicate or not isinstance(thing, Phrase):
        return filters, predicate
    pivot = next((i for i, t in enumerate(tokens) if i >= thing.end and t.low in SHARE_VERBS), None)
    if pivot is None:
        return filters, predicate
    starts: dict[str, int] = {}
    for m in bound.mentions:
        starts[m.words] = min(starts.get(m.words, m.start), m.start)
    before = [f for f in predicate if starts.get(f.words, pivot) < pivot]
    return filters + before, [f for f in predicate if f not in before]


def _orders(bound: Bound) -> list[Fact]:
    """The order the question says, with the direction it says: an order keyword mode adds only
    to show its rows (a grouped average, highest first) is no part of the question, and
    'lowest first' is not 'highest first' whatever the binding makes of it."""
    said = bound.tree.order
    if said is None:
        return []
    out = []
    for o in bound.query.order:
        key = _measure(o.key) if isinstance(o.key, Measure) else _ref(o.key)
        out.append(Fact("order", (key, o.desc, said.desc, bound.query.ties)))
    return out


def _filter(kind: str, f: object, scores: dict[str, float]) -> Fact:
    ref, op, value, words = f.ref, f.op, f.value, f.words  # type: ignore[attr-defined]
    return Fact(kind, (*_ref(ref)[:2], op), value, words, scores.get(words, 1.0))


# ---------------------------------------------------------------------------------------------
# templates: the verified question with its parameters as slots


def template(query: VerifiedQuery, lexicon: Lexicon) -> Template:
    shape = meaning(query.question, lexicon)
    if shape is None:
        return Template(query, None)
    facts_ = list(shape.facts)
    slots: list[tuple[int, Param]] = []
    for p in query.params:
        at = next((i for i, f in enumerate(facts_) if i not in dict(slots) and _fills(f, p)), None)
        if at is None and p.kind == "value":  # a tree read by its words: the words said in a phrase
            at = next((i for i, f in enumerate(facts_) if i not in dict(slots) and _holds(f, p)), None)
            if at is not None:
                facts_[at] = _slotted(facts_[at], p)
        if at is None:
            return Template(query, None)  # a parameter the reading does not hold: not reused
        slots.append((at, p))
    return Template(query, replace(shape, facts=tuple(facts_), slots=tuple(slots)))


def _holds(f: Fact, p: Param) -> bool:
    """The parameter's words are words of a phrase the fact was said with ('active' in 'the
    most active resource pools'): the slot is those words inside the phrase."""
    return f.at == WORDED and any(
        isinstance(k, str) and f" {stem(p.text.lower())} " in f" {k} " for k in f.key
    )


def _slotted(f: Fact, p: Param) -> Fact:
    """The fact with the parameter's words in its phrase as a slot ('⟨slot⟩ client')."""
    said = stem(p.text.lower())
    key = tuple(
        f" {k} ".replace(f" {said} ", f" {SLOT} ").strip() if isinstance(k, str) else k for k in f.key
    )
    return replace(f, key=key, value=SLOT)


def _fills(f: Fact, p: Param) -> bool:
    """The fact is the one the parameter's words and literals are about."""
    if p.kind == "value":
        if f.at >= 0:  # a tree read by its words: the condition said with the parameter's words
            return f.kind == "filter" and str(f.value) == p.text.lower()
        return (
            f.kind in ("filter", "predicate")
            and f.key[:2] == (p.table.lower(), p.column.lower())
            and str(f.value) == p.value
        )
    if p.kind == "number":
        return f.kind in ("limit", "filter", "having") and f.value in (p.when[0], float(p.when[0]))
    return f.kind == "period" and f.key[-2] == p.kind and f.value == p.when  # key: (…, grain, prep)


# ---------------------------------------------------------------------------------------------
# matching


def match(
    question: str,
    queries: Sequence[VerifiedQuery],
    lexicon: Lexicon,
    templates: Callable[[VerifiedQuery], Template] | None = None,
) -> Matching:
    """Match `question` against `queries` (the active, fresh verified queries of one database)."""
    asked = meaning(question, lexicon)
    found: list[Match] = []
    normalized = normalize_question(question)
    for q in queries:
        if normalize_question(q.question) == normalized:  # the very question: its own values
            found.append(
                Match(
                    q,
                    tuple(Binding(p, p.text, value=p.value, when=p.when) for p in q.params),
                    True,
                    Shape(()),
                )
            )
            continue
        t = templates(q) if templates is not None else template(q, lexicon)
        if t.shape is not None and asked is not None:
            m = _fill(asked, t, lexicon)
            if m is not None:
                found.append(m)
    sure = [m for m in found if m.confident and m.query.reusable]
    reuse, why = _one(sure)
    near_ids = {m.query.id for m in found if reuse is None or m.query.id != reuse.query.id}
    for q in queries:
        if (reuse is None or q.id != reuse.query.id) and fuzz.token_set_ratio(
            normalized, normalize_question(q.question)
        ) >= NEAR_TEXT:
            near_ids.add(q.id)
    near = tuple(q for q in queries if q.id in near_ids)[:MAX_NEAR]
    if reuse is None and not why:
        unsure = [m for m in found if not (m.confident and m.query.reusable)]
        why = (
            f"near: {unsure[0].describe()} — not sure enough to answer from it"
            if unsure
            else "no verified question reads the same"
            if asked is not None
            else "keyword mode's grammar does not read the question"
        )
    return Matching(reuse=reuse, near=near, considered=len(queries), why=why)


def _one(sure: list[Match]) -> tuple[Match | None, str]:
    """The one reuse the confident matches agree on; none when they disagree."""
    if not sure:
        return None, ""
    try:
        answers = {substitute(m.query.sql, m.query.dialect, m.bindings) for m in sure}
    except SubstitutionError as exc:
        return None, f"the verified SQL could not take the new values: {exc}"
    if len(answers) > 1:
        ids = sorted({m.query.id for m in sure})
        return None, f"the question fits verified queries {ids} in different ways; not answering from either"
    return sure[0], sure[0].describe()


def _fill(asked: Shape, t: Template, lexicon: Lexicon) -> Match | None:
    """The new question's values in the template's slots, when every fact pairs with one of the
    same kind and key (a slot's value may differ, any other value may not)."""
    assert t.shape is not None
    if not (asked.left <= t.shape.words and t.shape.left <= asked.words):
        return None  # a word one question leaves unplaced that the other does not say
    slots = dict(t.shape.slots)
    left = list(asked.facts)
    bindings: list[Binding] = []
    for i, f in enumerate(t.shape.facts):
        p = slots.get(i)
        if p is not None and f.value == SLOT:  # a slot inside a phrase: the words that fill it
            filled = [(g, w) for g in left if (w := _filling(f, g)) is not None]
            if len(filled) != 1:
                return None
            left.remove(filled[0][0])
            bindings.append(_binding(p, replace(filled[0][0], text=filled[0][1], at=0), lexicon))
            continue
        same = [g for g in left if g.shape == f.shape and (p is not None or g.value == f.value)]
        if len(same) != 1 or (p is not None and not _kind_fits(same[0], p)):
            return None
        left.remove(same[0])
        if p is not None:
            bindings.append(_binding(p, same[0], lexicon))
    if left:
        return None  # the new question says more
    confident = all(b.score >= CONFIDENT for b in bindings if b.param.kind == "value")
    return Match(t.query, tuple(bindings), confident, t.shape)


def _filling(f: Fact, g: Fact) -> str | None:
    """The words of `g` where `f` has its slot, when everything else is the same."""
    if g.kind != f.kind or len(g.key) != len(f.key):
        return None
    found = None
    for a, b in zip(f.key, g.key, strict=True):
        if a == b:
            continue
        if not (isinstance(a, str) and isinstance(b, str) and SLOT in a):
            return None
        head, _, tail = a.partition(SLOT)
        if not (b.startswith(head) and b.endswith(tail)) or len(b) <= len(head) + len(tail):
            return None
        found = b[len(head) : len(b) - len(tail)].strip()
    return found


def _owner_score(p: Param, g: Fact, lexicon: Lexicon) -> float:
    """How surely the words name the bound value once a possessive is dropped ("Helix Finance's
    usage" is Helix Finance's: the value, said whole); 0 when no possessive or not surely."""
    text = g.text.replace("’", "'")
    if not text.endswith("'s"):
        return 0.0
    best = surely(Span(0, 0, "value", text[:-2], 0, 0, lexicon.values(text[:-2])), p.table, p.column)
    return best.score if best is not None and str(best.value) == str(g.value) else 0.0


def _kind_fits(g: Fact, p: Param) -> bool:
    if p.kind == "value":
        return isinstance(g.value, str)
    if p.kind == "number":
        return isinstance(g.value, int | float) and float(g.value).is_integer()
    return isinstance(g.value, tuple) and len(g.value) == len(p.when)


def _binding(p: Param, g: Fact, lexicon: Lexicon) -> Binding:
    if p.kind == "value" and g.at >= 0:  # words that stand for themselves: a stored value of the column?
        own = [
            m
            for m in lexicon.values(g.text)
            if (m.table.lower(), m.column.lower()) == (p.table.lower(), p.column.lower())
        ]
        best = max(own, key=lambda m: m.score, default=None)
        return Binding(
            p, g.text, value=str(best.value) if best else g.text, score=best.score if best else 0.0
        )
    if p.kind == "value":
        sure = 1.0 if plural_of(g.text, g.value) else _owner_score(p, g, lexicon)
        return Binding(p, g.text, value=str(g.value), score=max(g.score, sure))
    if p.kind == "number":
        return Binding(p, g.text or str(g.value), when=(int(g.value),))  # type: ignore[call-overload]
    return Binding(p, g.text, when=tuple(g.value))  # type: ignore[arg-type]
