"""Keyword mode's grammar for questions about business definitions, with no LLM.

Why its own grammar: a metric, a named filter or an entity is a word keyword mode's dictionary
does not know ("total loss", "open claims", "agents"), and the meaning behind it (four claim
amounts added up, two statuses, a role code) is exactly what keyword mode would otherwise guess.
So a question made of definitions' words, grammar words and schema words is read here first:

    metric  := lead* prefix? METRIC modifier* tail*
               "total loss by line of business", "written premium for motor policies in 2024"
    count   := lead* COUNT det* subject modifier* tail*
               "how many open claims are there", "number of renewals", "how many agents"
    list    := lead* LIST det* subject modifier* tail*        "list the open claims"
    most    := lead* (TOP n)? ENTITY MOST det* thing* TABLE tail*
               "agents with the most in-force policies"
    subject := thing* (TABLE | ENTITY)?     thing := FILTER | VALUE
    modifier := GROUP det* (COLUMN | TABLE)  |  IN? (YEAR | FISCAL YEAR | FY-YEAR)
              |  WITH? det* thing+ TABLE?    |  det

Right or silent: every word is placed (a grammar word from `definitions_words.yaml`, a
definition's name or synonym, a table, column or stored value spelled as the keyword dictionary
and the value index know it, a year), at least one definition is used, every join from the
measured table is many-to-one (the join graph's own tree, never another path hunted for), and
each word has one best reading; otherwise `None` and keyword mode reads the question as before.

Read in four steps, each testable alone: `lexemes` (words → lexemes), `parse` (lexemes → `Asked`, the
question's tree), `bind` (tree + schema → `Bound`: tables, columns and joins chosen) and `sql_of`
(→ the SQL, run through `core.run.run_over_view` like every keyword answer, guard included).
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import sqlglot
from sqlglot import exp

from core.answer import Outcome
from core.database import Database
from core.definitions.expand import definition_sql, shown_sql
from core.definitions.model import Definition, Definitions
from core.definitions.retrieve import pick, said
from core.dictionary import Term, name_words
from core.dictionary import words as folded_words
from core.joins import View, column_expr
from core.joins.identifiers import identifier, safe_name
from core.keyword.columns import column_kind, label_columns
from core.keyword.lexicon import WORDS
from core.keyword.match import Lexicon
from core.plurals import plural
from core.request import Request
from core.run import outcome_of, run_over_view
from core.settings import EngineSettings
from core.trace import Trace
from core.view import build_view

Category = Literal[
    "lead", "tail", "det", "count", "list", "group", "with", "in", "fiscal", "most", "top", "prefix"
]
MAX_SPAN = 5  # words one lexeme may take
MAX_VALUE_SPAN = 3  # words a stored value is looked up for
VALUE_MEANING_MIN = 0.97  # a code's catalog meaning must be said this closely to be a filter
_TOKEN = re.compile(r"[a-z0-9%]+")


# ---------------------------------------------------------------------------------------------
# the words: data, loaded once


@dataclass(frozen=True)
class Words:
    """The grammar's vocabulary: phrases by category and the patterns (lexicon.yaml `definitions`)."""

    categories: Mapping[str, frozenset[str]]  # category → normalized phrases
    patterns: Mapping[str, re.Pattern[str]]

    def of(self, phrase: str) -> frozenset[str]:
        """The categories a normalized phrase is in."""
        return frozenset(c for c, phrases in self.categories.items() if phrase in phrases)


def normal(text: str) -> tuple[str, ...]:
    """Words as the grammar compares them: lower case, split like core/definitions/retrieve.py
    splits them, singular the way it reads plurals — so a name this grammar places is one
    retrieval would pick for the LLM too."""
    return tuple(_singular(w) for w in _TOKEN.findall(text.lower()))


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


@functools.cache
def grammar_words() -> Words:
    """This grammar's categories and patterns, from the lexicon (lexicon.yaml `definitions`),
    normalized as `normal` reads the question."""
    categories = {
        category: frozenset(" ".join(normal(p)) for p in phrases)
        for category, phrases in WORDS.definitions.items()
    }
    return Words(categories, WORDS.patterns)


# ---------------------------------------------------------------------------------------------
# lexemes: every word of the question placed, or marked unknown

LexKind = Literal[
    "phrase", "metric", "filter", "entity", "table", "column", "value", "year", "fy", "number", "unknown"
]


@dataclass(frozen=True)
class ValueSense:
    """A stored value a word stands for; `rule` is the instruction that says so (else the value
    index found it). An instruction may name the column without its table (`table` "")."""

    column: str
    value: str
    table: str = ""
    rule: Definition | None = None


@dataclass(frozen=True)
class Lexeme:
    kind: LexKind
    words: str  # as typed
    categories: frozenset[str] = frozenset()  # phrase: its grammar categories
    definition: Definition | None = None  # metric, filter, entity
    table: str = ""  # table
    columns: tuple[tuple[str, str], ...] = ()  # column: (table, column) readings, equally good
    values: tuple[ValueSense, ...] = ()  # value: its readings
    number: int = 0  # year, fy, number

    def has(self, category: str) -> bool:
        return self.kind == "phrase" and category in self.categories


@dataclass(frozen=True)
class Vocabulary:
    """What a question's words can be, for one database and the definitions in force."""

    words: Words
    definitions: Definitions
    named: Mapping[int, tuple[tuple[str, Definition], ...]] = field(default_factory=dict)  # by length
    said_values: tuple[tuple[tuple[str, ...], ValueSense], ...] = ()  # instruction words → value
    terms: Callable[[str], Sequence[Term]] = lambda _text: ()  # the keyword dictionary, spelled
    values: Callable[[str], Sequence[ValueSense]] = lambda _text: ()  # the value index, exact
    fiscal: tuple[Definition, dt.date, dt.date, int] | None = None  # the rule, its example year


