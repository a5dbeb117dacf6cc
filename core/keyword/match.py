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

from core.dictionary import expanded_words, keyword_dictionary, name_words, stem
from core.dictionary import words as folded_words
from core.joins import graph_weights
from core.keyword import meanings
from core.keyword.lexicon import WORDS
from core.keyword.readings import Reading
from core.values import Access, fold

if TYPE_CHECKING:
    from core.catalog import Catalog, Table
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
JOIN_COST = 0.1  # a reading that needs one more join must match this much better
AMBIGUOUS = 0.03  # two readings this close are a question for the person ...
MATCH_TIE = 0.05  # ... when their words match equally well, too
BEAM = 64
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


def _same_start(word: str, name: str) -> bool:
    """A word of the name starts with the word's first letter ('adress' and address) or holds
    the word ('name' in bname)."""
    said = [*name_words(name).split(), *expanded_words(name).split()]
    return any(w[:1] == word[:1] or word in w for w in said)


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
