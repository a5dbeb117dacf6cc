"""Keyword dictionary (DANKE §3): the words users adopt for each table and column, matched fuzzily.

Every table and column enters with its name split into words ('CustomerOrders', 'invoice_no' →
'customer order', 'invoice number'), its catalog synonyms, and, for columns, the same names in the
context of their table ('client name' for client.name). Object keywords from the question are
matched against these terms with rapidfuzz, then scored with `core.values.similarity`, so a typo,
a plural or a word order still finds the table. Words of the catalog descriptions match too, at a
lower score, so 'revenue' can find the column whose description mentions it.

The dictionary is built once per catalog (cached on the catalog object) and access rules.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from rapidfuzz import fuzz, process

from core.catalog import Catalog
from core.plurals import singular
from core.retrieval import SchemaMatch
from core.values import NO_RULES, Access, fold, similarity

# Abbreviations common in column names, read as the words people say.
LARGE_DICTIONARY = 20_000  # term texts above which a match scores only WordIndex's candidates
CANDIDATES = 1_000  # ... at most this many texts
WORD_ALIKE = 75  # a keyword's word and a term's word this alike (rapidfuzz ratio) make it a candidate
WORDS_KEPT = 4_096  # keyword words whose alike vocabulary words a WordIndex remembers

ABBREVIATIONS = {
    "no": "number",
    "nr": "number",
    "num": "number",
    "nbr": "number",
    "qty": "quantity",
    "amt": "amount",
    "desc": "description",
    "descr": "description",
    "dt": "date",
    "addr": "address",
    "cust": "customer",
    "emp": "employee",
    "dept": "department",
    "temp": "temperature",
    "mgr": "manager",
    "acct": "account",
    "cnt": "count",
    "pct": "percent",
    "avg": "average",
    "max": "maximum",
    "org": "organization",
    "dob": "date of birth",
    "fname": "first name",
    "lname": "last name",
    "tel": "telephone",
    "yr": "year",
    "yrs": "years",
    "hq": "headquarters",
    "enr": "enrollment",
    "doc": "document",
    "docs": "documents",
    "prof": "professor",
    "profs": "professors",
    "cat": "category",
    "prod": "product",
    "txn": "transaction",
    "trx": "transaction",
    "ts": "timestamp",
    "lat": "latitude",
    "lng": "longitude",
    "lon": "longitude",
    "loc": "location",
    "info": "information",
    "pos": "position",
    "ref": "reference",
    "msg": "message",
    "img": "image",
    "cfg": "configuration",
    "env": "environment",
    "usr": "user",
}
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "for",
        "in",
        "on",
        "at",
        "by",
        "to",
        "with",
        "from",
        "per",
        "each",
        "all",
        "any",
        "every",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "how",
        "many",
        "much",
        "list",
        "show",
        "give",
        "me",
        "my",
        "our",
        "their",
        "its",
        "this",
        "that",
        "these",
        "those",
        "number",
        "of",
    ]
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")

MIN_SCORE = 0.6
MATCH_LIMIT = 8  # matches a keyword returns unless asked for another number
DESCRIPTION_MAX = 0.7  # a description mention alone never outranks a name


def stem(word: str) -> str:
    """A word as the dictionary compares it: singular, so 'statuses' finds `status` (core.plurals)."""
    return singular(word)


def split_identifier(name: str) -> list[str]:
    """'CustomerOrders' / 'customer_orders' / 'customer-orders' → ['customer', 'orders']."""
    return list(_split(name))


NAMES_KEPT = 65_536  # identifiers whose split words are remembered (_split, name_words, expanded_words)


@lru_cache(maxsize=NAMES_KEPT)
def _split(name: str) -> tuple[str, ...]:
    """split_identifier, remembered: a warehouse repeats its column names (`id`, `client_id`,
    `created_at`) across thousands of tables, and folding 800,000 names one by one was most of
    building the keyword dictionary and the description index on 10,000 tables
    (`python -m core.bench linking`, the first question)."""
    return tuple(fold(_CAMEL.sub(" ", name)).split())


def words(text: str, *, expand: bool = False) -> list[str]:
    """Content words of a keyword, name or description, folded and singular."""
    out = []
    for w in fold(text).split():
        if expand and w in ABBREVIATIONS:
            out.extend(ABBREVIATIONS[w].split())
        else:
            out.append(stem(w))
    return out


@lru_cache(maxsize=NAMES_KEPT)
def expanded_words(name: str) -> str:
    """A name's words with its abbreviations spelled out: 'cust_addr' → 'customer address', and
    'LName', which camel case splits into 'l name', → 'last name'."""
    parts = [p.lower() for p in _split(name)]
    joined: list[str] = []
    for part in parts:
        if joined and len(joined[-1]) == 1 and joined[-1] + part in ABBREVIATIONS:
            joined[-1] += part
        else:
            joined.append(part)
    return " ".join(words(" ".join(joined), expand=True))


# Abbreviations people type that never mean anything else ('dept id', 'mean temp'); the
# others ('no', 'max', 'info') are words of their own in a question.
TYPED_SHORT = {
    w: ABBREVIATIONS[w]
    for w in (
        *("dept", "temp", "qty", "amt", "addr", "acct", "mgr", "emp", "cust", "hq", "yr", "yrs"),
        *("dob", "org", "doc", "docs", "prof", "profs"),
    )
}

# Units a column's name ends with ('Sales_in_Billion', 'Height_in_cm', 'max_speed_mph').
UNIT_WORDS = frozenset(
    [
        "billion",
        "million",
        "thousand",
        "hundred",
        "percent",
        "pct",
        "usd",
        "dollar",
        "euro",
        "cm",
        "mm",
        "km",
        "m",
        "kg",
        "g",
        "lb",
        "mph",
        "kmh",
        "hour",
        "minute",
        "second",
        "day",
        "year",
    ]
)


# Ends of a name that are no unit when said bare: Vote_Percent is another figure than Votes,
# start_day and num_year are the day and the year themselves.
BARE_UNIT_EXCEPTIONS = frozenset(["percent", "pct", "m", "g", "day", "year", "hour", "minute", "second"])


def without_unit(words_: str) -> str:
    """A column's words without the unit its name ends with: 'sale in billion' → 'sale', so
    'sales' names Sales_in_Billion. '' when there is no unit, or nothing before it."""
    parts = words_.split()
    if len(parts) >= 3 and parts[-2] == "in" and parts[-1] in UNIT_WORDS:
        return " ".join(parts[:-2])
    if len(parts) >= 2 and parts[-1] in UNIT_WORDS - BARE_UNIT_EXCEPTIONS:
        return " ".join(parts[:-1])
    return ""


@lru_cache(maxsize=NAMES_KEPT)
def name_words(name: str) -> str:
    """A name's words, singular: 'client_orders' → 'client order' (remembered, as `_split`)."""
    return " ".join(stem(w) for w in _split(name))