def vocabulary(lex: Lexicon, definitions: Definitions) -> Vocabulary:
    """The vocabulary of `lex`'s database: its keyword dictionary's terms (as spelled), its value
    index (exact values and close code meanings), and the definitions in force."""
    index = lex.catalog.memo(("definitions_grammar_terms", lex.access), lambda: _term_index(lex))

    def terms(text: str) -> Sequence[Term]:
        return index.get(" ".join(folded_words(text)), ())

    def values(text: str) -> Sequence[ValueSense]:
        return tuple(
            ValueSense(s.column, s.value, s.table)
            for s in lex.values(text)
            if s.column
            and s.value is not None
            and (s.via == "value" or (s.via == "meaning" and s.score >= VALUE_MEANING_MIN))
        )

    return vocabulary_of(definitions, terms, values)


def _term_index(lex: Lexicon) -> dict[str, tuple[Term, ...]]:
    index: dict[str, list[Term]] = {}
    for term in lex.dictionary.terms:
        index.setdefault(term.text, []).append(term)
    return {text: tuple(terms) for text, terms in index.items()}


def vocabulary_of(
    definitions: Definitions,
    terms: Callable[[str], Sequence[Term]],
    values: Callable[[str], Sequence[ValueSense]],
) -> Vocabulary:
    """A vocabulary from the definitions and two lookups (a database's, or a test's)."""
    words = grammar_words()
    named: dict[int, list[tuple[str, Definition]]] = {}
    for d in definitions.of_kind("metric", "filter", "entity"):
        for w in d.words:
            named.setdefault(len(normal(w)), []).append((w, d))
    return Vocabulary(
        words,
        definitions,
        {n: tuple(ds) for n, ds in named.items()},
        _said_values(words, definitions),
        terms,
        values,
        _fiscal(words, definitions),
    )


def _said_values(words: Words, definitions: Definitions) -> tuple[tuple[tuple[str, ...], ValueSense], ...]:
    """'"Motor" or "car" insurance is line_of_business 'auto'' → motor, car → line_of_business = auto."""
    out: list[tuple[tuple[str, ...], ValueSense]] = []
    for d in definitions.of_kind("instruction"):
        column = ""
        for clause in words.patterns["clauses"].split(d.text):
            m = words.patterns["value_rule"].search(clause)
            if m is None:
                column = ""
                continue
            column = (m.group("column") or "").strip() or column
            if not column:
                continue
            table, _, name = column.rpartition(".")
            for w in words.patterns["said_word"].finditer(m.group("words")):
                out.append((normal(w.group("word")), ValueSense(name, m.group("value"), table, d)))
    return tuple(out)


def _fiscal(words: Words, definitions: Definitions) -> tuple[Definition, dt.date, dt.date, int] | None:
    """The instruction that says when a fiscal year runs, by its example: (rule, start, end, year)."""
    for d in definitions.of_kind("instruction"):
        m = words.patterns["fiscal_rule"].search(d.text)
        if m is None:
            continue
        try:
            start, end = dt.date.fromisoformat(m.group("start")), dt.date.fromisoformat(m.group("end"))
        except ValueError:
            continue
        if start < end:
            return d, start, end, int(m.group("year"))
    return None


def lexemes(question: str, vocab: Vocabulary) -> list[Lexeme]:
    """The question as lexemes, left to right, the longest reading at each word first; a
    definition's words before an instruction's, grammar words, years, and schema words."""
    raw = _TOKEN.findall(question.lower())
    out: list[Lexeme] = []
    i = 0
    while i < len(raw):
        found: Lexeme | None = None
        for n in range(min(MAX_SPAN, len(raw) - i), 0, -1):
            found = _reading(raw[i : i + n], vocab)
            if found is not None:
                i += n
                break
        if found is None:
            found = Lexeme("unknown", raw[i])
            i += 1
        out.append(found)
    return out


_DEFINED: dict[str, LexKind] = {"metric": "metric", "filter": "filter", "entity": "entity"}


def _reading(span: Sequence[str], vocab: Vocabulary) -> Lexeme | None:
    """What these words are together, or None."""
    text = " ".join(span)
    said_words = [_singular(w) for w in span]
    defined = {d.ref: d for w, d in vocab.named.get(len(span), ()) if said(w, said_words)}
    if len(defined) > 1:
        return Lexeme("unknown", text)  # two definitions by one name: not this grammar's to choose
    for d in defined.values():
        return Lexeme(_DEFINED[d.kind], text, definition=d)
    ruled = tuple(v for ws, v in vocab.said_values if ws == tuple(said_words))
    if ruled:
        return Lexeme("value", text, values=ruled)
    categories = vocab.words.of(" ".join(said_words))
    if categories:
        return Lexeme("phrase", text, categories=categories)
    number = _number(text, vocab.words) if len(span) == 1 else None
    if number is not None:
        return number
    return None if _edge_is_grammar(span, vocab.words) else _schema(text, vocab)


def _number(text: str, words: Words) -> Lexeme | None:
    fy = words.patterns["fiscal_year"].fullmatch(text)
    if fy:
        year = int(fy.group("year"))
        return Lexeme("fy", text, number=year if year >= 100 else 2000 + year)
    if words.patterns["year"].fullmatch(text):
        return Lexeme("year", text, number=int(text))
    if text.isdigit():
        return Lexeme("number", text, number=int(text))
    return None


def _edge_is_grammar(span: Sequence[str], words: Words) -> bool:
    """A schema word never starts or ends with a grammar word ('by line of business' is two)."""
    return bool(words.of(_singular(span[0])) or words.of(_singular(span[-1])))


def _schema(text: str, vocab: Vocabulary) -> Lexeme | None:
    """A table or column the words spell (name or synonym), or a stored value they equal."""
    terms = [t for t in vocab.terms(text) if t.via in ("name", "synonym")]
    tables = sorted({t.table for t in terms if t.column is None})
    columns = tuple(sorted({(t.table, t.column) for t in terms if t.column is not None}))
    if len(tables) == 1 and all(t == tables[0] for t, _ in columns):
        return Lexeme("table", text, table=tables[0])  # 'coverage': the table (and its name column)
    if columns and not tables:
        return Lexeme("column", text, columns=columns)
    if tables or columns:
        return Lexeme("unknown", text)  # a table and a column by one name
    if len(text.split()) > MAX_VALUE_SPAN:
        return None
    values = tuple(vocab.values(text))
    return Lexeme("value", text, values=values) if values else None


