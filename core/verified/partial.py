"""A question the grammar cannot place word for word, read with a few words left unplaced.

Why: keyword mode's grammar reads a question only when it places every word, which is right for
keyword mode (it must be sure of each word or stay silent) but too strict for the verified
matcher, which only asks whether two questions mean the same. 'how many wire transfers were
still pending in Q4 2025' is not read because no rule places 'still'; read without it, it is the
tree of 'how many wire transfers were pending in Q4 2025'. So when the grammar reads no tree —
or reads one the schema cannot bind, an unknown word taken for a name ('in prod-frankfurt-2
thanks') — the matcher reads the question again with one, two or three words left out, fewest
first, and takes the first reading that places every word left (and that binds, in the second
case).

Only words that cannot change what is asked may be left out, and what is left out is said:

- an `unplaced` word of the lexicon (core/keyword/lexicon.yaml: 'still', 'actually', 'thanks'):
  general English that says nothing a query could hold. It is left out freely;
- a word the reader does not know at all (no word of the lexicon, of the schema or of a stored
  value, no number, no month): it is `left`, and the match then holds only when the other
  question says the same word too (core/verified/match.py) — a word only one of them says may
  carry what the other lacks.

Never a word of the lexicon's cues (a comparison, a negation, an aggregate, a period, a
grouping: those change the tree), a word the schema names, or a stored value's word: such a
word left out would be a filter or a measure silently dropped, the one thing a verified answer
must never do.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.dictionary import stem
from core.keyword.grammar import MONTHS, Names, Reading, Token, read, tokenize
from core.keyword.lexicon import WORDS
from core.verified.typos import vocabulary

MAX_LEFT = 3  # words one reading may leave out
MAX_TRIES = 40  # readings tried at most (each costs about a millisecond)
UNPLACED = WORDS.sets["unplaced"]
_NAME_EDGE = set("-./_@#&'’")


@dataclass(frozen=True)
class Partial:
    """The question read without some of its words."""

    reading: Reading  # over the question as read, the words left out taken away
    left: frozenset[str]  # the unknown words left out (stemmed): the other question must say them


def reread(
    question: str,
    names: Names,
    known: Callable[[str], bool],
    accept: Callable[[Reading], bool] = lambda r: bool(r.trees),
) -> Partial | None:
    """The first reading `accept` takes (by default: one that places every word) once a few
    words that cannot change what is asked are left out, fewest first; None when none is.
    `known(word)`: the word is the schema's or a stored value's (never left out)."""
    tokens = tokenize(question)
    leavable = [i for i, t in enumerate(tokens) if _leavable(question, t, names, known)]
    tries = 0
    for n in range(1, min(MAX_LEFT, len(leavable)) + 1):
        for chosen in itertools.combinations(leavable, n):
            tries += 1
            if tries > MAX_TRIES:
                return None
            reading = read(_without(question, tokens, chosen), names)
            if reading.trees and accept(reading):
                left = frozenset(stem(tokens[i].low) for i in chosen if tokens[i].low not in UNPLACED)
                return Partial(reading, left)
    return None


def said(question: str) -> frozenset[str]:
    """Every word of the question, stemmed: what a word left out of the other question is
    looked for in."""
    return frozenset(stem(t.low) for t in tokenize(question) if t.kind == "word")


def _leavable(question: str, t: Token, names: Names, known: Callable[[str], bool]) -> bool:
    """A whole lower-case word that is an `unplaced` word or one the reader does not know."""
    if t.kind != "word" or not t.text.isalpha() or t.text[1:] != t.text[1:].lower():
        return False  # a number, a code, an acronym ('DCs'), a name written with capitals inside
    if (t.start > 0 and question[t.start - 1] in _NAME_EDGE) or (
        t.end < len(question) and question[t.end] in _NAME_EDGE
    ):
        return False  # part of a hyphenated word or a name written with signs
    if names.spells(t.low) or known(t.low) or t.low in MONTHS:
        return False
    return t.low in UNPLACED or t.low not in vocabulary()


def _without(question: str, tokens: Sequence[Token], chosen: Sequence[int]) -> str:
    """The question with the chosen tokens taken out (a space where each was)."""
    out, last = [], 0
    for i in chosen:
        out += [question[last : tokens[i].start], " "]
        last = tokens[i].end
    return "".join(out) + question[last:]
