"""Find the question's words in the schema and the stored values, and pick one coherent reading.

DANKE §3 in two steps. *Matching discovery*: every run of content words is split into phrases
(longest first) and each phrase is looked up in the keyword dictionary (table and column names,
synonyms) and in the value index (stored values and the catalog's code meanings). *Matching
optimisation*: each phrase keeps its few best senses, and one sense per phrase is chosen so that
the senses are good matches *and* close together in the foreign-key graph — the reading whose
tables join along the cheapest tree wins, so 'active' next to 'clients' is client.status = 'ACT',
not a host status. When two readings of one phrase are equally good, the phrase is ambiguous and
the caller asks the person instead of guessing.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Literal

import sqlalchemy as sa

from core.dictionary import expanded_words, keyword_dictionary, name_words, split_identifier, stem
from core.dictionary import words as folded_words
from core.joins import graph_weights
from core.keyword import meanings
from core.keyword.lexicon import WORDS
from core.keyword.readings import Reading
from core.keyword.shapes import AGENT_NOUNS, BUCKET_ADVERBS, GLUE, NAME_SUFFIXES, ROW_NOUNS, STOP, Cue, Shape
from core.values import Access, fold

if TYPE_CHECKING:
    from core.catalog import Catalog, Column, Table
    from core.database import Database

SCHEMA_MIN = 0.8  # a name or synonym match below this is noise
_NOUN_TAILS = WORDS.sets["noun_suffixes"]  # pay → payment, register → registration, rent → rental
# Words for the sexes a column named sex or gender often stores as one letter (lexicon.yaml `sexes`).
SEX_CODES = dict(WORDS.sexes)
SEX_MEANINGS = {"F": "female", "M": "male"}
SEX_COLUMNS = frozenset(["sex", "gender", "sex code", "gender code"])
VALUE_MIN = 0.84  # stored values: below this a fuzzy match misleads more than it helps
FUZZY_VALUE_MIN = 0.9  # a value neither equal to nor containing the words must be this close
MEANING_MIN = 0.9  # the catalog's meaning of a code ('active' for 'ACT')
MAX_PHRASE = 4  # words per phrase
PHRASE_MIN = 0.9  # several words are read as one name only when they match it well
SENSES_KEPT = 6
SENSE_MARGIN = 0.12  # senses this far below a phrase's best are not considered
JOIN_COST = 0.1  # a reading that needs one more join must match this much better
AMBIGUOUS = 0.03  # two readings this close are a question for the person ...
MATCH_TIE = 0.05  # ... when their words match equally well, too
BEAM = 64
ROLE_MISFIT = 0.15  # 'from LAX': a to_*/destination column is this much less likely
CACHE_SIZE = 4096  # phrases remembered per database
VALUE_CACHE_S = 60.0

DATE_SAMPLE = 50  # rows read to tell whether a text column holds dates
DATE_SHARE = 0.8  # ... and the share of them that must look like ISO dates
_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")

log = logging.getLogger(__name__)

SenseKind = Literal["table", "column", "value"]


@dataclass(frozen=True)
class Sense:
    """One thing a phrase may mean: a table, a column, or a stored value of a column."""

    kind: SenseKind
    table: str
    column: str | None = None
    value: str | None = None  # the stored spelling; for op="contains" the typed words
    score: float = 0.0
    via: str = "name"  # name | synonym | value | meaning | contains | fuzzy | choice
    meaning: str = ""  # a code's meaning from the catalog ('active' for 'ACT')
    op: Literal["=", "contains"] = "="
    examples: tuple[str, ...] = ()  # stored values a 'contains' sense matches

    @property
    def where(self) -> str:
        return f"{self.table}.{self.column}" if self.column else self.table

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        return (self.kind, self.where, self.value)

    def reading(self, words: str) -> Reading:
        return Reading(words=words, table=self.table, column=self.column, value=self.value, op=self.op)


@dataclass(frozen=True)
class Mention:
    """A phrase of the question and what it may mean (best first); `sense` is the chosen one.
    Mentions do not overlap, so `start` names one."""

    start: int  # token span in the Shape
    end: int
    words: str  # as typed
    senses: tuple[Sense, ...]
    sense: Sense | None = None
    pinned: bool = False  # settled by the person's choice (a Reading)
    quoted: bool = False
    alternatives: tuple[Sense, ...] = ()  # equally good other readings
    rivals: tuple[tuple[Sense, float], ...] = ()  # other readings, each with how much worse it fits
    names_value: bool = False  # a column word that only says where the neighbouring value is
    alias: bool = False  # 'Chicago' in 'Chicago (ORD)': the code in brackets stands for it

    @property
    def table(self) -> str | None:
        return self.sense.table if self.sense else None


@dataclass(frozen=True)
class Matching:
    mentions: tuple[Mention, ...]
    unmatched: tuple[int, ...]  # token indices of content words nothing matched


# ---------------------------------------------------------------------------------------------
# per-database helpers, built once


class Lexicon:
    """The keyword dictionary, the value index and table distances of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.catalog: Catalog = db.catalog
        self.access = Access.of(db)
        self.dictionary = keyword_dictionary(self.catalog, self.access)
        self.weights = graph_weights(db.graph)
        self._dist: dict[str, dict[str, float]] = {}
        # Lookups repeat across questions ('clients', 'per country'); the schema's words never go
        # stale, stored values do when the index is refreshed, so they are kept for a minute.
        self._schema_cache: OrderedDict[str, list[Sense]] = OrderedDict()
        self._value_cache: OrderedDict[str, tuple[float, list[Sense]]] = OrderedDict()
        self._lock = threading.Lock()
        self._links: set[frozenset[tuple[str, str]]] | None = None
        self._text_dates: dict[str, frozenset[str]] = {}
        self._own_words: dict[str, set[tuple[str, str]]] | None = None
        self._lent: dict[tuple[str, ...], tuple[meanings.Coded, float]] | None = None

    # -- distances -----------------------------------------------------------------------------

    def distance(self, a: str, b: str) -> float:
        """Join cost between two tables (shortest path in the relationship graph); inf if none."""
        a, b = a.lower(), b.lower()
        if a == b:
            return 0.0
        row = self._dist.get(a)
        if row is None:
            row = _dijkstra(self.weights, a)
            with self._lock:
                self._dist[a] = row
        return row.get(b, math.inf)

    def tree_cost(self, tables: Sequence[str]) -> float:
        """Cost of joining `tables`: a minimum spanning tree over their pairwise distances
        (within a factor of two of the Steiner tree the view will use, and cheap)."""
        nodes = list(dict.fromkeys(t.lower() for t in tables))
        if len(nodes) < 2:
            return 0.0
        in_tree = {nodes[0]}
        cost = 0.0
        while len(in_tree) < len(nodes):
            d, n = min((self.distance(a, b), b) for a in in_tree for b in nodes if b not in in_tree)
            if math.isinf(d):
                return math.inf
            cost += d
            in_tree.add(n)
        return cost

    # -- lookups -------------------------------------------------------------------------------

    def schema(self, phrase: str) -> list[Sense]:
        """Tables and columns the phrase names, best first. A phrase of several words that spells
        a column's name word for word is that column first: the dictionary drops 'number' as a
        filler word, so 'train number' alone would name the table train."""
        phrase = _number_sign(phrase)  # '# of customers' spells no_of_customers (and _said)
        cached: list[Sense] | None = _get(self._schema_cache, phrase)
        if cached is not None:
            return cached
        out: dict[tuple[str, str | None], Sense] = {}
        typed = folded_words(phrase)
        for m in self.dictionary.match(phrase, limit=12, min_score=SCHEMA_MIN):
            if m.via == "description":
                continue
            if len(typed) == 1 and m.score < 0.9 and not _same_start(typed[0], m.column or m.table):
                continue  # 'gmail' is no misspelt Email: a typo keeps a word's first letter
            kind: SenseKind = "column" if m.column else "table"
            s = Sense(kind, m.table, m.column, None, m.score, m.via)
            if (m.table, m.column) not in out or out[(m.table, m.column)].score < s.score:
                out[(m.table, m.column)] = s
        said = _said(phrase)
        if len(said.split()) > 1:  # 'card type' is card_type_code: a code of the card's type
            for term in [*self.dictionary.spelled(said), *self.dictionary.spelled(f"{said} code")]:
                out[(term.table, term.column)] = Sense("column", term.table, term.column, None, 1.0, "name")
        if len(said.split()) > 1:  # 'current CPU usage': the catalog's synonym of one column, as said
            for term in self._synonym_of_one_column(said):
                out[(term.table, term.column)] = Sense(
                    "column", term.table, term.column, None, 1.0, "synonym"
                )
        table_named = any(s.kind == "table" and name_words(s.table) == said for s in out.values())
        boost = len(said.split()) > 1 and not table_named  # 'train number': train_number, not the table train
        if boost:
            out = {k: replace(s, score=1.0) if _spelled(s, phrase) else s for k, s in out.items()}
        senses = sorted(
            out.values(), key=lambda s: (-s.score, boost and not _spelled(s, phrase), s.kind != "table")
        )
        if not senses and len(typed) == 1:
            senses = self._own_word(stem(typed[0])) or self._verb_noun(typed[0])
        _put(self._schema_cache, phrase, senses)
        return senses

    def _synonym_of_one_column(self, said: str) -> list[Any]:
        """The column whose catalog synonym the words are, word for word, when they are the
        synonym of that one column and of no table: an analyst wrote them for it, so they beat
        any split of them into looser parts ('current CPU' + 'usage')."""
        terms = self.dictionary._by_text.get(said, [])
        columns = {(t.table, t.column) for t in terms if t.column and not t.table_part}
        if len(columns) != 1 or any(t.column is None for t in terms):
            return []
        return [t for t in terms if t.column and t.via == "synonym" and not t.table_part][:1]

    def _verb_noun(self, verb: str) -> list[Sense]:
        """The table a verb's noun names, when the verb names nothing itself: 'when did Acme last
        pay' asks of payments, 'ship' of shipments, 'register' of registrations. Only a table
        named by a noun outright (score ≥ 0.95), and only one: a looser match, or two nouns of
        the verb naming two tables, is no reading."""
        stems = [verb, verb[:-1]] if verb.endswith("e") else [verb]
        named: set[str] = set()
        for noun in (f"{s}{tail}" for s in stems for tail in _NOUN_TAILS):
            found = [
                m
                for m in self.dictionary.match(noun, limit=4, min_score=0.95)
                if m.column is None and m.via == "name"
            ]
            if len(found) == 1:
                named.add(found[0].table)
        return [Sense("table", named.pop(), None, None, 0.9, "name")] if len(named) == 1 else []

    def _own_word(self, word: str) -> list[Sense]:
        """The one column named its table's name then `word` ('price' → Products.product_price):
        the dictionary keeps a one-word rest of a column's name out ('name' would name every
        table's), so a word that names nothing else names the column it ends, when only one
        does."""
        if self._own_words is None:
            found: dict[str, set[tuple[str, str]]] = {}
            for t in self.dictionary.terms:
                if t.column is None or t.via != "name" or t.table_part or t.pointer:
                    continue
                head = name_words(t.table)
                if t.text.startswith(f"{head} ") and len(t.text.split()) == len(head.split()) + 1:
                    found.setdefault(t.text.split()[-1], set()).add((t.table, t.column))
            self._own_words = found
        cols = self._own_words.get(word, set())
        if len(cols) != 1 or word in WORDS.sets["row_nouns"]:
            return []
        table, column = next(iter(cols))
        return [Sense("column", table, column, None, 0.9, "name")]

    def values(self, phrase: str, quoted: bool = False) -> list[Sense]:
        """Stored values the phrase names: equal (folded), meaning of a code, contained in a
        value (a LIKE filter), or a close spelling of one value."""
        key = f"{quoted}\x00{phrase}"
        stored: tuple[float, list[Sense]] | None = _get(self._value_cache, key)
        if stored is not None and time.monotonic() - stored[0] < VALUE_CACHE_S:
            return stored[1]
        folded = fold(phrase)
        senses: list[Sense] = []
        letter = len(folded) == 1 and phrase.strip().isalpha() and phrase.strip().isupper()  # 'a grade of B'
        if folded and (letter or not (len(folded) < 2 or folded.isdigit())):
            matches = self.db.values.lookup(phrase, k=12, min_score=0.6)
            if letter:
                matches = [m for m in matches if fold(str(m.value)) == folded]
            by_column: dict[tuple[str, str], list[Any]] = {}
            for m in matches:
                by_column.setdefault((m.table, m.column), []).append(m)
            for ms in by_column.values():
                sense = _value_sense(folded, ms, quoted)
                if sense is not None:
                    senses.append(sense)
        if folded in SEX_CODES and not any(x.score >= 1.0 for x in senses):
            senses.extend(self._sex_codes(folded))
        if not quoted:
            senses = self._described(phrase, senses) + self._country(phrase, senses)
        senses.sort(key=lambda s: -s.score)
        _put(self._value_cache, key, (time.monotonic(), senses))
        return senses

    def _described(self, phrase: str, senses: list[Sense]) -> list[Sense]:
        """`senses` with the coded value whose catalog description lends the phrase's words
        ('wire transfers' → 'wire', "bank wire transfer": core/keyword/meanings.py)."""
        if self._lent is None:
            self._lent = meanings.index(
                (m.table, m.column, m.code, m.meaning) for m in self.db.values.meanings()
            )
        found = self._lent.get(meanings.said(phrase))
        if found is None or any(x.via == "value" and x.score >= 1.0 for x in senses):
            return senses  # a value as stored is that value ('United States', not "United States and Canada")
        (table, column, code, meaning), score = found
        same = [x for x in senses if (x.table, x.column, x.value) == (table, column, code)]
        if any(x.score >= score for x in same):
            return senses
        kept = [x for x in senses if x not in same]
        return [*kept, Sense("value", table, column, code, score, "meaning", meaning)]

    def _country(self, phrase: str, senses: list[Sense]) -> list[Sense]:
        """'Swedish', 'the Swiss': the stored name of the country a demonym names (only as
        stored, in a column that holds it), when the words name nothing as surely themselves."""
        name = meanings.country(phrase)
        if name is None or any(x.score >= meanings.MEANING_WORDS_SCORE for x in senses):
            return []
        return [
            Sense("value", m.table, m.column, m.value, meanings.MEANING_WORDS_SCORE, "meaning", name)
            for m in self.db.values.lookup(name, k=12, min_score=0.6)
            if fold(str(m.value)) == fold(name) and m.via != "meaning"
        ]

    def _sex_codes(self, folded: str) -> list[Sense]:
        """'female students' where Student.Sex stores 'F': the one-letter code of a column named
        sex or gender, which no spelling of 'female' resembles."""
        code = SEX_CODES[folded]
        return [
            Sense("value", m.table, m.column, m.value, 0.97, "meaning", SEX_MEANINGS[code])
            for m in self.db.values.lookup(code, k=12, min_score=0.6)
            if fold(str(m.value)) == code.lower() and m.column.lower().replace("_", " ") in SEX_COLUMNS
        ]

    def table(self, name: str) -> Table | None:
        return self.catalog.table(name)

    def text_dates(self, table: str) -> frozenset[str]:
        """Text columns of `table` that hold ISO dates ('2024-03-01', '2024-03-01 10:00:00'), as
        SQLite databases often store them: read once from a few rows, so 'in 2024' and 'per month'
        work on them as on real date columns."""
        key = table.lower()
        if key not in self._text_dates:
            found = _sample_text_dates(self.db, self.catalog.table(table))
            with self._lock:
                self._text_dates[key] = found
        return self._text_dates[key]

    def same_thing(self, a: Sense, b: Sense) -> bool:
        """Two readings that cannot differ in the answer: the same column, or a foreign key and
        the key it references (flight.airline_code and airline.airline_code hold one value)."""
        ka = (a.table.lower(), (a.column or "").lower())
        kb = (b.table.lower(), (b.column or "").lower())
        if ka == kb:
            return True
        if a.kind != b.kind or (a.kind == "value" and a.value != b.value):
            return False
        if self._links is None:
            self._links = {
                frozenset(
                    ((e.table.lower(), e.columns[0].lower()), (e.ref_table.lower(), e.ref_columns[0].lower()))
                )
                for e in self.db.graph.edges
                if len(e.columns) == 1
            }
        return frozenset((ka, kb)) in self._links

    def key_of(self, table: str) -> tuple[str, ...]:
        """Columns that identify a row: the primary key, a unique constraint, or the column other
        tables reference (the graph infers those when nothing is declared)."""
        t = self.catalog.table(table)
        if t is None:
            return ()
        if t.primary_key:
            return tuple(t.primary_key)
        singles = [u for u in t.unique if len(u) == 1]
        if singles:
            return tuple(singles[0])
        for e in self.db.graph.edges:
            if e.ref_table.lower() == t.name.lower() and e.ref_unique and not e.is_self:
                return tuple(e.ref_columns)
        return ()