# ---------------------------------------------------------------------------------------------
# the grammar: lexemes → the question's tree

Rule = Literal["metric", "count", "list", "most"]
THINGS = ("filter", "value")


@dataclass(frozen=True)
class Clause:
    """Filters said together, and the table word after them that says what they are about
    ('motor policies': the value 'auto' of a policy column; 'open claims' needs none)."""

    filters: tuple[Definition, ...] = ()
    values: tuple[tuple[ValueSense, ...], ...] = ()  # each value word's readings
    table: str = ""


@dataclass(frozen=True)
class Asked:
    """The question's tree: what is measured, counted or listed, over which rows, per what."""

    rule: Rule
    metric: Definition | None = None  # metric rule
    entity: Definition | None = None  # count of an entity; most: the entity ranked
    subject: Clause = field(default_factory=Clause)  # count, list, most: the rows and their table
    clauses: tuple[Clause, ...] = ()  # further filters
    group: tuple[tuple[str, str], ...] = ()  # 'by <column>': its readings
    group_table: str = ""  # 'per <table>': its rows, shown by their label
    year: int = 0
    fiscal: bool = False
    top: int = 0  # most: 'top 5'


def parse(lexemes: Sequence[Lexeme]) -> Asked | None:
    """The tree of the first rule that places every lexeme, or None."""
    if any(x.kind == "unknown" for x in lexemes):
        return None
    for rule in (_metric_rule, _count_rule, _list_rule, _most_rule):
        asked = rule(lexemes)
        if asked is not None:
            return asked
    return None


def _skip(ls: Sequence[Lexeme], i: int, *categories: str) -> int:
    while i < len(ls) and any(ls[i].has(c) for c in categories):
        i += 1
    return i


def _is(ls: Sequence[Lexeme], i: int, *kinds: str) -> bool:
    return i < len(ls) and ls[i].kind in kinds


def _metric_rule(ls: Sequence[Lexeme]) -> Asked | None:
    """lead* prefix? METRIC modifier* tail*"""
    i = _skip(ls, 0, "lead", "det")
    i = _skip(ls, i, "prefix")
    if not _is(ls, i, "metric"):
        return None
    return _modifiers(ls, i + 1, Asked("metric", metric=ls[i].definition), grouping=True)


def _count_rule(ls: Sequence[Lexeme]) -> Asked | None:
    """lead* COUNT det* subject modifier* tail*"""
    i = _skip(ls, 0, "lead", "det")
    if i >= len(ls) or not ls[i].has("count"):
        return None
    subject = _subject(ls, _skip(ls, i + 1, "det"))
    if subject is None:
        return None
    (clause, entity), i = subject
    return _modifiers(ls, i, Asked("count", entity=entity, subject=clause), grouping=True)


def _list_rule(ls: Sequence[Lexeme]) -> Asked | None:
    """lead* LIST det* subject modifier* tail* (no grouping: the rows themselves)"""
    i = _skip(ls, 0, "lead", "det")
    if i >= len(ls) or not ls[i].has("list"):
        return None
    subject = _subject(ls, _skip(ls, i + 1, "det"))
    if subject is None or subject[0][1] is not None:
        return None
    (clause, _), i = subject
    return _modifiers(ls, i, Asked("list", subject=clause), grouping=False)


def _most_rule(ls: Sequence[Lexeme]) -> Asked | None:
    """lead* (TOP n)? ENTITY MOST det* thing* TABLE tail*"""
    i = _skip(ls, 0, "lead", "det")
    top = 0
    if i < len(ls) and ls[i].has("top") and _is(ls, i + 1, "number"):
        top, i = ls[i + 1].number, i + 2
    if not _is(ls, i, "entity") or i + 1 >= len(ls) or not ls[i + 1].has("most"):
        return None
    entity = ls[i].definition
    subject = _subject(ls, _skip(ls, i + 2, "det"))
    if subject is None or not subject[0][0].table or subject[0][1] is not None:
        return None
    (clause, _), j = subject
    if _skip(ls, j, "tail", "det") != len(ls):
        return None
    return Asked("most", entity=entity, subject=clause, top=top)


def _subject(ls: Sequence[Lexeme], i: int) -> tuple[tuple[Clause, Definition | None], int] | None:
    """thing* (TABLE | ENTITY)?: what is counted or listed, with the filters said before it."""
    clause, i = _things(ls, i)
    if _is(ls, i, "table"):
        return (replace(clause, table=ls[i].table), None), i + 1
    if _is(ls, i, "entity") and clause == Clause():
        return (clause, ls[i].definition), i + 1
    if clause == Clause():
        return None
    return (clause, None), i


def _things(ls: Sequence[Lexeme], i: int) -> tuple[Clause, int]:
    filters: list[Definition] = []
    values: list[tuple[ValueSense, ...]] = []
    while _is(ls, i, *THINGS):
        d = ls[i].definition
        if d is not None:
            filters.append(d)
        else:
            values.append(ls[i].values)
        i += 1
    return Clause(tuple(filters), tuple(values)), i


def _modifiers(ls: Sequence[Lexeme], i: int, asked: Asked, *, grouping: bool) -> Asked | None:
    """modifier* tail*: groups, periods and filter clauses, each where the words say."""
    while i < len(ls):
        if _skip(ls, i, "tail", "det") == len(ls):
            return asked
        if ls[i].has("det"):
            i += 1
            continue
        step = (
            (_group(ls, i, asked) if grouping and not (asked.group or asked.group_table) else None)
            or (_period(ls, i, asked) if not asked.year else None)
            or _clause(ls, i, asked)
        )
        if step is None:
            return None
        asked, i = step
    return asked


def _group(ls: Sequence[Lexeme], i: int, asked: Asked) -> tuple[Asked, int] | None:
    """GROUP det* (COLUMN | TABLE)"""
    if not ls[i].has("group"):
        return None
    j = _skip(ls, i + 1, "det")
    if _is(ls, j, "column"):
        return replace(asked, group=ls[j].columns), j + 1
    if _is(ls, j, "table"):
        return replace(asked, group_table=ls[j].table), j + 1
    return None


