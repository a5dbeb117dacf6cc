"""Folding: the form in which stored values and typed keywords are compared, and how alike two are.

'E-176', 'e 176' and 'E176' fold to the same words; `similarity` then scores a folded keyword
against a folded value, tolerating typos, word order and a missing word.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

from rapidfuzz import fuzz

SEP = "\x00"  # separates values in bulk strings; never part of a folded value

_ASCII_TABLE: dict[int, str | None] = {i: " " for i in range(128) if not chr(i).isalnum()}
_ASCII_TABLE[0] = SEP
_SPACES = re.compile("  +")  # compiled once: `re.sub` looked the pattern up on each of a million folds


def fold_many(texts: Sequence[str]) -> list[str]:
    """`fold` for many texts at once: a few passes over one joined string instead of a loop."""
    if not texts:
        return []
    joined = SEP.join(texts)
    if joined.count(SEP) != len(texts) - 1:  # a text holds NUL itself: fold one by one
        return [fold_many([t.replace(SEP, " ")])[0] for t in texts]
    joined = joined.casefold()
    if not joined.isascii():
        joined = unicodedata.normalize("NFKD", joined)
        table: dict[int, str | None] = {}
        for ch in set(joined):
            if ch.isascii():
                continue
            if unicodedata.combining(ch):
                table[ord(ch)] = None  # accents, once NFKD separated them
            elif not ch.isalnum():
                table[ord(ch)] = " "
        joined = joined.translate(table)
    joined = joined.translate(_ASCII_TABLE)
    joined = _SPACES.sub(" ", joined)
    joined = joined.replace(" " + SEP, SEP).replace(SEP + " ", SEP).strip(" ")
    return joined.split(SEP)


def fold(text: str) -> str:
    """Lower-case, accent-free words separated by single spaces: 'Zürich-Süd' → 'zurich sud'."""
    return fold_many([text])[0]


_NUMERIC = re.compile(r"[+-]?\d+(?:[.,]\d+)?")


def is_numeric(text: str) -> bool:
    """A purely numeric keyword, matched exactly (LAIA-SQL §4.2)."""
    return bool(_NUMERIC.fullmatch(text.strip()))


def similarity(query: str, value: str) -> float:
    """How well a folded keyword matches a folded stored value, 0..1 (1 only for the same string).

    The better of two views: the whole strings without spaces (typos, punctuation, spacing), and
    word-by-word alignment (word order, a missing or extra word), where each query word takes its
    best value word and the share of the value left unmatched costs a little.
    """
    qc, vc = query.replace(" ", ""), value.replace(" ", "")
    if not qc or not vc:
        return 0.0
    if qc == vc:
        return 1.0
    best = fuzz.ratio(qc, vc) / 100
    qt, vt = query.split(), value.split()
    if len(qt) > 1 or len(vt) > 1:
        v_best = [0.0] * len(vt)
        q_cover = 0.0
        for a in qt:
            top, at = 0.0, -1
            for j, b in enumerate(vt):
                r = fuzz.ratio(a, b) / 100
                if r >= 0.5 and r > top:
                    top, at = r, j
            if at >= 0:
                q_cover += len(a) * top
                v_best[at] = max(v_best[at], top)
        q_cover /= len(qc)
        v_cover = sum(len(b) * r for b, r in zip(vt, v_best, strict=True)) / len(vc)
        best = max(best, q_cover * (0.65 + 0.35 * v_cover))
    return round(min(best, 0.99), 4)