def _sample_text_dates(db: Database, t: Table | None) -> frozenset[str]:
    texts = [c.name for c in t.columns if c.kind == "text"] if t is not None else []
    if t is None or not texts:
        return frozenset()
    columns: list[sa.ColumnClause[Any]] = [sa.column(c) for c in texts]
    try:
        with db.engine.connect() as conn:
            query = sa.select(*columns).select_from(sa.table(t.name, schema=t.schema)).limit(DATE_SAMPLE)
            rows = conn.execute(query).fetchall()
    except sa.exc.SQLAlchemyError as exc:
        log.warning("cannot sample %s for dates kept as text: %s", t.name, exc)
        return frozenset()
    found = set()
    for i, name in enumerate(texts):
        values = [str(r[i]).strip() for r in rows if r[i] is not None and str(r[i]).strip()]
        if values and sum(bool(_ISO_DATE.match(v)) for v in values) >= DATE_SHARE * len(values):
            found.add(name)
    return frozenset(found)


_lexicons_lock = threading.Lock()


def lexicon(db: Database) -> Lexicon:
    """The Lexicon of `db`'s current catalog, kept on the Database (rebuilt when the catalog
    object changes after a schema refresh)."""
    catalog = db.catalog
    with _lexicons_lock:
        cached = db.__dict__.get("_keyword_lexicon")
        if cached is None or cached.catalog is not catalog:
            cached = Lexicon(db)
            db.__dict__["_keyword_lexicon"] = cached
    return cached


def _get(cache: OrderedDict[str, Any], key: str) -> Any:
    with _cache_lock:
        value = cache.get(key)
        if value is not None:
            cache.move_to_end(key)
        return value


def _put(cache: OrderedDict[str, Any], key: str, value: Any) -> None:
    with _cache_lock:
        cache[key] = value
        cache.move_to_end(key)
        while len(cache) > CACHE_SIZE:
            cache.popitem(last=False)


_cache_lock = threading.Lock()


def _dijkstra(weights: dict[str, dict[str, float]], source: str) -> dict[str, float]:
    dist = {source: 0.0}
    heap = [(0.0, source)]
    while heap:
        d, u = heapq.heappop(heap)
        if d > dist.get(u, math.inf):
            continue
        for v, w in weights.get(u, {}).items():
            nd = d + w
            if nd < dist.get(v, math.inf):
                dist[v] = nd
                heapq.heappush(heap, (nd, v))
    return dist