def _period(ls: Sequence[Lexeme], i: int, asked: Asked) -> tuple[Asked, int] | None:
    """IN? det* (YEAR | FISCAL YEAR | FY-YEAR)"""
    j = _skip(ls, i + 1 if ls[i].has("in") else i, "det")
    if _is(ls, j, "fy"):
        return replace(asked, year=ls[j].number, fiscal=True), j + 1
    fiscal = j < len(ls) and ls[j].has("fiscal")
    k = j + 1 if fiscal else j
    if _is(ls, k, "year"):
        return replace(asked, year=ls[k].number, fiscal=fiscal), k + 1
    return None


def _clause(ls: Sequence[Lexeme], i: int, asked: Asked) -> tuple[Asked, int] | None:
    """WITH? det* thing+ TABLE?"""
    j = _skip(ls, i + 1 if ls[i].has("with") else i, "det")
    clause, k = _things(ls, j)
    if clause == Clause():
        return None
    if _is(ls, k, "table"):
        clause, k = replace(clause, table=ls[k].table), k + 1
    return replace(asked, clauses=(*asked.clauses, clause)), k


# ---------------------------------------------------------------------------------------------
# binding: the tree on this schema — tables, columns, values, dates and joins chosen


class NotMine(Exception):
    """This grammar will not answer: keyword mode reads the question as before (the reason is
    traced)."""


@dataclass(frozen=True)
class Part:
    """One aggregate over one table: a metric's, or the count of the rows asked about."""

    name: str  # 'total loss', 'number of claims'
    ref: str  # its output column
    table: str
    aggregate: str  # SQL over the table's own columns
    condition: str = ""  # the metric's own filter


@dataclass(frozen=True)
class Condition:
    """A condition over one table's own columns (unqualified), and how it is said."""

    table: str
    sql: str
    said: str


@dataclass(frozen=True)
class Bound:
    """The tree bound to the schema: every table, column and join chosen, ready to write."""

    asked: Asked
    parts: tuple[Part, ...]  # one, or a ratio's numerator and denominator
    views: tuple[View, ...]  # per part: its many-to-one joins
    ratio: Definition | None = None
    group: tuple[tuple[str, str], ...] = ()  # (table, column) grouped by
    shown: tuple[bool, ...] = ()  # per group column: shown (a table's key only groups)
    conditions: tuple[Condition, ...] = ()
    dates: tuple[tuple[str, str, str, str], ...] = ()  # per part: (table, date column, start, end)
    listed: tuple[str, ...] = ()  # list: the columns shown
    using: tuple[Definition, ...] = ()


def bind(asked: Asked, lex: Lexicon, vocab: Vocabulary, also: Sequence[Definition] = ()) -> Bound:
    """Bind `asked` (not the entity rules) to the database of `lex`; raises NotMine. `also`: the
    definitions used besides what `asked` names (an entity ranked by these rows)."""
    parts, ratio = _parts(asked, lex, vocab.definitions)
    conditions, ruled = _conditions(asked, lex, parts)
    group, shown = _grouping(asked, lex, parts)
    dates = _dates(asked, lex, vocab, parts)
    needed = (
        [c.table for c in conditions] + [t for t, _ in group] + [c.table for c in asked.clauses if c.table]
    )
    views = tuple(
        _joins(lex, p.table, [*needed, *(d[0] for d in dates[i : i + 1])]) for i, p in enumerate(parts)
    )
    using = [d for d in (ratio, *_metrics(asked, ratio, vocab.definitions), *also) if d is not None]
    using += [f for c in (asked.subject, *asked.clauses) for f in c.filters]
    using += ruled
    if asked.fiscal and vocab.fiscal is not None:
        using.append(vocab.fiscal[0])
    if not using:
        raise NotMine("no definition is said")
    listed = _listed(lex, parts[0].table, conditions) if asked.rule == "list" else ()
    using_once = tuple(_once(using))
    return Bound(asked, parts, views, ratio, group, shown, tuple(conditions), dates, listed, using_once)


def _once(items: Sequence[Definition]) -> Iterator[Definition]:
    seen: set[tuple[str, str, str]] = set()
    for d in items:
        if (d.kind, d.ref, d.text) not in seen:
            seen.add((d.kind, d.ref, d.text))
            yield d


def _metrics(asked: Asked, ratio: Definition | None, definitions: Definitions) -> list[Definition | None]:
    if ratio is not None:
        return [definitions.by_ref(ratio.numerator), definitions.by_ref(ratio.denominator)]
    return [asked.metric]


def _real(lex: Lexicon, table: str, what: str) -> str:
    t = lex.table(table)
    if t is None:
        raise NotMine(f"{what} is over {table!r}, which is no table of this database")
    return t.name


def _parts(
    asked: Asked, lex: Lexicon, definitions: Definitions
) -> tuple[tuple[Part, ...], Definition | None]:
    """What is aggregated: the metric (a ratio's two parts), or a count of the subject's rows."""
    metric = asked.metric
    if metric is None:
        table = _subject_table(asked.subject)
        name = f"number of {plural(name_words(table))}"
        return (Part(name, safe_name(name), _real(lex, table, "the count"), "COUNT(*)"),), None
    if not metric.ratio:
        return (_part(metric, lex),), None
    parts = [definitions.by_ref(metric.numerator), definitions.by_ref(metric.denominator)]
    if any(p is None or p.kind != "metric" or p.ratio for p in parts):
        raise NotMine(f"the parts of {metric.name} are not both plain metrics")
    return tuple(_part(p, lex) for p in parts if p is not None), metric


def _part(metric: Definition, lex: Lexicon) -> Part:
    if not metric.sql:
        raise NotMine(f"{metric.name} has no aggregate")
    return Part(metric.name, metric.ref, _real(lex, metric.table, metric.name), metric.sql, metric.filter)


def _subject_table(subject: Clause) -> str:
    """The table counted or listed: the one said, or the one its named filters are on."""
    if subject.table:
        return subject.table
    tables = {f.table.lower() for f in subject.filters}
    if len(tables) != 1 or subject.values:
        raise NotMine("the rows counted are not said")
    return subject.filters[0].table


