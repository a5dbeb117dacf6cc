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
from importlib import resources

from rapidfuzz import fuzz

from core.definitions.model import Definition, Definitions
from core.dictionary import words
from core.yaml_text import load_yaml

MAX_PICKED = 12
NAME_SCORE = 90  # rapidfuzz ratio of a name against the question's words of the same length
_LETTERS_DIGITS = re.compile(r"(?<=[a-z])(?=[0-9])|(?<=[0-9])(?=[a-z])")
NEAR = 3  # words a name's words may lie apart and still be the name


def _load_words() -> tuple[frozenset[str], frozenset[str]]:
    """The stop and generic words of words.yaml (its header says what each list is for)."""
    data = load_yaml(resources.files("core.definitions").joinpath("words.yaml").read_text())
    if not isinstance(data, dict) or set(data) != {"stop", "generic"}:
        raise ValueError("core/definitions/words.yaml must hold exactly the lists 'stop' and 'generic'")
    lists = []
    for key in ("stop", "generic"):
        if not isinstance(data[key], list) or not all(
            isinstance(w, str) and w == w.lower() for w in data[key]
        ):
            raise ValueError(f"core/definitions/words.yaml: '{key}' must be a list of lower-case words")
        lists.append(frozenset(w for word in data[key] for w in words(word)))
    return lists[0], lists[1]


_STOP, _GENERIC = _load_words()


@dataclass(frozen=True)
class Pick:
    definition: Definition
    why: str  # "said 'loss ratio'", "part of loss ratio"


def _words(text: str) -> list[str]:
    """The keyword dictionary's words (folded, singular, abbreviations spelled out: 'avg' is
    'average'), with letters and digits apart ('FY24' is 'fy 24', as 'FY 2024' is)."""
    return words(_LETTERS_DIGITS.sub(" ", text.lower()), expand=True)


def _root(word: str) -> str:
    """'collected', 'collecting' → 'collect': a name said as a verb ('premium we collected')."""
    if len(word) > 6 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 5 and word.endswith("ed"):
        return word[:-2]
    return word


def said(phrase: str, question_words: list[str]) -> bool:
    """Does the question say `phrase`: its words in a row (one-letter typos forgiven), or, for a
    name of several words, all of them close together in any order ('premium did we collect'
    says 'premium collected')?"""
    target = _words(phrase)
    if not target:
        return False
    n = len(target)
    joined = " ".join(target)
    for i in range(len(question_words) - n + 1):
        window = " ".join(question_words[i : i + n])
        if window == joined or (len(joined) >= 6 and fuzz.ratio(window, joined) >= NAME_SCORE):
            return True
    if n < 2:
        return False
    roots = {_root(w) for w in target}
    said_roots = [_root(w) for w in question_words]
    return any(
        said_roots[i] in roots and roots <= set(said_roots[i : i + n + NEAR]) for i in range(len(said_roots))
    )


def pick(question: str, definitions: Definitions, limit: int = MAX_PICKED) -> list[Pick]:
    """The definitions `question` needs, best first, with why each was picked."""
    said_words = _words(question)
    content = {w for w in said_words if w not in _STOP} & _distinctive(definitions)
    picked: dict[str, Pick] = {}

    def add(d: Definition, why: str) -> None:
        key = f"{d.kind}:{d.ref}:{d.text}"
        if key not in picked and len(picked) < limit:
            picked[key] = Pick(d, why)

    for d in definitions:
        if d.kind == "instruction":
            continue
        hit = next((w for w in d.words if said(w, said_words)), None)
        if hit is not None:
            add(d, f"said '{hit}'")
    for d in definitions:
        if d.kind == "instruction":
            overlap = content & set(_words(" ".join((d.text, *d.words))))
            if overlap - _GENERIC:
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
    return {w for w, n in counts.items() if n <= limit and len(w) > 1 and not w.isdigit()}  # not years


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
