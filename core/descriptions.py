"""Description retrieval: the catalog's table, column and value descriptions ranked against the question.

CHESS (appendix A.2) and LAIA-SQL rank descriptions by embedding similarity. Askbase ranks them
with BM25 over folded, singular words, each description also carrying the words of the name and
synonyms of what it describes: it needs no model from the internet, is exact about codes and
names, and takes microseconds. Only the few best descriptions reach the prompt (CHESS: selective
context beats dumping every description). Built once per catalog object and access rules.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache

from core.catalog import Catalog
from core.dictionary import NAMES_KEPT, STOPWORDS, split_identifier, stem, words
from core.retrieval import DescriptionHit
from core.values import NO_RULES, Access

K1 = 1.2
B = 0.75


@dataclass(frozen=True)
class _Doc:
    table: str
    column: str | None
    value: str | None
    text: str  # what the prompt is shown
    length: int


def _content(text: str) -> list[str]:
    return [w for w in words(text) if w not in STOPWORDS]


def _name(name: str) -> list[str]:
    return list(_name_words(name))


@lru_cache(maxsize=NAMES_KEPT)
def _name_words(name: str) -> tuple[str, ...]:
    """A name's singular words, remembered: a warehouse's 200,000 columns share a few thousand
    names, and splitting each anew was most of building this index on 10,000 tables."""
    return tuple(stem(w) for w in split_identifier(name))


class DescriptionIndex:
    """BM25 over every description, synonym list and value meaning in the catalog."""

    def __init__(self, catalog: Catalog, access: Access = NO_RULES) -> None:
        docs: list[_Doc] = []
        postings: dict[str, list[tuple[int, int]]] = defaultdict(list)

        def add(table: str, column: str | None, value: str | None, text: str, tokens: list[str]) -> None:
            counts = Counter(tokens)
            for token, tf in counts.items():
                postings[token].append((len(docs), tf))
            docs.append(_Doc(table, column, value, text, len(tokens)))

        for table in catalog.tables:
            if not access.allows(table.name):
                continue
            if table.description or table.synonyms:
                text = table.description or "also called " + ", ".join(table.synonyms)
                tokens = _name(table.name) + [w for s in table.synonyms for w in _content(s)] + _content(text)
                add(table.name, None, None, text, tokens)
            for col in table.columns:
                if not access.allows(table.name, col.name):
                    continue
                context = _name(table.name) + _name(col.name) + [w for s in col.synonyms for w in _content(s)]
                if col.description:
                    add(table.name, col.name, None, col.description, context + _content(col.description))
                for code, meaning in col.values.items():
                    add(
                        table.name,
                        col.name,
                        code,
                        f"{col.name} = '{code}' means {meaning}",
                        _name(col.name) + _content(meaning) + _content(code),
                    )
        self.docs = docs
        n = max(len(docs), 1)
        self._avgdl = sum(d.length for d in docs) / n if docs else 1.0
        self._idf = {t: math.log(1 + (n - len(p) + 0.5) / (len(p) + 0.5)) for t, p in postings.items()}
        self._postings = dict(postings)

    def rank(self, question: str, k: int = 8, min_score: float = 0.15) -> list[DescriptionHit]:
        """The k descriptions that best cover the question's catalog words, best first.

        Score: the IDF-weighted share of the question's words known to the catalog that the
        description contains (saturated BM25 term weights), 0..1.
        """
        terms = [t for t in dict.fromkeys(_content(question)) if t in self._idf]
        if not terms:
            return []
        total = sum(self._idf[t] for t in terms)
        scores: dict[int, float] = defaultdict(float)
        for t in terms:
            idf = self._idf[t]
            for i, tf in self._postings[t]:
                norm = 1 - B + B * self.docs[i].length / self._avgdl
                scores[i] += (
                    idf * tf * (K1 + 1) / (tf + K1 * norm)
                )  # 1 × idf for one mention at average length
        hits = []
        for i, s in scores.items():
            score = min(1.0, s / total)
            if score >= min_score:
                d = self.docs[i]
                hits.append(DescriptionHit(d.table, d.column, d.text, round(score, 4), value=d.value))
        hits.sort(key=lambda h: (-h.score, h.table, h.column or "", h.value or ""))
        return hits[:k]


def description_index(catalog: Catalog, access: Access = NO_RULES) -> DescriptionIndex:
    """The description index of `catalog`, built once per catalog object and access rules."""
    return catalog.memo(("descriptions", access), lambda: DescriptionIndex(catalog, access))