def _conditions(
    asked: Asked, lex: Lexicon, parts: Sequence[Part]
) -> tuple[list[Condition], list[Definition]]:
    """Named filters on their tables, and values on the nearest of the columns that hold them;
    said before a table word, each is that table's own or its many-to-one neighbour's
    ('property claims': the claim's policy is a home policy)."""
    out: list[Condition] = []
    ruled: list[Definition] = []
    dialect = lex.catalog.dialect
    for clause in (asked.subject, *asked.clauses):
        on = clause.table
        for f in clause.filters:
            table = _real(lex, f.table, f.name)
            if not _about(lex, on, table):
                raise NotMine(f"{f.name} is on {table}, which is not one per {on}")
            out.append(Condition(table, f.sql, f.name))
        for senses in clause.values:
            options = [(t, s) for s in senses for t in _tables_with(lex, s) if _about(lex, on, t)]
            table, sense = _nearest(lex, parts, options)
            column = identifier(sense.column, dialect)
            sql = exp.EQ(this=exp.Column(this=column), expression=exp.Literal.string(sense.value))
            out.append(
                Condition(table, sql.sql(dialect=dialect), f"{name_words(sense.column)} '{sense.value}'")
            )
            if sense.rule is not None:
                ruled.append(sense.rule)
    return out, ruled


def _about(lex: Lexicon, on: str, table: str) -> bool:
    """Is a condition on `table` one about the rows of `on` (no table said: any)?"""
    if not on or on.lower() == table.lower():
        return True
    try:
        _joins(lex, on, [table])
    except NotMine:
        return False
    return True


def _tables_with(lex: Lexicon, sense: ValueSense) -> list[str]:
    """The tables a value's column may be on: its own, or each that has a column of that name."""
    if sense.table:
        t = lex.table(sense.table)
        return [t.name] if t is not None and t.column(sense.column) is not None else []
    return [t.name for t in lex.catalog.tables if t.column(sense.column) is not None]


def _nearest(lex: Lexicon, parts: Sequence[Part], options: Sequence[tuple[str, Any]]) -> tuple[str, Any]:
    """Of readings on several tables, the one nearest every part's table; a tie is not ours."""
    costs = sorted(((sum(lex.distance(p.table, t) for p in parts), i) for i, (t, _) in enumerate(options)))
    if not costs or costs[0][0] == float("inf"):
        raise NotMine("a word has no reading joined to what is measured")
    if len(costs) > 1 and abs(costs[1][0] - costs[0][0]) < 1e-9:
        raise NotMine("a word has two readings equally near what is measured")
    return options[costs[0][1]]


def _grouping(
    asked: Asked, lex: Lexicon, parts: Sequence[Part]
) -> tuple[tuple[tuple[str, str], ...], tuple[bool, ...]]:
    """'by <column>': the nearest reading; 'per <table>': its key, shown by its label."""
    if asked.group:
        table, column = _nearest(lex, parts, asked.group)
        return ((table, column),), (True,)
    if not asked.group_table:
        return (), ()
    t = lex.table(asked.group_table)
    key = list(lex.key_of(asked.group_table))
    if t is None or len(key) != 1:
        raise NotMine(f"the rows of {asked.group_table} have no key to group by")
    labels = [c for c in label_columns(lex, t.name) if c.lower() != key[0].lower()]
    columns = [(t.name, key[0]), *((t.name, c) for c in labels)]
    return tuple(columns), (not labels, *(True for _ in labels))


def _dates(
    asked: Asked, lex: Lexicon, vocab: Vocabulary, parts: Sequence[Part]
) -> tuple[tuple[str, str, str, str], ...]:
    """Per part, (table, date column, start, end): a year on the part's own date column — the
    one it has; a fiscal year on the date the fiscal instruction gives the nearest thing it
    names ('a claim to that of its loss_date': total loss by its claim's loss date)."""
    if not asked.year:
        return ()
    start, end = dt.date(asked.year, 1, 1), dt.date(asked.year + 1, 1, 1)
    if asked.fiscal:
        if vocab.fiscal is None:
            raise NotMine("no instruction says when a fiscal year runs")
        rule, first, _, example = vocab.fiscal
        try:
            start = first.replace(year=first.year + asked.year - example)
            end = first.replace(year=first.year + asked.year - example + 1)
        except ValueError as exc:
            raise NotMine(f"fiscal {asked.year} has no such start date") from exc
    out = []
    for p in parts:
        if asked.fiscal:
            table, column = _nearest(lex, [p], _ruled_dates(lex, rule.text))
        else:
            table, column = p.table, _own_date(lex, p.table)
        out.append((table, column, start.isoformat(), end.isoformat()))
    return tuple(out)


def _dated(lex: Lexicon, table: str) -> list[str]:
    t = lex.table(table)
    return [
        c.name for c in (t.columns if t else ()) if column_kind(lex, table, c.name) in ("date", "datetime")
    ]


def _own_date(lex: Lexicon, table: str) -> str:
    dated = _dated(lex, table)
    if len(dated) != 1:
        raise NotMine(f"{table} has {len(dated)} date columns the year could be about")
    return dated[0]


def _ruled_dates(lex: Lexicon, text: str) -> list[tuple[str, str]]:
    """The date columns an instruction names, on the tables it names ('a policy … its effective_date')."""
    said_words = normal(text)

    def says(words: str) -> bool:
        return bool(words) and said(words, list(said_words))

    return [
        (t.name, c)
        for t in lex.catalog.tables
        if says(name_words(t.name))
        for c in _dated(lex, t.name)
        if re.search(rf"\b{re.escape(c)}\b", text, re.IGNORECASE)
    ]