_WORD_EDGE = re.compile(r"\s+")


def _value_sense(folded: str, matches: list[Any], quoted: bool) -> Sense | None:
    """The best reading of `folded` among one column's matching values."""
    best = max(matches, key=lambda m: m.score)
    table, column = best.table, best.column
    if best.via == "meaning":
        if best.score >= MEANING_MIN:
            return Sense("value", table, column, best.value, best.score, "meaning", best.meaning)
        return None
    exact = [
        m
        for m in matches
        if fold(m.value) == folded or fold(m.value).replace(" ", "") == folded.replace(" ", "")
    ]
    if exact:
        return Sense("value", table, column, exact[0].value, 1.0, "value")
    padded = f" {folded} "
    containing = [
        m
        for m in matches
        if padded in f" {fold(m.value)} " and m.score >= (0.5 if quoted else VALUE_MIN - 0.1)
    ]
    if containing:
        score = max(m.score for m in containing)
        if score < VALUE_MIN and not quoted:
            return None
        examples = tuple(m.value for m in sorted(containing, key=lambda m: -m.score)[:3])
        return Sense(
            "value", table, column, folded, min(score, 0.97), "contains", op="contains", examples=examples
        )
    if best.score >= FUZZY_VALUE_MIN and len(folded) >= 4:
        return Sense("value", table, column, best.value, best.score - 0.02, "fuzzy")
    return None


# ---------------------------------------------------------------------------------------------
# matching discovery: phrases of the content runs


def discover(shape: Shape, lex: Lexicon, readings: Sequence[Reading] = ()) -> Matching:
    """Split every content run into the phrases that match best; list the words nothing matched.
    `shape` comes from names_over_cues, so cue words that are part of a name are content."""
    mentions: list[Mention] = []
    unmatched: list[int] = []
    for start, end in shape.content_runs():
        best = _segment(shape, lex, start, end)
        for s, e, senses in best:
            if senses:
                mentions.append(Mention(s, e, shape.text(s, e), tuple(senses)))
            else:
                unmatched.extend(range(s, e))
    for lit in shape.literals:
        if lit.kind != "quoted":
            continue
        text = str(lit.value)
        senses = lex.values(text, quoted=True) + [s for s in lex.schema(text) if s.score >= 0.95]
        mentions.append(Mention(lit.start, lit.end, text, tuple(senses), quoted=True))
    mentions.sort(key=lambda m: m.start)
    mentions = _names_after_ids(shape, mentions)
    shared = shared_heads(shape, lex, mentions, unmatched)
    mentions = sorted([*mentions, *shared], key=lambda m: m.start)
    unmatched = [i for i in unmatched if i not in {m.start for m in shared}]
    owned = {m.start: m for m in said_of(shape, lex, mentions, unmatched)}
    covered = {k for m in owned.values() for k in range(m.start, m.end)}
    unmatched = [i for i in unmatched if i not in covered]
    mentions = sorted(
        [
            *(owned.get(m.start, m) for m in mentions if m.start in owned or m.start not in covered),
            *(m for i, m in owned.items() if i not in {x.start for x in mentions}),
        ],
        key=lambda m: m.start,
    )
    # a generic word said of a thing that has no such column matched nothing ('the names of the
    # regions affected': affected_region has no name, and storm.name is not theirs)
    unmatched += [k for m in mentions if not m.senses and not m.quoted for k in range(m.start, m.end)]
    mentions = [m for m in mentions if m.senses or m.quoted]
    mentions = attach(shape, _apply_readings(mentions, readings))
    return Matching(mentions=tuple(m for m in mentions if not m.alias), unmatched=tuple(sorted(unmatched)))


def _names_after_ids(shape: Shape, mentions: list[Mention]) -> list[Mention]:
    """'the bank branch name': 'branch' matched branch_id, and 'name' right after it the name
    column of the same table — the two words are that name, not the id."""
    out: list[Mention] = []
    for m in mentions:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.end == m.start
            and prev.senses
            and prev.senses[0].kind == "column"
            and _id_like(prev.senses[0].column or "")
            and m.words.lower() in NAME_WORDS
        ):
            own = [x for x in m.senses if x.kind == "column" and x.table == prev.senses[0].table]
            if own:
                sense = replace(own[0], score=max(own[0].score, prev.senses[0].score))
                out[-1] = Mention(prev.start, m.end, shape.text(prev.start, m.end), (sense,))
                continue
        out.append(m)
    return out


def shared_heads(shape: Shape, lex: Lexicon, mentions: list[Mention], unmatched: list[int]) -> list[Mention]:
    """'the first and last names', 'the home and away scores': a word nothing matched, then 'and'
    (or 'or', or a comma), then a column named by several words. The word takes the other
    words of that name: 'first' is first_name when 'first name' spells a column of the same
    table as 'last names' (customer_first_name, customer_last_name)."""
    at = {m.start: m for m in mentions}
    out = []
    for i in unmatched:
        m = at.get(i + 2)
        if (
            m is None
            or i + 2 >= len(shape.tokens)
            or shape.tokens[i + 1].low not in ("and", "or", ",")
            or m.end - m.start < 2
            or not m.senses
            or m.senses[0].kind != "column"
        ):
            continue
        phrase = " ".join([shape.tokens[i].low, *(t.low for t in shape.tokens[m.start + 1 : m.end])])
        senses = tuple(x for x in lex.schema(phrase) if x.table == m.senses[0].table and _spelled(x, phrase))
        if senses:
            out.append(Mention(i, i + 1, shape.text(i, i + 1), senses[:1]))
    return out


# Prepositions that say which of two columns a value belongs to ('from LAX' → from_airport).
ROLE_WORDS = {
    "from": ("from", "origin", "source", "departure", "depart", "src", "start"),
    "to": ("to", "dest", "destination", "arrival", "arrive", "target", "end"),
    "by": ("by", "author", "creator", "owner"),
    "at": ("at", "location", "site"),
}
BEFORE_VALUE = frozenset(
    ["the", "a", "an", "of", "named", "called", "titled", "is", "=", ":"]
)  # 'city of Boston'
AFTER_VALUE = frozenset(["the", "a", "an"])  # 'the "Computer Science" department'


KEY_WORDS = frozenset(["id", "ids", "identifier", "identifiers"])
# words that ask for a row's id or code rather than the row ('festival id', 'payment method codes')
ID_WORDS = KEY_WORDS | {"code", "codes", "key", "number", "numbers", "no", "nr"}
GENERIC_WORDS = KEY_WORDS | {"name", "names", "title", "titles", "details", "detail", "description"}
POSSESSIVES = frozenset(["its", "their", "his", "her"])
_DETERMINERS = frozenset(["the", "a", "an", "each", "every", "all", "any"])


def said_of(
    shape: Shape, lex: Lexicon, mentions: Sequence[Mention], unmatched: Sequence[int]
) -> list[Mention]:
    """Words said of a thing the question names, read as that thing's column.

    - 'every allergy along with its type', 'the type of each allergy': a word nothing matched is
      the thing's column when the thing's name and the word spell it (allergy_type.allergytype);
    - 'the id and name of each festival': a generic word ('id', 'name', 'title') is the column of
      the thing it is said of — its key, or the column its name and the word spell
      (festival_detail.festival_name, not artwork.name, the only column called just 'name');
    - 'the id and details of all accounts': a bare 'id' with no 'of' is the key of the thing named
      next (else just before). Without it the word matched nothing and, two letters long, slipped
      through as a filler while the answer left the ids out;
    - 'ordered by opening year': a verb form whose base word spells a column with the phrase
      after it (open_year) is that column, the two as one phrase.

    Returns the new or re-read mentions; the caller puts them in place of the old ones.
    """
    out = []
    at = {m.start: m for m in mentions}
    for i in sorted({*unmatched, *(m.start for m in mentions if m.end - m.start == 1)}):
        low = shape.tokens[i].low
        if i in at and low not in GENERIC_WORDS:
            # a matched word is re-read only when it is generic and said of something, or when
            # with that thing it names a table ('the types of restaurants': Restaurant_Type)
            owner = _owner(shape, mentions, i)
            named = _named_table(lex, owner, low) if owner is not None else None
            spelled = _spelled_with(lex, owner, low) if owner is not None and named is None else ()
            if named is not None or spelled:
                # 'the colors of the school': school.school_colors, not school_details.colors
                out.append(Mention(i, i + 1, shape.tokens[i].text, (named,) if named else spelled))
            continue
        verb = _verb_in_name(shape, lex, mentions, i) if i not in at else None
        if verb is not None:
            out.append(verb)
            continue
        owner = _owner(shape, mentions, i)
        if i in at and shape.tokens[i - 1].low in POSSESSIVES and owner and owner.senses[0].kind != "table":
            owner = None  # 'for each technician, show their name': re-read when 'their' is a thing's
        senses: tuple[Sense, ...] = ()
        if owner is not None:
            named = _named_table(lex, owner, low)
            senses = (named,) if named is not None else _owned_senses(lex, owner, low)
        elif low in KEY_WORDS and i not in at:
            senses = _nearest_keys(lex, mentions, i)
        if senses or (
            i in at and owner is not None and low in NAME_WORDS and not _its_own(lex, owner, at[i])
        ):
            out.append(Mention(i, i + 1, shape.tokens[i].text, senses))
    return out