class WordIndex:
    """Which term texts hold a word like each of the query's: the candidates a large dictionary's
    fuzzy match scores, instead of every text.

    Why: a warehouse of 10,000 tables × 20 columns makes some 400,000 term texts (a column's name
    alone and with its table's), and scoring each of them twice per keyword cost about 0.2 s a
    keyword, over a second a question (`python -m core.bench linking`). A text worth scoring
    shares a word, or a misspelling of one, with the keyword; those texts are few. The texts
    covering the most of the keyword's words, shortest first, are kept (`limit`), in their
    original order so ties break as a full scan would. Dictionaries up to LARGE_DICTIONARY
    texts are still scanned whole.
    """

    def __init__(self, texts: Sequence[str]) -> None:
        by_word: dict[str, list[int]] = defaultdict(list)
        for i, text in enumerate(texts):
            for w in set(text.split()):
                by_word[w].append(i)
        self._vocabulary = list(by_word)
        self._postings = [np.asarray(by_word[w], dtype=np.int32) for w in self._vocabulary]
        self._lengths = np.asarray([len(t) for t in texts], dtype=np.int32)
        self._alike_words: dict[str, tuple[int, ...]] = {}

    def _alike(self, word: str) -> tuple[int, ...]:
        """The vocabulary's words spelled like `word` (their positions), remembered per word.

        Why: scanning the vocabulary (10,000 words on a warehouse) is most of a keyword's
        candidate search, and a question's keywords share their words ('payment', 'payment
        amount', 'amount'). The answer depends on the catalog alone, so it is kept with this index
        (up to WORDS_KEPT words, then forgotten all at once: no lock, no half-cleared state).
        """
        kept = self._alike_words.get(word)
        if kept is None:
            found = process.extract(
                word, self._vocabulary, scorer=fuzz.ratio, limit=30, score_cutoff=WORD_ALIKE
            )
            if len(self._alike_words) >= WORDS_KEPT:
                self._alike_words = {}
            kept = self._alike_words[word] = tuple(i for _, _, i in found)
        return kept

    def candidates(self, query: str, limit: int) -> list[int]:
        """Ids of at most `limit` texts that share a word (or a near spelling of one) with `query`."""
        counts = np.zeros(len(self._lengths), dtype=np.int32)
        for w in set(query.split()):
            alike = self._alike(w)
            if alike:
                covered = np.zeros(len(self._lengths), dtype=bool)  # a text counts once per word
                for i in alike:
                    covered[self._postings[i]] = True
                counts += covered
        found = np.flatnonzero(counts)
        if len(found) > limit:  # most words covered first, then the shortest texts
            rank = counts[found].astype(np.int64) * 10_000 - self._lengths[found]
            found = np.sort(found[np.argpartition(-rank, limit)[:limit]])
        return [int(i) for i in found.tolist()]


