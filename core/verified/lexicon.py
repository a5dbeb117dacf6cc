"""A database's words for the verified-query matcher: its schema's names and its stored values.

Schema words come from the keyword dictionary (core/dictionary.py: names, catalog synonyms,
plurals), values from the value index (core/values/). Both answers are remembered, so a question
costs a few dictionary and index lookups the first time its words are seen and nearly nothing after.
One lexicon per catalog object (a changed schema is a new catalog, hence a new lexicon); looked-up
values are forgotten after VALUES_TTL_S, so new rows in the database are seen. Without a value
index (a large database nobody indexed yet) no word is looked up as a value: verified queries are
then reused only for questions whose values are the same words.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from core.database import Database
from core.dictionary import STOPWORDS, KeywordDictionary, keyword_dictionary, stem
from core.retrieval import SchemaMatch, ValueMatch
from core.values import Access
from core.verified.reading import SCHEMA_WORD_MIN, TIE

VALUE_MIN = 0.8  # weaker value matches are no parameter at all
VALUES_PER_TEXT = 12
VALUES_TTL_S = 300.0
MEMO_SIZE = 20_000

ValueLookup = Callable[[str], list[ValueMatch]]
T = TypeVar("T")


class DatabaseLexicon:
    def __init__(
        self, dictionary: KeywordDictionary, lookup: ValueLookup, db: Database | None = None
    ) -> None:
        self.db = db  # the matcher reads questions as keyword mode reads them (core/verified/match.py)
        self._dictionary = dictionary
        self._lookup = lookup
        self._concepts: dict[tuple[str, bool], str | None] = {}
        self._values: OrderedDict[str, tuple[float, tuple[ValueMatch, ...]]] = OrderedDict()
        self._memo: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def memo(self, key: Hashable, build: Callable[[], T]) -> T:
        """Something read with this lexicon (a verified question's template), built once."""
        if key not in self._memo:
            value = build()
            with self._lock:
                if len(self._memo) >= MEMO_SIZE:
                    self._memo.clear()
                self._memo[key] = value
        result: T = self._memo[key]
        return result

    def concept(self, text: str, *, phrase: bool) -> str | None:
        key = (text, phrase)
        if key in self._concepts:
            return self._concepts[key]
        found = _concept(self._dictionary, text, phrase)
        with self._lock:
            if len(self._concepts) >= MEMO_SIZE:
                self._concepts.clear()
            self._concepts[key] = found
        return found

    def values(self, text: str) -> tuple[ValueMatch, ...]:
        now = time.monotonic()
        with self._lock:
            hit = self._values.get(text)
            if hit is not None and now - hit[0] < VALUES_TTL_S:
                return hit[1]
        found = tuple(m for m in self._lookup(text) if m.score >= VALUE_MIN)
        with self._lock:
            self._values[text] = (now, found)
            self._values.move_to_end(text)
            while len(self._values) > MEMO_SIZE:
                self._values.popitem(last=False)
        return found


def _concept(dictionary: KeywordDictionary, text: str, phrase: bool) -> str | None:
    words = text.split()
    if any(w in STOPWORDS for w in words):
        return None  # the dictionary would read the phrase without them: "per segment" is no column
    if phrase:  # a phrase names a table or column only as one of its terms, word for word
        return _phrase_concept(dictionary, " ".join(stem(w) for w in words))
    matches = [m for m in dictionary.match(text, limit=8, min_score=0.5) if m.via != "description"]
    if not matches:
        return None
    top = max(m.score for m in matches)
    if top < SCHEMA_WORD_MIN:
        return None
    return "|".join(sorted({_key(m) for m in matches if m.score >= top - TIE}))


def _phrase_concept(dictionary: KeywordDictionary, text: str) -> str | None:
    terms = [term for term in dictionary.terms if term.text == text]
    direct = [term for term in terms if not term.pointer] or terms
    keys = {f"c:{t.table}.{t.column}".lower() if t.column else f"t:{t.table}".lower() for t in direct}
    return "|".join(sorted(keys)) or None


def _key(m: SchemaMatch) -> str:
    return f"c:{m.table}.{m.column}".lower() if m.column else f"t:{m.table}".lower()


def lexicon_for(db: Database) -> DatabaseLexicon:
    """The lexicon of `db`'s current catalog (built once per catalog)."""
    catalog = db.catalog
    access = Access.of(db)

    def lookup(text: str) -> list[ValueMatch]:
        index = db.values
        if index.mode == "direct":  # no index built: scanning the tables for every word costs seconds
            return []
        return index.lookup(text, k=VALUES_PER_TEXT, min_score=VALUE_MIN)

    return catalog.memo(
        ("verified_lexicon", access), lambda: DatabaseLexicon(keyword_dictionary(catalog, access), lookup, db)
    )