def _verb_in_name(shape: Shape, lex: Lexicon, mentions: Sequence[Mention], i: int) -> Mention | None:
    """'ordered by opening year' is open_year, 'the budgeted amount' no column: a verb form
    right before a phrase, whose base word and that phrase spell a column, is that column."""
    low = shape.tokens[i].low
    nxt = next((m for m in mentions if m.start == i + 1), None)
    base = base_word(low)
    if base != low and (nxt is None or shape.role[i + 1] == "cue"):
        # 'churches opened each year', 'opened in 2010': the date the verb names (Open_Date);
        # 'sorted by year joined' (Year_Join); else the verb's own word: 'wines scoring above 90'
        for phrases in (
            [f"{base} {noun}" for noun in DATE_NOUNS] + [f"{noun} {base}" for noun in DATE_NOUNS],
            [base, f"{base}e"],
        ):
            named = [x for p in phrases for x in lex.schema(p) if _spelled(x, p)]
            if len({x.where for x in named}) == 1:
                return Mention(i, i + 1, shape.tokens[i].text, (named[0],))
            if named:
                break
    if nxt is None or base == low:
        return None
    phrase = f"{base} {nxt.words}"
    senses = tuple(x for x in lex.schema(phrase) if _spelled(x, phrase))
    return Mention(i, nxt.end, shape.text(i, nxt.end), senses) if senses else None


DATE_NOUNS = ("date", "year", "time")  # what a verb's date column is called after its base word


def base_word(word: str) -> str:
    """'opening' → 'open', 'budgeted' → 'budget', 'planned' → 'plan': the word a verb form is made of."""
    for end in ("ing", "ed"):
        if word.endswith(end) and len(word) > len(end) + 2:
            stem = word[: -len(end)]
            return stem[:-1] if len(stem) > 2 and stem[-1] == stem[-2] else stem
    return word


def _owner(shape: Shape, mentions: Sequence[Mention], i: int) -> Mention | None:
    """The thing the word at i is said of: the question's first thing before 'its' / 'their',
    or the thing after 'of' (across a list: 'the id, name and title of each …'). Not 'the name of
    the catalog entry': the word after it says the thing is not the catalog."""
    tokens = shape.tokens
    before = next((m for m in mentions if m.end == i and m.senses), None)
    if tokens[i].low in NAME_WORDS and before is not None and before.senses[0].kind == "table":
        return before  # 'the school name': the school's, whichever table has a column called name
    k = i - 1
    while k > 0 and (tokens[k].low in GENERIC_WORDS or tokens[k].low in (",", "and")):
        k -= 1  # 'its id, name and title': each said of the same thing
    if k >= 0 and tokens[k].low in POSSESSIVES:  # the question's subject: 'which customers … their names'
        return next((m for m in mentions if m.end <= k and m.senses), None)
    said_right_after = next((m for m in mentions if m.end == k + 1 and m.senses), None)
    if k + 1 < i and said_right_after is not None and said_right_after.senses[0].kind == "table":
        return said_right_after  # 'statement ids and details': both the statement's
    if k > 0 and tokens[k].low == ":":
        # 'for each subject: id, name and …': the thing grouped by before the colon (not 'bookings'
        # in 'for each customer with bookings: id, …'), else the last thing named before it
        things = [m for m in mentions if m.end <= k and m.senses and m.senses[0].kind == "table"]
        each = [c.end for c in shape.cues if c.kind == "group" and c.end <= k]
        grouped = [m for m in things if each and m.start >= each[-1]]
        return grouped[0] if grouped else (things[-1] if things else None)
    j = i + 1
    while j < len(tokens) and (tokens[j].low in GENERIC_WORDS or tokens[j].low in (",", "and")):
        j += 1
        if tokens[j - 1].low in (",", "and") and j < len(tokens) and shape.role[j] == "content":
            j += 1  # 'the types and details of all premises': both are the premises'
    if j >= len(tokens) or tokens[j].low != "of":
        # 'participants - id, type code and details': listed after a column of a thing, with no
        # 'of' after it, a generic word is that thing's too (Participant_Details, not Event_Details)
        listed_after = k + 1 < i and said_right_after is not None and bool(said_right_after.senses[0].column)
        return said_right_after if listed_after else None
    owner = next((m for m in mentions if m.start > j and m.senses), None)
    if owner is None or (owner.end < len(tokens) and tokens[owner.end].low in ROW_NOUNS):
        return None
    if any(
        shape.role[k] == "content" and k not in range(owner.start, owner.end)
        for k in range(j + 1, owner.start)
    ):
        return None  # another word stands between 'of' and the thing
    while owner.senses[0].kind == "table":  # 'the names of department heads': of the heads
        head = next(
            (
                m
                for m in mentions
                if m.start == owner.end
                and m.senses
                and m.senses[0].kind == "table"
                and not m.words.lower().endswith(("ed", "ing"))
            ),
            None,
        )  # a noun ('department heads', 'school bus driver'), not a verb ('mountains climbed')
        if head is None:
            break
        owner = head
    return owner


def _its_own(lex: Lexicon, owner: Mention, m: Mention) -> bool:
    """`m` matched a column of the owner's table, or of the one table the owner's rows point at
    (gymnast → people, body_builder → people: a body builder's name is people.name); not when
    they point at several ('the names of the regions affected': affected_region → region, storm)."""
    table, other = owner.senses[0].table, m.senses[0].table
    parents = {e.ref_table for e in lex.db.graph.edges if e.table == table and e.ref_table != table}
    return table == other or parents == {other}


def _named_table(lex: Lexicon, owner: Mention, word: str) -> Sense | None:
    """The table the thing's name and the word spell ('the types of restaurants':
    Restaurant_Type), unless the thing is already that table's."""
    typed = " ".join(w for w in owner.words.lower().split() if w not in _DETERMINERS)
    said = _said(f"{typed} {word}")
    return next(
        (
            x
            for x in lex.schema(said)
            if x.kind == "table"
            and name_words(x.table) == said
            and x.score >= 0.95
            and x.table != owner.senses[0].table  # 'every allergy along with its type': a column
        ),
        None,
    )


def _spelled_with(lex: Lexicon, owner: Mention, word: str) -> tuple[Sense, ...]:
    """The thing's column that its table's name and the word spell ('school colors')."""
    table = owner.senses[0].table
    phrase = f"{name_words(table)} {word}"
    return tuple(x for x in lex.schema(phrase) if x.table == table and _spelled(x, phrase))


def _owned_senses(lex: Lexicon, owner: Mention, word: str) -> tuple[Sense, ...]:
    top = owner.senses[0]
    table = top.table
    if word in KEY_WORDS:
        key = lex.key_of(table)
        return (Sense("column", table, key[0], None, 0.95, "name"),) if len(key) == 1 else ()
    typed = " ".join(w for w in owner.words.lower().split() if w not in _DETERMINERS)
    for name in dict.fromkeys([typed, name_words(top.column or top.table), name_words(table)]):
        phrase = f"{name} {word}"
        hits = tuple(x for x in lex.schema(phrase) if x.table == table and _spelled(x, phrase))
        if hits:
            return hits
    columns = [c.name for c in t.columns] if (t := lex.table(table)) else []
    if word not in GENERIC_WORDS:
        # 'the types of behavior incidents': the one column of theirs with the word in its name
        own = [c for c in columns if stem(word) in split_identifier(c)]
        return (Sense("column", table, own[0], None, 0.95, "name"),) if len(own) == 1 else ()
    # 'the name of each festival': its label column, if it has one; 'the school name': the column
    # named like the table (school.school)
    hits = tuple(x for x in lex.schema(word) if x.kind == "column" and x.table == table)
    own = [c for c in columns if word in NAME_WORDS and name_words(c) == name_words(table)]
    return hits or tuple(Sense("column", table, c, None, 0.95, "name") for c in own[:1])


def _nearest_keys(lex: Lexicon, mentions: Sequence[Mention], i: int) -> tuple[Sense, ...]:
    after = [m.senses[0].table for m in mentions if m.start > i and m.senses]
    before = [m.senses[0].table for m in reversed(mentions) if m.end <= i and m.senses]
    nearest = (after or before)[0] if after or before else None
    senses = []
    for table in dict.fromkeys([*after, *before]):
        key = lex.key_of(table)
        if len(key) == 1:
            senses.append(Sense("column", table, key[0], None, 0.95 if table == nearest else 0.85, "name"))
    return tuple(sorted(senses, key=lambda x: -x.score))


def _gap(shape: Shape, end: int, start: int, allowed: frozenset[str], limit: int = 3) -> bool:
    """Only `allowed` words between two mentions."""
    if start - end > limit:
        return False
    return all(shape.tokens[i].low in allowed for i in range(end, start))


