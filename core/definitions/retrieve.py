"""Which definitions a question needs: found by their names, synonyms and descriptions, never all.

Why not all: a data team's project holds hundreds of metrics, and every definition shown is one
more reading the writer may take; CHESS (papers/chess.txt §3.1) shows only what retrieval found
relevant. A definition is picked when the question says its name or a synonym (as whole words,
plurals and small typos forgiven: rapidfuzz over word windows), or — more weakly — when several
content words of its description occur; then what a picked one stands on comes along (a ratio's
parts, the entity a metric or filter is over, the relationships between picked things).
An instruction is shown when the question says one of its distinctive words (a word few other
definitions use: "fiscal", "motor" — not "policy" in an insurer's set).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from core.definitions.model import Definition, Definitions

MAX_PICKED = 12
NAME_SCORE = 90  # rapidfuzz ratio of a name against the question's words of the same length
_WORD = re.compile(r"[a-z0-9%]+")
_STOP = frozenset(
    [
        "a",
        "an",
        "the",
        "of",
        "in",
        "on",
        "for",
        "to",
        "by",
        "with",
        "and",
        "or",
        "is",
        "are",
        "was",
        "were",
        "be",
        "what",
        "which",
        "who",
        "how",
        "many",
        "much",
        "per",
        "each",
        "all",
        "any",
        "show",
        "list",
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
        "from",
        "as",
        "at",
        "it",
        "do",
        "does",
        "did",
    ]
)


@dataclass(frozen=True)
class Pick:
    definition: Definition
    why: str  # "said 'loss ratio'", "part of loss ratio"


def _words(text: str) -> list[str]:
    return [_singular(w) for w in _WORD.findall(text.lower())]


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def said(phrase: str, question_words: list[str]) -> bool:
    """Does the question say `phrase` (whole words, plurals and one-letter typos forgiven)?"""
    target = _words(phrase)
    if not target:
        return False
    n = len(target)
    joined = " ".join(target)
    for i in range(len(question_words) - n + 1):
        window = " ".join(question_words[i : i + n])
        if window == joined or (len(joined) >= 6 and fuzz.ratio(window, joined) >= NAME_SCORE):
            return True
    return False


def pick(question: str, definitions: Definitions, limit: int = MAX_PICKED) -> list[Pick]:
    """The definitions `question` needs, best first, with why each was picked."""
    words = _words(question)
    content = {w for w in words if w not in _STOP} & _distinctive(definitions)
    picked: dict[str, Pick] = {}

    def add(d: Definition, why: str) -> None:
        key = f"{d.kind}:{d.ref}:{d.text}"
        if key not in picked and len(picked) < limit:
            picked[key] = Pick(d, why)

    for d in definitions:
        if d.kind == "instruction":
            continue
        hit = next((w for w in d.words if said(w, words)), None)
        if hit is not None:
            add(d, f"said '{hit}'")
    for d in definitions:
        if d.kind == "instruction":
            overlap = content & set(_words(" ".join((d.text, *d.words))))
            if overlap:
                add(d, f"mentions {', '.join(sorted(overlap)[:3])}")
        elif d.description and f"{d.kind}:{d.ref}:{d.text}" not in picked:
            overlap = content & {w for w in _words(d.description) if len(w) > 3}
            if len(overlap) >= 2:
                add(d, f"described with {', '.join(sorted(overlap)[:3])}")
    for p in list(picked.values()):  # what a picked definition stands on
        for needed in _needs(p.definition, definitions):
            add(needed, f"used by {p.definition.name}")
    refs = {p.definition.ref for p in picked.values()}
    for d in definitions.of_kind("relationship"):
        ends = {d.table.lower(), d.to.lower()}
        if ends & refs and len(ends & (refs | _tables(picked))) == 2:
            add(d, "joins what the question names")
    return list(picked.values())


def _distinctive(definitions: Definitions) -> set[str]:
    """Words used by few definitions: at most two, or a tenth of a large set."""
    counts: dict[str, int] = {}
    for d in definitions:
        text = " ".join((*d.words, d.description, d.text))
        for w in set(_words(text)) - _STOP:
            counts[w] = counts.get(w, 0) + 1
    limit = max(2, len(definitions) // 10)
    return {w for w, n in counts.items() if n <= limit and len(w) > 2}


def _tables(picked: dict[str, Pick]) -> set[str]:
    return {p.definition.table.lower() for p in picked.values() if p.definition.table}


def _needs(d: Definition, definitions: Definitions) -> list[Definition]:
    names = [d.numerator, d.denominator] if d.ratio else [d.table]
    out = []
    for name in names:
        found = definitions.by_ref(name) if name else None
        if found is not None and found is not d:
            out.append(found)
            out.extend(x for x in _needs(found, definitions) if x is not d)
    return out
