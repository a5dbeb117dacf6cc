"""Typos of common words, mended before the matcher reads a question.

Why: the lexicon's `spellings` (core/keyword/lexicon.yaml) lists the typos people make most often
('teh', 'hwo', 'mnay'), but people mistype any word, and a verified answer should not be missed
because 'percentge' or 'montly' is no word the grammar knows. A word is mended only when it is
no word the reader knows (the lexicon, the schema's names, a stored value) and exactly one word
of the lexicon is one slip away from it: two letters swapped, one letter more, one letter fewer
or, in long words, one letter wrong. Short words are left alone ('form' could be 'from' or 'for'),
and so is anything that may be a name: a capitalized word inside the sentence, a word in a code
('prod-frankfurt-1') or one the value index spells. The verified question and the new one are
mended the same way, so the mending can only make two questions read alike when their words do.
"""

from __future__ import annotations

import calendar
import functools
import itertools
import re
from collections.abc import Callable, Iterable, Iterator

from core.keyword.lexicon import WORDS

TRANSPOSE_MIN = 4  # 'mdae' → 'made'; 'hwo' could be 'how' or 'who' (the lexicon's spellings say)
EXTRA_MIN = 5  # typed letters, one of them doubled: 'manny' → 'many' ('brought' is no 'bought')
MISSING_MIN = 5  # letters of the word meant: 'percentge' → 'percentage'; 'mnth' → 'month'
WRONG_MIN = 6  # a vowel for a vowel or a key's neighbour: 'avarage'; 'cost' → 'most' is another word
INFLECTIONS = frozenset("sd")  # 'hour' is not a slip of 'hours', nor 'rate' of 'rated'
VOWELS = frozenset("aeiouy")
_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")
_WORD = re.compile(r"[^\W\d_]+")
_CODE_EDGE = set("-./_@#'’") | set("0123456789")

Known = Callable[[str], bool]


def _words_of(phrases: Iterable[str]) -> Iterator[str]:
    for phrase in phrases:
        yield from (w for w in _WORD.findall(phrase.lower()) if len(w) > 1)


@functools.cache
def vocabulary() -> frozenset[str]:
    """Every word the lexicon reads a question with: cue phrases, word sets, numbers, units,
    buckets, agents, implied columns, spellings and the month names."""
    sources: list[Iterable[str]] = [
        (" ".join(p) for p in WORDS.cues),
        *WORDS.sets.values(),
        WORDS.numbers,
        WORDS.time_units,
        WORDS.buckets,
        WORDS.agents,
        WORDS.agents.values(),
        WORDS.implied,
        (w for cols in WORDS.implied.values() for w in cols),
        WORDS.spellings.values(),
        (m.lower() for m in calendar.month_name if m),
        *WORDS.definitions.values(),
    ]
    return frozenset(w for s in sources for w in _words_of(s))


@functools.cache
def _index() -> tuple[dict[str, frozenset[str]], dict[tuple[str, int], frozenset[str]]]:
    """Each vocabulary word by its one-letter-shorter forms: the word with one letter dropped
    (anywhere), and the same with the position it was dropped at (for a wrong letter)."""
    shorter: dict[str, set[str]] = {}
    at: dict[tuple[str, int], set[str]] = {}
    for word in vocabulary():
        for i in range(len(word)):
            cut = word[:i] + word[i + 1 :]
            shorter.setdefault(cut, set()).add(word)
            at.setdefault((cut, i), set()).add(word)
    return (
        {k: frozenset(v) for k, v in shorter.items()},
        {k: frozenset(v) for k, v in at.items()},
    )


def candidates(typed: str) -> frozenset[str]:
    """The vocabulary words one slip away from `typed` (lower case, not itself a word)."""
    words = vocabulary()
    shorter, at = _index()
    n = len(typed)
    found: set[str] = set()
    if n >= TRANSPOSE_MIN:
        for i in range(n - 1):
            swapped = typed[:i] + typed[i + 1] + typed[i] + typed[i + 2 :]
            if swapped != typed and swapped in words:
                found.add(swapped)
    for i in range(n):
        cut = typed[:i] + typed[i + 1 :]
        doubled = (i > 0 and typed[i - 1] == typed[i]) or (i + 1 < n and typed[i + 1] == typed[i])
        if n >= EXTRA_MIN and doubled and cut in words:
            found.add(cut)
        if n >= WRONG_MIN:
            found |= {w for w in at.get((cut, i), ()) if len(w) == n and _slip(typed[i], w[i])}
    if n + 1 >= MISSING_MIN:
        found |= {w for w in shorter.get(typed, ()) if not (w[:-1] == typed and w[-1] in INFLECTIONS)}
    return frozenset(found - {typed})


def _slip(typed: str, meant: str) -> bool:
    """One letter typed for another as people do: a vowel for a vowel, or a key's neighbour."""
    if typed in VOWELS and meant in VOWELS:
        return True
    return any(_near(row, typed, meant) for row in _ROWS) or _below(typed, meant) or _below(meant, typed)


def _near(row: str, a: str, b: str) -> bool:
    return a in row and b in row and abs(row.index(a) - row.index(b)) == 1


def _below(a: str, b: str) -> bool:
    """`b` is on the keyboard row below `a`, under it or one key to the left."""
    for upper, lower in itertools.pairwise(_ROWS):
        if a in upper and b in lower and lower.index(b) - upper.index(a) in (0, -1):
            return True
    return False


def mend(question: str, known: Known) -> str:
    """The question with each mistyped common word replaced by the word meant; `known(word)`
    says a word is the schema's or a stored value, never to be mended."""
    out: list[str] = []
    last = 0
    for m in _WORD.finditer(question):
        word = m.group()
        fixed = _mended(question, m.start(), m.end(), word, known)
        if fixed is not None:
            out += [question[last : m.start()], fixed]
            last = m.end()
    return "".join(out) + question[last:] if out else question


def _mended(question: str, start: int, end: int, word: str, known: Known) -> str | None:
    low = word.lower()
    if low in vocabulary() or len(low) < TRANSPOSE_MIN:
        return None
    if (start > 0 and question[start - 1] in _CODE_EDGE) or (
        end < len(question) and question[end] in _CODE_EDGE
    ):
        return None  # part of a code or a name written with signs
    if word[1:] != word[1:].lower() or (word[0].isupper() and question[:start].strip()):
        return None  # 'GmbH', or a capitalized word inside the sentence: a name, perhaps
    found = candidates(low)
    if len(found) != 1 or known(low) or any(known(w) for w in _around(question, start, end)):
        return None
    (meant,) = found
    return meant.capitalize() if word[0].isupper() else meant


def _around(question: str, start: int, end: int) -> Iterator[str]:
    """The runs of two and three words the word is part of, in lower case. Why: a word of a
    stored value may be a word of the lexicon one letter short ('late' in 'late payment fees' is
    one slip from 'later'); the value index knows the run when it does not know the word."""
    words = list(_WORD.finditer(question))
    at = next((k for k, m in enumerate(words) if m.start() == start and m.end() == end), None)
    if at is None:
        return
    for n in (2, 3):
        for first in range(max(0, at - n + 1), min(at, len(words) - n) + 1):
            run = words[first : first + n]
            yield question[run[0].start() : run[-1].end()].lower()