def attach(shape: Shape, found: Sequence[Mention]) -> list[Mention]:
    """Let neighbouring words settle each other before the global choice: a value next to a column
    or table that holds it belongs there ('the "Computer Science" department', 'keyphrase
    "Machine Learning"', 'city of Boston'), a column followed by 'of <table>' belongs to that table
    ('names of the lakes'), and 'from'/'to' before a value favours from_*/to_* columns. Returns
    the mentions with their senses narrowed (left to right: a narrowed one is what the next sees)."""
    mentions = list(found)
    for i in range(len(mentions)):
        v = mentions[i]
        if v.pinned or not any(x.kind == "value" for x in v.senses):
            continue
        neighbours = []
        if i > 0 and _gap(shape, mentions[i - 1].end, v.start, BEFORE_VALUE):
            neighbours.append(i - 1)
        if i + 1 < len(mentions) and _gap(shape, v.end, mentions[i + 1].start, AFTER_VALUE):
            neighbours.append(i + 1)
        value_columns = {(x.table, x.column) for x in v.senses if x.kind == "value"}
        neighbours.sort(
            key=lambda k: not any((x.table, x.column) in value_columns for x in mentions[k].senses)
        )
        for k in neighbours:
            n = mentions[k]
            if all(x.kind == "value" for x in n.senses):
                continue
            columns = {(x.table, x.column) for x in n.senses if x.kind == "column"}
            tables = {x.table for x in n.senses if x.kind == "table"}
            keep = [x for x in v.senses if x.kind == "value" and (x.table, x.column) in columns]
            if keep and not n.pinned:
                kept = {(x.table, x.column) for x in keep}
                mentions[k] = replace(
                    n, senses=tuple(x for x in n.senses if (x.table, x.column) in kept), names_value=True
                )
            if not keep:
                keep = [x for x in v.senses if x.kind == "value" and x.table in tables]
                if all(x.op == "contains" for x in keep) and any(
                    x.kind == "value" and x.op == "=" and x.score >= 0.95 for x in v.senses
                ):
                    # 'Rock tracks': the genre stored as 'Rock', not tracks whose titles hold 'rock'
                    keep = []
            if keep:
                v = replace(v, senses=tuple(keep))
                break
        role = _role_word(shape, mentions, v)
        if role is not None:
            v = replace(
                v, senses=tuple(sorted((_role_fit(x, role) for x in v.senses), key=lambda x: -x.score))
            )
        mentions[i] = v
    mentions = _aliases(shape, mentions)
    for i in range(len(mentions)):
        c = mentions[i]
        if c.pinned or i + 1 >= len(mentions) or not any(x.kind == "column" for x in c.senses):
            continue
        j = i + 1
        while j + 1 < len(mentions) and _gap(
            shape, mentions[j - 1].end, mentions[j].start, frozenset(["and", ",", "the", "their", "its"])
        ):
            if not any(x.kind == "column" for x in mentions[j].senses):
                break
            j += 1  # 'the names and areas of the lakes': every column of the list
        nxt = mentions[j]
        if j > i + 1 and not _gap(
            shape, mentions[j - 1].end, nxt.start, BEFORE_VALUE | {"for", "all", "each"}
        ):
            nxt = mentions[i + 1]
        elif j > i + 1:
            c_end = mentions[j - 1].end
            between = [t.low for t in shape.tokens[c_end : nxt.start]]
            if between and between[0] in ("of", "for"):
                tables = {x.table for x in nxt.senses if x.kind == "table"} or {
                    x.table for x in nxt.senses[:1]
                }
                keep = [x for x in c.senses if x.kind == "column" and x.table in tables]
                if keep:
                    mentions[i] = replace(c, senses=tuple(keep))
                continue
        nxt = mentions[i + 1]
        between = [t.low for t in shape.tokens[c.end : nxt.start]]
        if (
            not between
            or between[0] not in ("of", "for")
            or not _gap(shape, c.end, nxt.start, BEFORE_VALUE | {"for", "all", "each"})
        ):
            continue
        tables = {x.table for x in nxt.senses if x.kind == "table"} or {x.table for x in nxt.senses[:1]}
        keep = [x for x in c.senses if x.kind == "column" and x.table in tables]
        if keep:
            mentions[i] = replace(c, senses=tuple(keep))
    return mentions


def _role_fit(x: Sense, role: str) -> Sense:
    """A value after 'from' is less likely in a to_*/destination column, and the other way round."""
    if x.kind != "value" or not x.column:
        return x
    words = set(x.column.lower().replace("_", " ").split())
    others = {h for r, hints in ROLE_WORDS.items() if r != role for h in hints} - set(ROLE_WORDS[role])
    if words & others and not words & set(ROLE_WORDS[role]):
        return replace(x, score=round(x.score - ROLE_MISFIT, 4))
    return x


def _role_word(shape: Shape, mentions: Sequence[Mention], v: Mention) -> str | None:
    """The nearest 'from'/'to'/... before a value, not past another mention ('from Chicago (ORD)'
    looks past the bracket to 'from')."""
    starts = {m.end for m in mentions if m.start != v.start}
    i = v.start - 1
    while i >= 0 and v.start - i <= 4:
        low = shape.tokens[i].low
        if low in ROLE_WORDS:
            return low
        if i + 1 in starts and shape.tokens[i].text != "(":
            return None
        i -= 1
    return None


def _aliases(shape: Shape, mentions: list[Mention]) -> list[Mention]:
    """'Chicago (ORD)': the parenthesised code names the same thing; keep the code only."""
    drop = set()
    for a, b in itertools.pairwise(mentions):
        toks = shape.tokens
        if (
            b.start == a.end + 1
            and toks[a.end].text == "("
            and b.end < len(toks)
            and toks[b.end].text == ")"
            and any(x.kind == "value" for x in a.senses)
            and any(x.kind == "value" for x in b.senses)
        ):
            drop.add(a.start)
    return [replace(m, senses=(), alias=True) if m.start in drop else m for m in mentions]


NAMING_CUES = frozenset(
    ["amount of", "total", "minimum", "maximum", "average", "highest", "lowest", "max", "min"]
)


TOTALS = frozenset(["total", "overall"])  # 'total number of' where 'number of …' is a stored count


def names_over_cues(shape: Shape, lex: Lexicon) -> Shape:
    """A cue word that is part of a column's name is read as the name: 'minimum connect time' is
    airport.minimum_connect_time, 'amount of orders' is about orders.amount, 'highest point' a
    column, 'monthly limit' is tx_limit_monthly rather than a monthly breakdown. Only the name
    counts, not a synonym: 'total' as a synonym of amount must not swallow 'total payment amount'.
    The name may also end with the cue's word: 'access count of documents' is access_count. A
    date word that starts a name is the name: 'last name' is last_name, not a date range; and
    'rank' compared with a number, or listed among the columns asked for ('the name, class,
    and rank of every captain'), is a column called rank, not an ordering. A count or an order
    word that spells a column with the words after it is that column ('number of hosts', 'order
    dates')."""
    for cue in shape.cues:
        low = cue.words.lower()
        if cue.kind == "bucket" and low in BUCKET_ADVERBS:
            if _part_of_name(shape, lex, cue.start):
                shape = _uncue(shape, cue, {cue.start: "content"})
            continue
        if cue.kind == "relative" and len(low.split()) == 1:
            if _starts_name(shape, lex, low, cue.end):  # 'last name', 'current balance'
                shape = _uncue(shape, cue, {cue.start: "content"})
            continue
        if cue.kind == "order" and len(low.split()) == 1 and _compared(shape, cue.end):
            if _spells(lex, low) or _spells(lex, base_word(low)):  # 'a review with rank greater than 3'
                shape = _uncue(shape, cue, {cue.start: "content"})  # ('… ranked above 3')
            continue
        if cue.kind == "order" and low in ("ordered", "order") and _places_an_order(shape, cue):
            shape = _uncue(shape, cue, {cue.start: "stop"})  # 'customers who ordered a food product'
            continue
        if cue.kind == "order" and len(low.split()) == 1 and _spells_with_next(shape, lex, cue, tables=True):
            shape = _uncue(shape, cue, {cue.start: "content"})  # 'the order dates', 'order items'
            continue
        if cue.kind == "order" and len(low.split()) == 1 and _ends_name(shape, lex, low, cue.start):
            shape = _uncue(shape, cue, {cue.start: "content"})  # 'sorted by pilot rank'
            continue
        if cue.kind == "order" and len(low.split()) == 1 and _listed_noun(shape, cue.start):
            # 'the name, class, and rank of every captain'; 'which order had the latest shipment'
            if _spells(lex, low) or _names_table(lex, low):
                shape = _uncue(shape, cue, {cue.start: "content"})
            continue
        if cue.kind == "unsupported" and _ends_name(shape, lex, low.split()[0], cue.start, exact=True):
            # 'a market share of at least 5': market_share, not a share of something
            roles = {cue.start: "content"} | {k: "stop" for k in range(cue.start + 1, cue.end)}
            shape = _uncue(shape, cue, roles)
            continue
        if cue.kind not in ("count", "agg", "super"):
            continue
        if cue.kind == "count" and _spells_with_next(shape, lex, cue):  # 'number of hosts'
            shape = _uncue(shape, cue, {k: "content" for k in range(cue.start, cue.end)})
            continue
        if cue.kind == "count" and low.split()[0] in TOTALS and _stored_count(shape, lex, cue):
            # 'the total number of customers across all banks': the sum of bank.no_of_customers
            total = Cue("agg", "SUM", cue.start, cue.start + 1, shape.tokens[cue.start].text)
            shape = _uncue(shape, cue, {k: "content" for k in range(cue.start + 1, cue.end)})
            shape = replace(shape, cues=tuple(sorted([*shape.cues, total], key=lambda c: c.start)))
            continue
        if low.startswith("number") and cue.start > 0 and shape.role[cue.start - 1] == "content":
            # 'the phone number of the party': a noun with the word before it, not a count
            shape = _uncue(shape, cue, {cue.start: "content"})
            continue
        head = low.split()[0]
        hit = (low in NAMING_CUES and _starts_name(shape, lex, head, cue.end)) or _ends_name(
            shape, lex, head, cue.start
        )
        if not hit and low == "amount of":  # 'the total amount of all payments': payments.amount_payment
            hit = any(x.kind == "column" and x.score >= 0.95 for x in lex.schema(head)) or _amount_of(
                shape, lex, cue.end
            )
        if hit:
            roles = {cue.start: "content"} | {k: "stop" for k in range(cue.start + 1, cue.end)}
            shape = _uncue(shape, cue, roles)
        elif low == "amount of" and _measured_amount(shape, lex, cue):
            shape = _uncue(shape, cue, {k: "stop" for k in range(cue.start, cue.end)})
    return shape


