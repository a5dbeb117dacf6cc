"""Words for a coded value that the catalog's meaning of it says, not only the meaning whole.

Why: the catalog describes codes in a few words ('wire': "bank wire transfer", 'failed':
"declined or bounced", 'card': "credit or debit card"), and people say part of the description
('wire transfers', 'declined payments', 'paid by credit card', 'small businesses'). A fuzzy match of
the phrase against the whole description scores those parts too low to be sure, or not at all.

What a description lends, read word for word (folded, plurals as singular):
- each alternative it lists ("declined or bounced" → declined, bounced; "credit or debit card" →
  credit card, debit card: a one-word alternative before a longer one shares its head noun;
  "small and medium-sized business" → small business, medium-sized business);
- of an alternative of several words, any run of two words or more that ends with its last word
  (its head: "wire transfer" of "bank wire transfer") or holds the code itself ("bank wire").
A single word is lent only as a whole alternative ("declined", "running"), never as the head of a
longer one ('transfer' alone, 'received' of "money received" and "not yet received"). Words that
more than one value's description lends are lent by none (they are ambiguous on this schema).

A country said by its adjective or its people ('Swedish customers', 'the Swiss') is the country's
name, where a column stores it (demonyms.yaml: general English, as data).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

from core.keyword.lexicon import WORDS
from core.plurals import singular
from core.values import fold
from core.yaml_text import load_yaml

DEMONYMS_FILE = "demonyms.yaml"

MEANING_WORDS_SCORE = 0.96  # part of a description: as sure as a code said in other words
WHOLE_SCORE = 1.0  # an alternative of several words, whole ('credit card'), is as sure as the code
STOP = WORDS.sets["stop"]
_SPLIT = re.compile(r"\s*,\s*|\s+(?:or|and)\s+")
_WORD = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")

Coded = tuple[str, str, str, str]  # table, column, code, the description


def said(text: str) -> tuple[str, ...]:
    """The words of `text` as a description is matched: folded, each in the singular; hyphens
    and spaces alike ('shut-down' is 'shut down')."""
    out: list[str] = []
    for w in _WORD.findall(fold(text)):
        out += [singular(p) for p in w.split("-") if p]
    return tuple(out)


def _participle(word: str) -> bool:
    return len(word) > 4 and word.endswith(tuple(WORDS.sets["participle_suffixes"]))


def alternatives(meaning: str) -> list[tuple[str, ...]]:
    """The alternatives a description lists, each as its words ('credit or debit card' →
    credit card, debit card)."""
    pieces = [said(p) for p in _SPLIT.split(meaning.lower().strip()) if p.strip()]
    pieces = [p for p in pieces if p]
    if len(pieces) < 2:
        return pieces
    last = pieces[-1]
    out: list[tuple[str, ...]] = []
    for p in pieces[:-1]:
        if len(p) == 1 and len(last) > 1 and not _participle(p[0]):
            out.append((p[0], last[-1]))  # 'credit or debit card': a credit card
        else:
            out.append(p)
    return [*out, last]


def lent(meaning: str, code: str) -> set[tuple[str, ...]]:
    """Every run of words the description lends its code."""
    code_words = set(said(code))
    out: set[tuple[str, ...]] = set()
    for alt in alternatives(meaning):
        out.add(alt)
        n = len(alt)
        for i in range(n):
            for j in range(i + 2, n + 1):
                run = alt[i:j]
                if run[0] in STOP or run[-1] in STOP:
                    continue
                if j == n or code_words & set(run):
                    out.add(run)
    return out


def index(meanings: Iterable[Coded]) -> dict[tuple[str, ...], tuple[Coded, float]]:
    """Words → the one coded value whose description lends them, and how surely (ambiguous
    words left out)."""
    found: dict[tuple[str, ...], set[Coded]] = {}
    whole: set[tuple[str, ...]] = set()
    for table, column, code, meaning in meanings:
        whole |= {a for a in alternatives(meaning) if len(a) > 1}
        for run in lent(meaning, code):
            found.setdefault(run, set()).add((table, column, code, meaning))
    return {
        run: (next(iter(c)), WHOLE_SCORE if run in whole else MEANING_WORDS_SCORE)
        for run, c in found.items()
        if len({x[:3] for x in c}) == 1
    }


class DemonymsError(ValueError):
    """demonyms.yaml does not fit its schema."""


def parse_demonyms(data: Any, source: str = DEMONYMS_FILE) -> Mapping[tuple[str, ...], str]:
    """The words (as `said` reads them) → the country's name, checked against the file's schema."""
    if not isinstance(data, dict) or data.get("version") != 1 or set(data) != {"version", "countries"}:
        raise DemonymsError(f"{source}: expected a mapping with version: 1 and countries")
    countries = data["countries"]
    if not isinstance(countries, dict):
        raise DemonymsError(f"{source}: countries must map a name to its words")
    out: dict[tuple[str, ...], str] = {}
    for name, words in countries.items():
        if not isinstance(name, str) or not isinstance(words, list) or not words:
            raise DemonymsError(f"{source}: countries.{name} must be a list of words")
        for w in words:
            if not isinstance(w, str) or w != w.lower() or not said(w):
                raise DemonymsError(f"{source}: countries.{name}: {w!r} is not a word in lower case")
            if said(w) in out:
                raise DemonymsError(f"{source}: countries.{name}: {w!r} names two countries")
            out[said(w)] = name
    return out


@functools.cache
def demonyms() -> Mapping[tuple[str, ...], str]:
    """The packaged demonyms, read and checked once per process."""
    text = resources.files("core.keyword").joinpath(DEMONYMS_FILE).read_text(encoding="utf-8")
    return parse_demonyms(load_yaml(text))


def country(phrase: str) -> str | None:
    """The country a phrase names by its adjective or people ('Swedish', 'Swiss', 'Danes')."""
    return demonyms().get(said(phrase))