def _joins(lex: Lexicon, root: str, tables: Sequence[str]) -> View:
    """The join graph's own tree from `root` to `tables`, when it is many-to-one all the way:
    each step follows a foreign key to the key it references (a row of `root` meets at most one
    row of each table, so nothing is counted twice). Never another path hunted for."""
    view = build_view(lex.db, list(dict.fromkeys(t.lower() for t in (root, *tables))), question="")
    aliases = view.aliases
    joined = {t.lower() for t in aliases.values()}
    if view.root_table.lower() != root.lower() or view.dropped or not {t.lower() for t in tables} <= joined:
        raise NotMine(f"{', '.join(tables)} cannot be joined from {root}")
    if len({t.lower() for t in aliases.values()}) != len(aliases):
        raise NotMine("a table is joined twice")
    for step in view.steps:
        parent = aliases[step.on[0][0].split(".", 1)[0]] if step.on else ""
        mine = tuple(left.split(".", 1)[1].lower() for left, _ in step.on)
        theirs = tuple(right.split(".", 1)[1].lower() for _, right in step.on)
        forward = any(
            e.table.lower() == parent.lower()
            and e.ref_table.lower() == step.table.lower()
            and tuple(c.lower() for c in e.columns) == mine
            and tuple(c.lower() for c in e.ref_columns) == theirs
            and e.ref_unique
            for e in lex.db.graph.edges_between(parent, step.table)
        )
        if not forward or step.fans_out or step.where or step.within:
            raise NotMine(f"joining {step.table} to {parent} is not many-to-one from {root}")
    return replace(view, steps=tuple(replace(s, kind="inner") for s in view.steps))


def _listed(lex: Lexicon, table: str, conditions: Sequence[Condition]) -> tuple[str, ...]:
    """A listed row shown by its key, its label, its other unique names, and the columns its
    filters test (so the reader sees why it is listed), in the table's order."""
    t = lex.table(table)
    if t is None:
        return ()
    wanted = {c.lower() for c in (*lex.key_of(table), *label_columns(lex, table))}
    wanted |= {u[0].lower() for u in t.unique if len(u) == 1}
    for c in conditions:
        if c.table.lower() == table.lower():
            tested = sqlglot.parse_one(c.sql, read=lex.catalog.dialect).find_all(exp.Column)
            wanted |= {col.name.lower() for col in tested if col.find_ancestor(exp.Select) is None}
    return tuple(c.name for c in t.columns if c.name.lower() in wanted)


# ---------------------------------------------------------------------------------------------
# the SQL: over base tables, the joins written out (run through core.run like any keyword answer)


def sql_of(bound: Bound, lex: Lexicon) -> str:
    """The query for a bound metric, count or list question."""
    dialect = lex.catalog.dialect
    names = [safe_name(c) for _, c in bound.group]
    if bound.asked.rule == "list":
        return _rows(bound, lex).sql(dialect=dialect)
    if bound.ratio is None:
        part = bound.parts[0]
        select = _aggregated(bound, lex, 0, names, part.ref)
        shown = [n for n, keep in zip(names, bound.shown, strict=True) if keep]
        if shown != names:
            select = exp.select(*(_out(n, dialect) for n in (*shown, part.ref))).from_(
                select.subquery("grouped")
            )
        if names:
            ordered = exp.Ordered(this=_out(part.ref, dialect), desc=True)
            select = select.order_by(ordered, *(_out(n, dialect) for n in shown))
        return select.sql(dialect=dialect)
    return _ratio(bound, lex, names)


def _ratio(bound: Bound, lex: Lexicon, names: Sequence[str]) -> str:
    """Numerator and denominator each aggregated per group, then divided: a group either side
    has is kept; no numerator rows is 0 when it adds up or counts (no losses: a loss ratio of 0)."""
    dialect = lex.catalog.dialect
    ref = _name(bound.ratio.ref if bound.ratio is not None else "ratio", dialect)
    keys = [f"g{i}" for i in range(len(names))]
    num, den = (_aggregated(bound, lex, i, keys, "v").sql(dialect=dialect) for i in (0, 1))
    top = sqlglot.parse_one(bound.parts[0].aggregate, read=dialect)
    zero = isinstance(top, exp.Sum | exp.Count)
    if not keys:
        upper = f"COALESCE(({num}), 0)" if zero else f"({num})"
        return f"SELECT CAST({upper} AS DOUBLE PRECISION) / NULLIF(({den}), 0) AS {ref}"
    upper = "COALESCE(num.v, 0)" if zero else "num.v"
    listed = ", ".join(keys)
    present = " AND ".join(f"{k} IS NOT NULL" for k in keys)
    shown = ", ".join(
        f"grp.{k} AS {_name(n, dialect)}" for k, n, keep in zip(keys, names, bound.shown, strict=True) if keep
    )
    on = {side: " AND ".join(f"{side}.{k} = grp.{k}" for k in keys) for side in ("num", "den")}
    return (
        f"WITH num AS ({num}), den AS ({den}), "
        f"grp AS (SELECT {listed} FROM num WHERE {present} UNION SELECT {listed} FROM den WHERE {present}) "
        f"SELECT {shown}, CAST({upper} AS DOUBLE PRECISION) / NULLIF(den.v, 0) AS {ref} "
        f"FROM grp LEFT JOIN num ON {on['num']} LEFT JOIN den ON {on['den']} ORDER BY {ref} DESC"
    )


def _aggregated(bound: Bound, lex: Lexicon, i: int, names: Sequence[str], value: str) -> exp.Select:
    """One part's aggregate over its joins, per the group columns (named `names`)."""
    view = bound.views[i]
    part = bound.parts[i]
    dialect = lex.catalog.dialect
    groups = [_column(lex, view, t, c) for t, c in bound.group]
    aggregate = _qualified(lex, view, part.table, part.aggregate)
    select = _from(view, dialect).select(
        *(g.as_(n) for g, n in zip(groups, names, strict=True)), aggregate.as_(value)
    )
    select = _where(select, bound, lex, i)
    return select.group_by(*groups) if groups else select


def _rows(bound: Bound, lex: Lexicon, *, ordered: bool = True) -> exp.Select:
    view = bound.views[0]
    table = bound.parts[0].table
    columns = [_column(lex, view, table, c) for c in bound.listed]
    select = _where(_from(view, lex.catalog.dialect).select(*columns), bound, lex, 0)
    keys = {k.lower() for k in lex.key_of(table)}
    order = [c for c, name in zip(columns, bound.listed, strict=True) if name.lower() in keys] or columns
    return select.order_by(*(c.copy() for c in order)) if ordered else select