def names_in_stop_words(shape: Shape, lex: Lexicon) -> Shape:
    """'how to get there for each attraction': a column (How_to_Get_There) whose name is spelled
    only with stop and cue words, which would otherwise vanish from the question unread; and
    'weeks on top' (Weeks_on_Top), a name spelled with a cue word among its words, which is the
    name and no 'top 10'."""
    n = len(shape.tokens)
    for s in range(n):
        for e in range(min(n, s + 6), s + 1, -1):
            roles = set(shape.role[s:e])
            inside = [c for c in shape.cues if s <= c.start < e or s < c.end <= e]
            if not (roles <= {"stop", "cue"} or (roles <= {"stop", "cue", "content"} and inside)):
                continue
            if "content" in roles and any(t.kind == "punct" for t in shape.tokens[s:e]):
                continue  # '2025? (paid on)': a name across brackets is not one phrase
            if any(c.start < s or c.end > e for c in inside) or not _spells(lex, shape.text(s, e)):
                continue
            for cue in inside:
                shape = _uncue(shape, cue, {})
            shape = replace(
                shape, role=tuple("content" if s <= k < e else r for k, r in enumerate(shape.role))
            )
            return names_in_stop_words(shape, lex)  # and any other such name
    return shape


# row nouns a table is often named for ('pilot_record', 'Catalog_Entries')
TABLE_ROW_NOUNS = frozenset(["record", "records", "entry", "entries"])


def row_nouns_naming_a_table(shape: Shape, lex: Lexicon) -> Shape:
    """'number of records per pilot name' where the database has pilot_record: 'records' is a
    word for any table's rows, except where exactly one table is named for it, whose rows it
    then counts (else the pilots themselves were counted)."""
    roles = list(shape.role)
    for i, token in enumerate(shape.tokens):
        if roles[i] != "stop" or token.low not in TABLE_ROW_NOUNS:
            continue
        noun = name_words(token.low)
        named = [t for t in lex.catalog.tables if name_words(t.name).split()[-1:] == [noun]]
        if len(named) == 1:
            roles[i] = "content"
    return replace(shape, role=tuple(roles))


def percent_signs(shape: Shape, lex: Lexicon) -> Shape:
    """'date and vote % of every election': a '%' after a word is the word 'percent' when the
    two spell a column (Vote_Percent); else it stays a sign ('rating %' is Rating_in_percent,
    which 'rating' names alone)."""
    tokens, roles = list(shape.tokens), list(shape.role)
    for i, t in enumerate(tokens):
        if (
            t.text != "%"
            or i == 0
            or roles[i - 1] != "content"
            or t.start - tokens[i - 1].end > 1  # 'vote %' or 'vote%'
        ):
            continue
        phrase = f"{tokens[i - 1].low} percent"
        if any(_spelled(x, phrase) for x in lex.schema(phrase)):
            tokens[i] = replace(t, low="percent", kind="word")
            roles[i] = "content"
    return replace(shape, tokens=tuple(tokens), role=tuple(roles))


def values_over_stop_words(shape: Shape, lex: Lexicon) -> Shape:
    """'orders with status On Road', 'items that are Out of Stock': a stored value that starts
    with stop words. Read without them, 'Road' is only contained in the value (a LIKE filter);
    with them it is the value itself."""
    tokens = shape.tokens
    for s in range(1, len(tokens)):
        if shape.role[s] != "content" or shape.role[s - 1] not in ("stop", "cue"):
            continue
        for k in (2, 1):
            lead = range(s - k, s)
            if s - k < 0 or any(
                shape.role[i] not in ("stop", "cue") or not tokens[i].text.isalpha() for i in lead
            ):
                continue
            cues = [c for c in shape.cues if c.start < s and c.end > s - k]
            if any(c.start < s - k or c.end > s for c in cues):
                continue  # a cue that goes on past these words ('in the last 3 months')
            end = s
            while end < len(tokens) and shape.role[end] == "content" and end - s < MAX_PHRASE - k:
                end += 1
            if any(x.via == "value" and x.score >= 1.0 for x in lex.values(shape.text(s - k, end))):
                for cue in cues:  # 'On' in 'On Road' is no date's 'on'
                    shape = _uncue(shape, cue, {})
                shape = replace(
                    shape, role=tuple("content" if i in lead else r for i, r in enumerate(shape.role))
                )
                break
    return shape


def _measured_amount(shape: Shape, lex: Lexicon, cue: Cue) -> bool:
    """'the average amount of money requested': after an average or a total, 'amount of' only
    leads to the number column named next, it counts nothing."""
    if not any(c.kind == "agg" and c.end == cue.start for c in shape.cues):
        return False
    i, end = _next_run(shape, cue.end)
    return any(  # the words name a number column
        x.kind == "column"
        and x.score >= 0.95
        and (c := _column(lex, x)) is not None
        and c.kind in ("integer", "number")
        for k in range(end, i, -1)
        for x in lex.schema(shape.text(i, k))
    )


def _next_run(shape: Shape, i: int) -> tuple[int, int]:
    """The first run of content words at or after token i (at most MAX_PHRASE of them)."""
    while i < len(shape.tokens) and shape.role[i] != "content":
        i += 1
    end = i
    while end < len(shape.tokens) and shape.role[end] == "content" and end - i < MAX_PHRASE:
        end += 1
    return i, end


def _column(lex: Lexicon, x: Sense) -> Column | None:
    table = lex.table(x.table)
    return table.column(x.column) if table is not None and x.column else None


def names_across_stop_words(shape: Shape, lex: Lexicon) -> Shape:
    """'the dates of birth of the guests', 'the level of membership': a column whose name has
    'of' in it. The stop word splits the words into two runs, and neither half alone names the
    column ('birth' names nothing); where the words around it spell a column's name, the 'of'
    (and a 'the' after it) joins them into one phrase. A row noun ('record', 'entry') that ends
    a table's name stays in it ('exhibition records'), and a noun dropped as a stop word that is
    the name of a column of a table the question names is that column ('the results of their
    acceptance', 'the acceptance results')."""
    tokens, role = shape.tokens, list(shape.role)
    named = {
        x.table
        for k, t in enumerate(tokens)
        if role[k] == "content"
        for x in lex.schema(t.low)
        if x.kind == "table" and x.score >= 0.95
    }
    for k, t in enumerate(tokens):
        if t.low in STOP_NOUNS - ROW_NOUNS and any(
            x.table in named and _spelled(x, t.low) for x in lex.schema(t.low)
        ):
            role[k] = "content"  # 'the results of their acceptance': acceptance.result
            continue
        if t.low in ROW_NOUNS and k > 0 and role[k - 1] == "content":
            # 'exhibition records' is the table exhibition_record, not the table exhibition;
            # 'catalog entries' are the rows whose key is catalog_entry_id, not the catalogs
            if any(
                _names_table(lex, shape.text(s, k + 1)) or _keyed_elsewhere(lex, shape.text(s, k), t.low)
                for s in range(max(0, k - 2), k)
            ):
                role[k] = "content"
            continue
        if t.low != "of" or role[k] != "stop" or k == 0 or role[k - 1] != "content":
            continue
        after = k + 2 if k + 2 < len(tokens) and tokens[k + 1].low == "the" else k + 1
        for s in range(max(0, k - 2), k):
            if any(role[x] != "content" for x in range(s, k)):
                continue
            ends = [
                e
                for e in range(after + 1, min(len(tokens), after + 2) + 1)
                if all(role[x] == "content" for x in range(after, e))
            ]
            if any(_spells(lex, shape.text(s, e)) for e in ends):
                for x in range(k, after):
                    role[x] = "content"
                break
    return replace(shape, role=tuple(role))


STOP_NOUNS = ROW_NOUNS | {"result", "results", "answer", "answers"}


def _names_table(lex: Lexicon, phrase: str) -> bool:
    said = _said(phrase)
    return any(x.kind == "table" and name_words(x.table) == said for x in lex.schema(phrase))


def _names_key(lex: Lexicon, phrase: str) -> bool:
    """`phrase` and 'id' spell a table's one key column ('catalog entry' → catalog_entry_id)."""
    keyed = f"{phrase} id"
    return any(_spelled(x, keyed) and lex.key_of(x.table) == (x.column,) for x in lex.schema(keyed))


def _keyed_elsewhere(lex: Lexicon, before: str, noun: str) -> bool:
    """'catalog entries' spell the key of another table (Catalog_Contents.catalog_entry_id) than
    the one 'catalog' names; 'fault log entries' are only the rows of the fault log."""
    named = {x.table for x in lex.schema(before) if x.kind == "table" and x.score >= 0.95}
    return _names_key(lex, f"{before} {noun}") and not any(
        x.table in named for x in lex.schema(f"{before} {noun} id") if x.kind == "column"
    )


def _same_start(word: str, name: str) -> bool:
    """A word of the name starts with the word's first letter ('adress' and address) or holds
    the word ('name' in bname)."""
    said = [*name_words(name).split(), *expanded_words(name).split()]
    return any(w[:1] == word[:1] or word in w for w in said)


def _spells(lex: Lexicon, phrase: str) -> bool:
    return any(_spelled(x, phrase) for x in lex.schema(phrase))


def _amount_of(shape: Shape, lex: Lexicon, i: int) -> bool:
    """The table named by the first content words after i has exactly one numeric column with
    'amount' in its name."""
    i, end = _next_run(shape, i)
    named = next((x for x in lex.schema(shape.text(i, end)) if x.kind == "table" and x.score >= 0.95), None)
    table = lex.table(named.table) if named else None
    amounts = [
        c
        for c in (table.columns if table else ())
        if "amount" in c.name.lower() and c.kind in ("integer", "number")
    ]
    return len(amounts) == 1


# words after which a word is a noun ('which order', 'each rank'), never a verb
NOUN_BEFORE = frozenset(["whose", "the", "which", "what", "each", "every", "an", "this", "that"])