@dataclass(frozen=True)
class Term:
    text: str  # folded, singular words
    table: str
    column: str | None
    via: str  # name | synonym
    table_part: str = ""  # for 'client name'-style terms: the table's words ('client')
    pointer: bool = False  # a foreign-key column: the thing it names lives in another table


class KeywordDictionary:
    """Tables and columns under the words users call them by."""

    def __init__(self, catalog: Catalog, access: Access = NO_RULES) -> None:
        terms: list[Term] = []
        described: dict[tuple[str, str | None], str] = {}
        pointers = {(r.table, c) for r in catalog.relationships for c in r.columns}
        for table in catalog.tables:
            if not access.allows(table.name):
                continue
            t_name = name_words(table.name)
            t_labels = [(t_name, "name"), *((" ".join(words(s)), "synonym") for s in table.synonyms)]
            expanded = expanded_words(table.name)
            if expanded != t_name:
                t_labels.append((expanded, "name"))
            terms.extend(Term(text, table.name, None, via) for text, via in t_labels if text)
            if table.description:
                described[(table.name, None)] = table.description
            for col in table.columns:
                if not access.allows(table.name, col.name):
                    continue
                c_name = name_words(col.name)
                c_expanded = expanded_words(col.name)
                c_labels = [(c_name, "name"), *((" ".join(words(s)), "synonym") for s in col.synonyms)]
                if c_expanded != c_name:
                    c_labels.append((c_expanded, "name"))
                unitless = without_unit(c_name)
                if unitless and unitless != c_name:
                    c_labels.append((unitless, "name"))
                pointer = (table.name, col.name) in pointers
                for text, via in c_labels:
                    if not text:
                        continue
                    terms.append(Term(text, table.name, col.name, via, pointer=pointer))
                    # In the context of its table: 'client name', 'customer name', 'client company name'.
                    for t_text, t_via in t_labels if via == "name" else t_labels[:1]:
                        rest = text[len(t_text) + 1 :] if text.startswith(f"{t_text} ") else ""
                        if len(rest.split()) > 1 and via == "name":
                            # the table's name said once: 'first name' for customer_first_name
                            terms.append(Term(rest, table.name, col.name, via, pointer=pointer))
                        if not text.startswith(t_text):
                            combined_via = "synonym" if "synonym" in (via, t_via) else "name"
                            terms.append(
                                Term(f"{t_text} {text}", table.name, col.name, combined_via, t_text, pointer)
                            )
                if col.description:
                    described[(table.name, col.name)] = col.description
        self.terms = terms
        self._by_text: dict[str, list[Term]] = defaultdict(list)
        for term in terms:
            self._by_text[term.text].append(term)
        self._texts = list(self._by_text)
        self._word_index: WordIndex | None = None
        # (text, limit) → the terms a match scores (_kept); at most one entry per text and limit
        self._kept_terms: dict[tuple[str, int], tuple[Term, ...]] = {}
        # Description words → the tables/columns they describe.
        self._described = described
        # in catalog order, not a set: tied description matches are cut in the same order in every
        # process (a set of (table, None) keys iterates in an order hash(None) picks per process)
        self._by_word: dict[str, dict[tuple[str, str | None], None]] = defaultdict(dict)
        for key, text in described.items():
            for w in words(text):
                if w not in STOPWORDS:
                    self._by_word[w][key] = None

    def _words(self) -> WordIndex:
        """The word index of the terms, built on the first match of a large dictionary, with which
        of each repeated text's terms a match at the usual limit scores (`_kept`)."""
        if self._word_index is None:
            for text in self._texts:
                self._kept(text, MATCH_LIMIT)
            self._word_index = WordIndex(self._texts)
        return self._word_index

    def prepare(self) -> None:
        """Build now what the first match of a large dictionary would (core/warm.py)."""
        if len(self._texts) > LARGE_DICTIONARY:
            self._words()

    def _kept(self, text: str, limit: int) -> Sequence[Term]:
        """The terms of `text` a match scores: the first `limit` of each kind, in their order.

        Why: a warehouse repeats a column in hundreds of tables (`client_id`): one text, as many
        terms of one score; past `limit` of a kind, the rest could at best tie with those kept.
        Walking all of them for every match was most of a keyword's time on 10,000 tables
        (`python -m core.bench linking`), so the choice is made once per text and limit.
        """
        terms = self._by_text[text]
        if len(terms) <= limit:
            return terms  # no kind can hold more than `limit`
        key = (text, limit)
        kept = self._kept_terms.get(key)
        if kept is None:
            seen: dict[tuple[str, bool, str], int] = defaultdict(int)
            chosen = []
            for term in terms:
                kind = (term.via, term.pointer, term.table_part)
                seen[kind] += 1
                if seen[kind] <= limit:
                    chosen.append(term)
            kept = self._kept_terms[key] = tuple(chosen)
        return kept

    def spelled(self, text: str) -> list[Term]:
        """Columns whose own name is `text` word for word (folded, singular words). The fuzzy match
        cannot find them when the name is mostly filler words: 'number of hosts' leaves only 'host'
        once 'number' and 'of' are dropped, and 'host' names the table host."""
        return [
            t
            for t in self._by_text.get(text, ())
            if t.column and t.via == "name" and not t.table_part and not t.pointer
        ]

    def match(
        self, keyword: str, limit: int = MATCH_LIMIT, min_score: float = MIN_SCORE
    ) -> list[SchemaMatch]:
        """Tables and columns `keyword` may name, best first (one match per table/column)."""
        typed = [
            part for w in words(keyword) for part in (TYPED_SHORT[w].split() if w in TYPED_SHORT else [w])
        ]
        kw_words = [w for w in typed if w not in STOPWORDS] or typed
        query = " ".join(kw_words)
        if not query:
            return []
        best: dict[tuple[str, str | None], SchemaMatch] = {}

        def offer(m: SchemaMatch) -> None:
            key = (m.table, m.column)
            if m.score >= min_score and (key not in best or best[key].score < m.score):
                best[key] = m

        # Whole-term similarity (typos) and word-set similarity (order, extra words) pick candidates.
        texts: Sequence[str] = self._texts
        ids: Sequence[int] = range(len(texts))
        if len(texts) > LARGE_DICTIONARY:
            ids = self._words().candidates(query, CANDIDATES)
            texts = [self._texts[i] for i in ids]
        near = {
            ids[i] for _, _, i in process.extract(query, texts, scorer=fuzz.QRatio, limit=20, score_cutoff=60)
        }
        near |= {
            ids[i]
            for _, _, i in process.extract(
                query, texts, scorer=fuzz.token_set_ratio, limit=60, score_cutoff=60
            )
        }
        for i in near:
            text = self._texts[i]
            score = similarity(query, text)
            if round(score, 4) < min_score:
                continue  # no term of it can score more than the text: none would be offered
            for term in self._kept(text, limit):
                s = score
                if term.via == "synonym":
                    s *= 0.98  # the real name wins a tie
                if term.pointer:
                    s *= 0.85  # payment.client_id says 'client', but clients live in client
                s = round(s, 4)
                key = (term.table, term.column)
                if s < min_score or (key in best and best[key].score >= s):
                    continue  # `offer` would refuse it: spare the table-part comparison below
                if term.table_part and similarity(query, term.table_part) >= score:
                    continue  # 'hosts' names the table, not every 'host …' column
                offer(SchemaMatch(keyword, term.table, term.column, s, term.via))
        # Description mentions: the share of the keyword's words the description contains.
        hits: dict[tuple[str, str | None], int] = defaultdict(int)
        for w in dict.fromkeys(kw_words):
            for key in self._by_word.get(w, {}):
                hits[key] += 1
        for (table, column), n in hits.items():
            score = DESCRIPTION_MAX * n / len(set(kw_words))
            offer(SchemaMatch(keyword, table, column, round(score, 4), "description"))
        return sorted(best.values(), key=lambda m: (-m.score, m.column is not None))[:limit]


def keyword_dictionary(catalog: Catalog, access: Access = NO_RULES) -> KeywordDictionary:
    """The dictionary of `catalog`, built once per catalog object and access rules."""
    return catalog.memo(("keyword_dictionary", access), lambda: KeywordDictionary(catalog, access))