def _from(view: View, dialect: str) -> exp.Select:
    select = exp.Select()
    select.set("from_", view.from_expr(dialect))
    select.set("joins", view.join_exprs(view.steps, dialect))
    return select


def _where(select: exp.Select, bound: Bound, lex: Lexicon, i: int) -> exp.Select:
    """The part's own filter, the named filters and values, and the period, each on its table."""
    view, part = bound.views[i], bound.parts[i]
    conditions = [_qualified(lex, view, c.table, c.sql) for c in bound.conditions]
    if part.condition:
        conditions.insert(0, _qualified(lex, view, part.table, part.condition))
    if bound.dates:
        table, column, start, end = bound.dates[i]
        dated = _column(lex, view, table, column)
        conditions.append(exp.GTE(this=dated, expression=exp.Literal.string(start)))
        conditions.append(exp.LT(this=dated.copy(), expression=exp.Literal.string(end)))
    return select.where(exp.and_(*conditions)) if conditions else select


def _alias(view: View, table: str) -> str:
    for alias, t in view.aliases.items():
        if t.lower() == table.lower():
            return alias
    raise NotMine(f"{table} is not joined")


def _column(lex: Lexicon, view: View, table: str, column: str) -> exp.Column:
    return column_expr(view, _alias(view, table), column, lex.catalog.dialect)


def _qualified(lex: Lexicon, view: View, table: str, sql: str) -> exp.Expr:
    """A definition's snippet with its own columns (not those of its subqueries) on `table`'s
    alias, so the joined tables' columns of the same name cannot be taken for them."""
    dialect = lex.catalog.dialect
    t = lex.table(table)
    try:
        node = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise NotMine(f"could not read {sql!r}: {exc}") from exc
    for col in list(node.find_all(exp.Column)):
        if col.find_ancestor(exp.Select) is not None:
            continue
        if col.table and col.table.lower() != table.lower():
            raise NotMine(f"{sql!r} names another table's column")
        real = t.column(col.name) if t is not None else None
        if real is None:
            raise NotMine(f"{sql!r}: {table} has no column {col.name}")
        qualified = _column(lex, view, table, real.name)
        if col is node:
            return qualified
        col.replace(qualified)
    return node


# ---------------------------------------------------------------------------------------------
# entities: counted, and ranked by the rows they are linked to


@dataclass(frozen=True)
class EntityShape:
    """What an entity's rows hold: the column that identifies one, the one that names it, and
    where each column comes from (output column, table, column)."""

    key: str
    label: str
    sources: tuple[tuple[str, str, str], ...]


def entity_shape(lex: Lexicon, d: Definition) -> EntityShape:
    """Read from the entity's SELECT: its key is the first column that is its table's key."""
    try:
        tree = sqlglot.parse_one(definition_sql(d), read=lex.catalog.dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise NotMine(f"could not read the entity {d.name}: {exc}") from exc
    if not isinstance(tree, exp.Select):
        raise NotMine(f"the entity {d.name} is no plain SELECT")
    tables = {t.alias_or_name.lower(): t.name for t in _own_tables(tree)}
    sources: list[tuple[str, str, str]] = []
    for projection in tree.expressions:
        if isinstance(projection, exp.Star) and len(tables) == 1:
            table = next(iter(tables.values()))
            t = lex.table(table)
            sources += [(c.name, table, c.name) for c in (t.columns if t else ())]
            continue
        col = projection.unalias() if isinstance(projection, exp.Alias) else projection
        if not isinstance(col, exp.Column):
            continue
        source = tables.get(col.table.lower()) if col.table else next(iter(tables.values()), None)
        if source is not None:
            sources.append((projection.alias_or_name, source, col.name))
    key = next((out for out, t, c in sources if [k.lower() for k in lex.key_of(t)] == [c.lower()]), "")
    if not key:
        raise NotMine(f"nothing identifies one {d.name}")
    labels = {c.lower() for t in {t for _, t, _ in sources} for c in label_columns(lex, t)}
    label = next((out for out, _, c in sources if c.lower() in labels and out != key), "")
    return EntityShape(key, label, tuple(sources))


def _own_tables(tree: exp.Select) -> list[exp.Table]:
    """The tables a SELECT reads itself (FROM and JOINs), not those of its subqueries."""
    from_ = tree.args.get("from_")
    joined = [j.this for j in tree.args.get("joins") or ()]
    return [t for t in ([from_.this] if from_ is not None else []) + joined if isinstance(t, exp.Table)]


def entity_sql(asked: Asked, lex: Lexicon, vocab: Vocabulary) -> tuple[str, tuple[Definition, ...], str]:
    """'how many agents', 'agents with the most in-force policies': the SQL over the entity
    named like a table (expanded before the guard), what it used, and the reading in words."""
    entity = asked.entity
    if entity is None:
        raise NotMine("no entity")
    dialect = lex.catalog.dialect
    shape = entity_shape(lex, entity)
    ref, key = entity.ref, _name(shape.key, dialect)
    if asked.rule == "count":
        if asked.clauses or asked.group or asked.group_table or asked.year:
            raise NotMine("a count of an entity with more said about it")
        out = safe_name(f"number of {plural(entity.name)}")
        return (
            f"SELECT COUNT(DISTINCT {key}) AS {out} FROM {ref}",
            (entity,),
            f"number of {plural(entity.name)}; {_glossary([entity])}",
        )
    table = _real(lex, asked.subject.table, "the ranking")
    keys = [k.lower() for k in lex.key_of(table)]
    links = [
        out
        for out, t, c in shape.sources
        if (t.lower() == table.lower() and [c.lower()] == keys) or _references(lex, t, c, table, keys)
    ]
    if len(keys) != 1 or len(links) != 1:
        raise NotMine(f"{entity.name} is not linked to one {table} by its key")
    bound = bind(Asked("list", subject=asked.subject), lex, vocab, also=(entity,))
    inner = _rows(replace(bound, listed=(lex.key_of(table)[0],)), lex, ordered=False).sql(dialect=dialect)
    n = safe_name(f"number of {plural(name_words(table))}")
    label = _name(shape.label or shape.key, dialect)
    ranked = (
        f"WITH ranked AS (SELECT {key}, {label}, COUNT(DISTINCT {_name(links[0], dialect)}) AS {n} "
        f"FROM {ref} WHERE {_name(links[0], dialect)} IN ({inner}) GROUP BY {key}, {label}) "
    )
    best = (
        f"ORDER BY {n} DESC, {label} LIMIT {asked.top}"
        if asked.top
        else (f"WHERE {n} = (SELECT MAX({n}) FROM ranked) ORDER BY {label}")
    )
    said = " and ".join(c.said for c in bound.conditions)
    words = f"{plural(entity.name)} with the most {plural(name_words(table))}" + (
        f" ({said})" if said else ""
    )
    return (
        ranked + f"SELECT {label}, {n} FROM ranked {best}",
        bound.using,
        f"{words}; {_glossary(bound.using)}",
    )


def _references(lex: Lexicon, table: str, column: str, to: str, keys: Sequence[str]) -> bool:
    return any(
        e.table.lower() == table.lower()
        and [c.lower() for c in e.columns] == [column.lower()]
        and e.ref_table.lower() == to.lower()
        and [c.lower() for c in e.ref_columns] == list(keys)
        and e.ref_unique
        for e in lex.db.graph.edges_between(table, to)
    )


def _out(name: str, dialect: str) -> exp.Column:
    """An output column of ours, by its name."""
    return exp.Column(this=identifier(name, dialect, alias=True))


def _name(name: str, dialect: str) -> str:
    return identifier(name, dialect, alias=True).sql(dialect=dialect)


# ---------------------------------------------------------------------------------------------
# the answer


@dataclass(frozen=True)
class Written:
    """A question this grammar answers: its SQL, the definitions it uses, the reading in words."""

    asked: Asked
    sql: str
    using: tuple[Definition, ...]
    reading: str


def write(question: str, lex: Lexicon, definitions: Definitions) -> Written:
    """The question read, bound and written; raises NotMine when this grammar does not answer."""
    vocab = vocabulary(lex, definitions)
    read = lexemes(question, vocab)
    asked = parse(read)
    if asked is None:
        unplaced = [x.words for x in read if x.kind == "unknown"]
        raise NotMine(f"not placed: {', '.join(unplaced)}" if unplaced else "no rule reads these words")
    if asked.entity is not None:
        sql, using, reading = entity_sql(asked, lex, vocab)
        return Written(asked, sql, using, reading)
    bound = bind(asked, lex, vocab)
    return Written(asked, sql_of(bound, lex), bound.using, _reading_of(bound, lex))


def answer_defined(
    db: Database, request: Request, lex: Lexicon, settings: EngineSettings, trace: Trace
) -> Outcome | None:
    """The answer to a question about definitions, or None: keyword mode reads it as before."""
    with trace.stage("definitions grammar") as st:
        try:
            written = write(request.question, lex, request.definitions)
        except NotMine as exc:
            st.outputs = {"declined": str(exc)}
            return None
        st.outputs = {"read": written.reading, "rule": written.asked.rule, "sql": written.sql}
    run = run_over_view(db, written.sql, None, settings, trace, request.on_stage, request.definitions)
    outcome = outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="keyword",
        interpretation=written.reading,
    )
    if outcome.status != "answer":
        return outcome
    with trace.stage("used definitions") as st:
        st.outputs = {d.name: shown_sql(d) for d in written.using}
    return replace(outcome, using=written.using)