def _listed_noun(shape: Shape, i: int) -> bool:
    """The word at i is a noun, not a verb: it follows a list's comma or 'and', 'by', a possessive
    ('their rank', 'whose rank'), 'the' or a superlative ('the lowest rank'); a sorting verb
    starts a clause ('rank them by age') or follows 'and' only with an object after it, which a
    column's name never has."""
    if i == 0:
        return False
    before = shape.tokens[i - 1].low
    after = shape.tokens[i + 1].low if i + 1 < len(shape.tokens) else ""
    if before in POSSESSIVES | NOUN_BEFORE:  # 'whose rank is Midshipman', 'sorted by the rank'
        return True
    said = shape.cue_at(i - 1)
    if said is not None and said.kind in ("super", "agg"):  # 'the lowest rank', 'the average rank'
        return True
    # 'the name, class, and rank'; 'count of faculty by rank and sex' (what to group by)
    return before in (",", "and", "by", "per") and after in ("", ",", "and", "of", "for", "?", ".")


def _compared(shape: Shape, i: int) -> bool:
    """A comparison ('greater than', '>') starts at token i."""
    cue = shape.cue_at(i)
    return cue is not None and cue.start == i and cue.kind == "cmp"


def _three_after(shape: Shape, start: int) -> int:
    """The end of the content words at `start`, three at the most: how far a name said after a
    cue word may reach ('number of' + 'hosts')."""
    end = start
    while end < len(shape.tokens) and shape.role[end] == "content" and end - start < 3:
        end += 1
    return end


def _starts_name(shape: Shape, lex: Lexicon, head: str, nxt: int) -> bool:
    """`head` and up to three content words after it name a column ('minimum connect time')."""
    end = _three_after(shape, nxt)
    for e in range(end, nxt, -1):
        phrase = " ".join([head, *(t.low for t in shape.tokens[nxt:e])])
        if any(_named_column(x) for x in lex.schema(phrase)):
            return True
    return False


def _spells_with_next(shape: Shape, lex: Lexicon, cue: Cue, tables: bool = False) -> bool:
    """The cue's words and up to three content words after it are a column's name word for word
    ('the largest number of hosts' is party.number_of_hosts, a stored count) — or, with `tables`,
    a table's ('how many order items': Order_Items)."""
    end = _three_after(shape, cue.end)
    return any(
        _spells(lex, shape.text(cue.start, e)) or (tables and _names_table(lex, shape.text(cue.start, e)))
        for e in range(end, cue.end, -1)
    )


def _ends_name(shape: Shape, lex: Lexicon, head: str, at: int, exact: bool = False) -> bool:
    """Up to three content words before `head`, and `head`, name a column ('access count',
    'phone number' — spelled as the name even where several tables have one). `exact`: only
    a noun that spells the name word for word ('market share'), never a stop word ('origin is
    not')."""
    if exact and head in STOP:
        return False
    start = at
    while start > 0 and shape.role[start - 1] == "content" and at - start < 3:
        start -= 1
        phrase = " ".join([*(t.low for t in shape.tokens[start:at]), head])
        if any((_named_column(x) and not exact) or _spelled(x, phrase) for x in lex.schema(phrase)):
            return True
    return False


ORDERING_SUBJECTS = frozenset(["who", "that", "which", "have", "has", "had", "never", "not"])
# what one orders ('ordered a keyboard'); not 'the': 'Order the results by …' sorts
ORDERED_OBJECTS = frozenset(["a", "an", "any", "some", "something", "anything", "nothing"])


def _places_an_order(shape: Shape, cue: Cue) -> bool:
    """'customers who ordered a food product', 'who've ordered any', 'that have ordered': the verb
    to place an order — after a relative word or 'have', or before what was ordered — not a sort."""
    tokens = shape.tokens
    before = tokens[cue.start - 1].low if cue.start > 0 else ""
    after = tokens[cue.end].low if cue.end < len(tokens) else ""
    return before in ORDERING_SUBJECTS or after in ORDERED_OBJECTS


def _stored_count(shape: Shape, lex: Lexicon, cue: Cue) -> bool:
    """'total number of customers across all banks': the words after 'total' and up to three
    content words spell a column, abbreviations spelled out (bank.no_of_customers), and the
    question names that column's table elsewhere — without it ('the total number of
    customers') the customers are counted."""
    end = _three_after(shape, cue.end)
    for e in range(end, cue.end, -1):
        phrase = shape.text(cue.start + 1, e)
        said = _said(phrase)
        for x in lex.schema(phrase):
            if x.kind != "column" or expanded_words(x.column or "") != said:
                continue
            named = (
                k
                for k, t in enumerate(shape.tokens)
                if shape.role[k] == "content" and not cue.start <= k < e and t.kind == "word"
            )
            if any(
                y.kind == "table" and y.table == x.table
                for k in named
                for y in lex.schema(shape.tokens[k].low)
            ):
                return True
    return False


def _uncue(shape: Shape, cue: Cue, roles: dict[int, str]) -> Shape:
    """`shape` without `cue`, its words given `roles`."""
    return replace(
        shape,
        cues=tuple(c for c in shape.cues if c != cue),
        role=tuple(roles.get(i, r) for i, r in enumerate(shape.role)),
    )


def _named_column(x: Sense) -> bool:
    return x.kind == "column" and x.score >= 0.95 and x.via == "name"


NUMBER_SIGN = re.compile(r"#(?=\s*of\b)", re.IGNORECASE)


def _number_sign(phrase: str) -> str:
    """'# of' is 'number of'."""
    return NUMBER_SIGN.sub("number", phrase)


def _said(phrase: str) -> str:
    """A phrase's words as a name's words compare with them: folded and singular ('# of hosts'
    as 'number of hosts')."""
    return " ".join(folded_words(_number_sign(phrase)))


def _spelled(x: Sense, phrase: str) -> bool:
    """`phrase` is the column's name word for word ('phone number' is phone_number, in whichever
    of the tables that have one; 'allergy type' is allergytype, written as one word)."""
    return x.kind == "column" and name_words(x.column or "").replace(" ", "") == _said(phrase).replace(
        " ", ""
    )


def _part_of_name(shape: Shape, lex: Lexicon, i: int) -> bool:
    """The word at i with the content words before or after it names a table or column
    ('transaction daily', 'monthly limit', 'wallet merchant balance daily')."""
    phrases = []
    for n in range(1, MAX_PHRASE):
        for span in (range(i - n, i + 1), range(i, i + n + 1)):
            inside = span.start >= 0 and span.stop <= len(shape.tokens)
            if inside and all(shape.role[k] == "content" for k in span if k != i):
                phrases.append(" ".join(shape.tokens[k].low for k in span))
    return any(
        x.kind != "value" and x.score >= 0.9 and x.via == "name" for p in phrases for x in lex.schema(p)
    )


def _phrase_senses(shape: Shape, lex: Lexicon, s: int, e: int) -> list[Sense]:
    words = [t.low for t in shape.tokens[s:e]]
    phrase = " ".join(words)
    has_code = any(any(ch.isdigit() for ch in w) for w in words)
    schema = [] if has_code else lex.schema(phrase)
    asks_who = s > 0 and shape.tokens[s - 1].low == "who"
    if e - s == 1 and words[0] in AGENT_NOUNS and (asks_who or not any(x.score >= 0.95 for x in schema)):
        # 'who wrote the books': the column for who writes them (book.Writer), if there is one;
        # after 'who' even where a column is named by the verb ('who built' → Builder, not Built)
        agent = AGENT_NOUNS[words[0]]
        doers = [x for x in lex.schema(agent) if _spelled(x, agent)]
        if doers:
            return doers
    if e - s == 1 and words[0] in GLUE and not schema:
        return []  # 'made', 'located': never looked up among values
    values = lex.values(shape.text(s, e), quoted=_searched(shape, s, e))
    if e - s == 1 and words[0] in KEY_WORDS and s > 0 and shape.role[s - 1] == "content":
        values = []  # 'airline ID' is the airline's id, not an airline whose code is 'ID'
    if schema and values and schema[0].score >= 0.95:
        # a word that names a table or column is read as a value only when that is clearly better
        values = [replace(v, score=v.score * 0.97) for v in values]
    if set(words) <= NAME_WORDS:
        # 'names', 'title': every table's label matches; other *_name columns are less likely
        schema = [x if _label_like(x) else replace(x, score=round(x.score - 0.05, 4)) for x in schema]
    if schema and schema[0].kind == "table" and schema[0].score >= 0.95 and not set(words) & ID_WORDS:
        # 'program' names the table; program_id columns elsewhere only point at it, and a table
        # whose name merely holds the word ('customers' in Customers_Cards) is not the one named
        schema = [
            x for x in schema if (_exact_or_synonym(x) if x.kind == "table" else not _id_like(x.column or ""))
        ]
    if (
        schema
        and schema[0].kind == "column"
        and (schema[0].column or "") in lex.key_of(schema[0].table)
        and _id_like(schema[0].column or "")
        and not set(words) & ID_WORDS
    ):
        # 'festival' matched festival_id best, the key of festival_detail: the word names the thing
        thing = next((x for x in schema if x.kind == "table" and x.table == schema[0].table), None)
        first_word = e - s == 1 and name_words(schema[0].table).split()[:1] == [stem(words[0])]
        if thing is None and (words[-1] in ROW_NOUNS or first_word) and _names_key(lex, phrase):
            # 'catalog entries': the rows whose key is catalog_entry_id (Catalog_Contents);
            # 'which county has …': the rows keyed by County_ID of county_public_safety, the table
            # its name starts with ('branch' is no bank's row: bank.branch_ID stays a column)
            thing = Sense("table", schema[0].table, None, None, schema[0].score, "name")
        if thing is not None:
            rest = [
                x for x in schema if x is not thing and not (x.kind == "column" and _id_like(x.column or ""))
            ]
            schema = [replace(thing, score=schema[0].score), *rest]
    if e - s > 1 and words[-1] in NAME_WORDS and (not schema or schema[0].score < PHRASE_MIN):
        schema = _label_of(lex, " ".join(words[:-1]), words[-1])
    senses = sorted([*schema, *values], key=lambda x: -x.score)
    if senses and senses[0].kind == "table" and _is_link(lex, senses[0].table):
        # 'amenities' names Has_amenity (dormid, amenid) and Dorm_amenity: the thing, not the link
        things = [
            x for x in senses if x.score >= senses[0].score - SENSE_MARGIN and not _is_link(lex, x.table)
        ]
        senses = things or senses
    if e - s > 1 and words[-1] in NUMBER_NOUNS and senses and senses[0].kind == "table":
        # 'apartment number' is the one number column of apartments (apt_number); 'flight
        # number' some column of flight (flno), not the flights themselves
        return list(_number_column(lex, senses[0].table, words[-1]))
    if not senses or (e - s > 1 and senses[0].score < PHRASE_MIN):
        return []  # a loose match of several words is a coincidence, not a name
    top = senses[0].score
    return [x for x in senses if x.score >= top - SENSE_MARGIN][:SENSES_KEPT]