def said_definitions(question: str, definitions: Definitions) -> tuple[Definition, ...]:
    """The metrics, named filters and entities the question says by name or synonym: meaning the
    rest of keyword mode does not know, so it must not answer in their place (right or silent)."""
    return tuple(
        p.definition
        for p in pick(question, definitions)
        if p.why.startswith("said") and p.definition.kind in ("metric", "filter", "entity")
    )


def unplaced_definitions_text(named: Sequence[Definition]) -> str:
    """The decline when the question names definitions this grammar could not place."""
    words = ", ".join(f"'{d.name}'" for d in named[:3])
    example = next((d for d in named if d.kind == "metric"), named[0])
    shape = (
        f"'{example.name} by <something it is grouped by>'"
        if example.kind == "metric"
        else f"'how many {example.name} …'"
    )
    return (
        f"I know what {words} mean{'s' if len(named) == 1 else ''} here, but I could not read the rest of the"
        f" question without a language model, and answering with my own reading of {words} could be"
        f" wrong. Questions shaped like {shape} work in keyword mode."
    )


def _reading_of(bound: Bound, lex: Lexicon) -> str:
    """'total loss per line of business; total loss = everything a claim costs'."""
    asked = bound.asked
    table = name_words(bound.parts[0].table)
    head = {
        "metric": asked.metric.name if asked.metric else "",
        "count": f"number of {plural(table)}",
        "list": plural(table),
    }.get(asked.rule, "")
    shown = [name_words(c) for (_, c), keep in zip(bound.group, bound.shown, strict=True) if keep]
    if asked.group_table:
        shown = [name_words(asked.group_table)]
    words = head + (f" per {', '.join(shown)}" if shown else "")
    if bound.conditions:
        words += f" for {' and '.join(c.said for c in bound.conditions)}"
    if bound.dates:
        _, _, start, end = bound.dates[0]
        last = (dt.date.fromisoformat(end) - dt.timedelta(days=1)).isoformat()
        period = f"fiscal {asked.year} ({start} to {last})" if asked.fiscal else str(asked.year)
        dated = ", ".join(sorted({f"{name_words(t)} {name_words(c)}" for t, c, _, _ in bound.dates}))
        words += f" in {period} (by {dated})"
    return f"{words}; {_glossary(bound.using)}"


def _glossary(using: Sequence[Definition]) -> str:
    """'total loss = everything a claim costs; open claim = a claim still being handled'."""
    return "; ".join(f"{d.name} = {_gloss(d)}" for d in using if d.kind in ("metric", "filter", "entity"))


def _gloss(d: Definition) -> str:
    if d.ratio:
        return f"{d.numerator} / {d.denominator}"
    first = re.split(r"[.:;(]", d.description, maxsplit=1)[0].strip()
    if first:
        return first[0].lower() + first[1:]
    return d.sql or d.filter or d.table