NAME_WORDS = WORDS.sets["labels"]  # what a row is called


def _searched(shape: Shape, s: int, e: int) -> bool:
    """The words are text to look for, as if quoted: 'names containing Digital', 'which lenses
    have Digital in the name' — a word inside a longer stored name is what is asked."""
    before = next((c for c in shape.cues if c.end == s), None)
    after = next((c for c in shape.cues if c.start == e), None)
    return (before is not None and before.kind == "text") or (
        after is not None and after.kind == "text" and after.words.lower() in NAME_SUFFIXES
    )


NUMBER_NOUNS = frozenset(["number", "numbers", "no", "code", "codes"])


def _label_of(lex: Lexicon, head: str, generic: str) -> list[Sense]:
    """'the county names': county matched County_ID, or names a table; its table's name column."""
    top = next(iter(lex.schema(head)), None)
    if top is None or top.score < 0.85 or not (top.kind == "table" or _id_like(top.column or "")):
        return []
    own = [x for x in lex.schema(generic) if x.kind == "column" and x.table == top.table and _label_like(x)]
    return [replace(own[0], score=1.0)] if own else []


def _is_link(lex: Lexicon, table: str) -> bool:
    """Every column of the table points at another table (has_amenity: dormid, amenid)."""
    t = lex.table(table)
    pointers = {c.lower() for e in lex.db.graph.edges if e.table.lower() == table.lower() for c in e.columns}
    return t is not None and len(t.columns) > 1 and all(c.name.lower() in pointers for c in t.columns)


def _number_column(lex: Lexicon, table: str, noun: str) -> tuple[Sense, ...]:
    t = lex.table(table)
    said = {"code"} if noun.startswith("code") else {"number", "num", "no"}
    hits = [c.name for c in (t.columns if t else ()) if set(split_identifier(c.name)) & said]
    return (Sense("column", table, hits[0], None, 0.95, "name"),) if len(hits) == 1 else ()


def _label_like(x: Sense) -> bool:
    """table.name, table.title, lake.lake_name, journal.journalname."""
    if x.kind != "column" or not x.column:
        return True
    flat = x.column.lower().replace("_", "")
    table = x.table.lower().replace("_", "")
    return flat in ("name", "title", f"{table}name", f"{table}title", f"{stem(table)}name")


def _exact_or_synonym(x: Sense) -> bool:
    return x.score >= 0.95 or x.via != "name"


def _id_like(column: str) -> bool:
    low = column.lower()
    return low.endswith(("_id", "id", "_code", "_key", "_no")) and low not in ("paid", "valid", "void")


def _segment(shape: Shape, lex: Lexicon, start: int, end: int) -> list[tuple[int, int, list[Sense]]]:
    """Best split of tokens [start, end) into phrases: most words covered by good matches, then
    fewest phrases (a longer phrase that matches as well is the more specific reading)."""
    n = end - start
    senses: dict[tuple[int, int], list[Sense]] = {}
    for i in range(n):
        for j in range(i + 1, min(n, i + MAX_PHRASE) + 1):
            senses[(i, j)] = _phrase_senses(shape, lex, start + i, start + j)
    # best[k] = (weight, -phrases, split) for the first k tokens
    start_split: list[tuple[int, int]] = []
    best: list[tuple[float, int, list[tuple[int, int]]]] = [(0.0, 0, start_split)]
    best += [(-1.0, 0, start_split)] * n
    for k in range(1, n + 1):
        for i in range(max(0, k - MAX_PHRASE), k):
            ss = senses[(i, k)]
            w = (k - i) * ss[0].score if ss else 0.0
            if not ss and k - i > 1:
                continue  # unmatched words stay single
            weight, phrases = best[i][0] + w, best[i][1] - 1
            if weight > best[k][0] + 1e-9 or (abs(weight - best[k][0]) <= 1e-9 and phrases > best[k][1]):
                best[k] = (weight, phrases, [*best[i][2], (i, k)])
    return [(start + i, start + j, senses[(i, j)]) for i, j in best[n][2]]


def _apply_readings(mentions: list[Mention], readings: Sequence[Reading]) -> list[Mention]:
    """Pin the phrases a person already settled (clarification choices) to their reading."""
    for r in readings:
        target = fold(r.words)
        for k, m in enumerate(mentions):
            if fold(m.words) == target or (target and target in fold(m.words)):
                kind: SenseKind = "value" if r.value is not None else ("column" if r.column else "table")
                sense = Sense(kind, r.table, r.column, r.value, 1.0, "choice", op=r.op)
                mentions[k] = replace(m, sense=sense, senses=(sense,), pinned=True)
    return mentions


# ---------------------------------------------------------------------------------------------
# matching optimisation: one coherent sense per phrase


def choose(matching: Matching, lex: Lexicon, anchor: Sequence[str] = ()) -> Matching:
    """Pick each mention's sense: best total match score minus JOIN_COST per unit of join cost.

    A beam search over the mentions (most certain first); then, for every mention, the best
    reading with that mention forced to another table/column is computed — if it is within
    AMBIGUOUS of the best, the mention's `alternatives` say so. Every other reading tried is kept
    in `rivals` with its margin (how much lower the best total with it is): the confidence model
    reads how close the nearest one came.
    """
    mentions = matching.mentions
    open_ = [m for m in mentions if not m.pinned and m.senses]
    fixed = [m.sense for m in mentions if m.pinned and m.sense]
    if not open_:
        return matching
    order = sorted(open_, key=lambda m: -_certainty(m))

    def total(assign: Sequence[Sense]) -> float:
        senses = [*assign, *fixed]
        tables = [s.table for s in senses] + list(anchor)
        return sum(s.score for s in assign) - JOIN_COST * lex.tree_cost(tables)

    def search(options: list[list[Sense]]) -> tuple[float, list[Sense]]:
        beam: list[tuple[float, list[Sense]]] = [(0.0, [])]
        for opts in options:
            nxt = []
            for _, partial in beam:
                for s in opts:
                    cand = [*partial, s]
                    nxt.append((total(cand), cand))
            nxt.sort(key=lambda x: -x[0])
            beam = nxt[:BEAM]
        return beam[0] if beam else (-math.inf, [])

    options = [list(m.senses) for m in order]
    best_total, best = search(options)
    chosen_at = {m.start: s for m, s in zip(order, best, strict=True)}
    alternatives: dict[int, list[Sense]] = {}
    rivals: dict[int, list[tuple[Sense, float]]] = {}
    # ambiguity: the same mention read as another table/column, everything else re-optimised
    for idx, m in enumerate(order):
        chosen = best[idx]
        others = [s for s in m.senses if (s.table, s.column) != (chosen.table, chosen.column)]
        if not others or chosen.kind == "table":
            continue
        seen: set[tuple[str, str | None]] = set()
        for alt in others:
            if (alt.table, alt.column) in seen or alt.kind != chosen.kind:
                continue
            seen.add((alt.table, alt.column))
            forced = [opts if j != idx else [alt] for j, opts in enumerate(options)]
            alt_total, _ = search(forced)
            rivals.setdefault(m.start, []).append((alt, round(best_total - alt_total, 4)))
            if alt_total < best_total - AMBIGUOUS:
                continue
            if abs(alt.score - chosen.score) <= MATCH_TIE:
                alternatives.setdefault(m.start, []).append(alt)  # as good a match, as good a fit: ask
            # else: one reading matches the words clearly better; the best total stands
    return replace(
        matching,
        mentions=tuple(
            replace(
                m,
                sense=chosen_at[m.start],
                alternatives=tuple(alternatives.get(m.start, ())),
                rivals=tuple(sorted(rivals.get(m.start, ()), key=lambda r: r[1])),
            )
            if m.start in chosen_at
            else m
            for m in mentions
        ),
    )


def _certainty(m: Mention) -> float:
    if len(m.senses) < 2:
        return 2.0
    return m.senses[0].score - m.senses[1].score


def content_words(shape: Shape, indices: Sequence[int]) -> list[str]:
    """The typed words at token indices, merged into phrases where they are adjacent."""
    out: list[str] = []
    for _, group in itertools.groupby(enumerate(indices), key=lambda p: p[1] - p[0]):
        idx = [i for _, i in group]
        out.append(shape.text(idx[0], idx[-1] + 1))
    return out
