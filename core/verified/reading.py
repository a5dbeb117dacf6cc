"""How the verified-query matcher reads a question: concept words, and the spans that may be parameters.

A verified question and a new one are read the same way, without an LLM:

- tokens: words, numbers and ISO dates with their character offsets. Hyphenated names are split
  ("prod-frankfurt-1" is three tokens) but looked up whole, as the slice of the question they cover;
- spans: runs of tokens that may stand for a parameter — a stored value of a column (the value
  index: "Lyon" → location.city = 'Lyon', "churned" → client.status = 'CHN'), a year, a month of a
  year, a quarter, an ISO date, a number;
- words: every other token as a concept — an operation ("how many", "number of", "count" → @count;
  "not", "without", "except" → @not; "per", "each", "by" → @by), a table or column of the schema
  (the keyword dictionary: "customers" → t:client), or the word itself, lightly stemmed. Filler
  ("the", "please", "are there", "located in") reads as nothing.

`shape` then lays one choice of parameter spans over the words and returns what two questions must
share to mean the same thing: the same concepts (a set — "top 3 most valuable" is one @max), the
same parameter slots in the same roles (a negation, a comparison or a grouping is bound to what it
applies to: "not in Lyon" reads @not:⟨location.city⟩, "before 2025" @before:⟨year⟩), and the same
head (the first table or column named that is not a grouping: what is counted or listed).
Nothing here is tuned to a schema: the schema's own words come from the catalog.
"""

from __future__ import annotations

import calendar
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from core.dictionary import stem
from core.retrieval import ValueMatch
from core.values import fold

SlotKind = Literal["value", "number", "year", "month", "quarter", "date"]

MAX_VALUE_TOKENS = 4  # the longest run of tokens looked up as one stored value ("Frankfurt am Main")
SCHEMA_WORD_MIN = 0.95  # a word names a table or column only this surely (plurals and synonyms are 1.0/0.98);
# a phrase ("resource pool", "usage cost") only as one of the dictionary's terms, word for word
TIE = 0.005  # schema matches this close to the best are one concept ("status" of several tables)


class Lexicon(Protocol):
    """What the reader needs of a database: its schema's words and its stored values."""

    def concept(self, text: str, *, phrase: bool) -> str | None:
        """'t:client' / 'c:location.city' (or several joined by '|') for a folded word or phrase."""
        ...

    def values(self, text: str) -> tuple[ValueMatch, ...]:
        """Stored values like `text` (as typed), best first."""
        ...


@dataclass(frozen=True)
class Token:
    text: str  # as typed
    folded: str  # lower-case, accent-free
    start: int  # character offsets in the question
    end: int


@dataclass(frozen=True)
class Span:
    """A run of tokens that may stand for a parameter."""

    first: int  # token indexes, inclusive
    last: int
    kind: SlotKind
    text: str  # the question's own characters
    start: int  # character offsets
    end: int
    values: tuple[ValueMatch, ...] = ()  # kind "value": the stored values it matches, best first
    when: tuple[int, ...] = ()  # (n,) number, (Y,) year, (Y, M) month, (Y, Q) quarter, (Y, M, D) date

    def overlaps(self, other: Span) -> bool:
        return not (self.last < other.first or other.last < self.first)

    def best_in(self, table: str, column: str) -> ValueMatch | None:
        """The best stored value of `table.column` this span matches, if any."""
        t, c = table.lower(), column.lower()
        return next((m for m in self.values if m.table.lower() == t and m.column.lower() == c), None)


@dataclass(frozen=True)
class Word:
    first: int
    last: int
    key: str  # "@count", "t:client", "c:location.city", or a stemmed word


@dataclass(frozen=True)
class Reading:
    question: str
    tokens: tuple[Token, ...]
    words: tuple[Word, ...]  # filler left out
    spans: tuple[Span, ...]
    relative_time: bool  # "this year", "last month", "recent": meaning moves with the calendar


@dataclass(frozen=True)
class Shape:
    """What two questions must share to mean the same: concepts, slot roles, head."""

    words: frozenset[str]
    slots: tuple[str, ...]  # one role label per chosen span, in the order they were given
    head: str

    def describe(self) -> str:
        return " ".join(sorted(self.words)) + (" | " + " ".join(self.slots) if self.slots else "")


# ---------------------------------------------------------------------------------------------
# vocabulary (general English question words; the schema's words come from the catalog)


def _split(text: str) -> list[str]:
    return text.split()


FILLER = frozenset(
    _split(
        """a an the please pls me us i we you they it our my your their its these those that which
    what who whom whose is are was were be been being am do does did done make made show list give
    find get display return tell see view there here in at from of for on located based within
    inside and also all any some only just ever whole currently kindly let know want need like
    would could can should will shall may might many much"""
    )
)
# Multi-word phrases, longest first within a start word; None: filler.
PHRASES: dict[tuple[str, ...], str | None] = {
    ("how", "many"): "@count",
    ("number", "of"): "@count",
    ("total", "number", "of"): "@count",
    ("total", "number"): "@count",
    ("count", "of"): "@count",
    ("total", "count", "of"): "@count",
    ("how", "much"): "@sum",
    ("more", "than"): "@gt",
    ("greater", "than"): "@gt",
    ("higher", "than"): "@gt",
    ("larger", "than"): "@gt",
    ("bigger", "than"): "@gt",
    ("less", "than"): "@lt",
    ("fewer", "than"): "@lt",
    ("lower", "than"): "@lt",
    ("smaller", "than"): "@lt",
    ("at", "least"): "@ge",
    ("no", "less", "than"): "@ge",
    ("at", "most"): "@le",
    ("up", "to"): "@le",
    ("no", "more", "than"): "@le",
    ("other", "than"): "@not",
    ("apart", "from"): "@not",
    ("prior", "to"): "@before",
    ("earlier", "than"): "@before",
    ("later", "than"): "@after",
    ("for", "each"): "@by",
    ("for", "every"): "@by",
    ("broken", "down", "by"): "@by",
    ("break", "down", "by"): "@by",
    ("grouped", "by"): "@by",
    ("group", "by"): "@by",
    ("split", "by"): "@by",
    ("do", "we", "have"): None,
    ("do", "you", "have"): None,
    ("have", "we", "got"): None,
    ("are", "there"): None,
    ("is", "there"): None,
    ("were", "there"): None,
    ("was", "there"): None,
    ("tell", "me"): None,
    ("show", "me"): None,
    ("give", "me"): None,
    ("can", "you"): None,
    ("could", "you"): None,
}
OPS: dict[str, str] = {
    **dict.fromkeys(["count", "number"], "@count"),
    **dict.fromkeys(["total", "sum"], "@sum"),
    **dict.fromkeys(["average", "avg", "mean"], "@avg"),
    **dict.fromkeys(["max", "maximum", "highest", "largest", "biggest", "greatest", "top", "most"], "@max"),
    **dict.fromkeys(["min", "minimum", "lowest", "smallest", "least", "fewest", "bottom"], "@min"),
    **dict.fromkeys(
        ["not", "no", "without", "except", "excluding", "exclude", "never", "none", "outside", "non"],
        "@not",
    ),
    **dict.fromkeys(["per", "each", "every", "by"], "@by"),
    **dict.fromkeys(["over", "above", "exceeding", "exceed", "exceeds"], "@gt"),
    **dict.fromkeys(["under", "below"], "@lt"),
    **dict.fromkeys(["before", "until", "till"], "@before"),
    "after": "@after",
    "since": "@since",
    "between": "@between",
    "or": "@or",
    **dict.fromkeys(["with", "have", "has", "had", "having"], "@has"),
    **dict.fromkeys(["distinct", "unique", "different"], "@distinct"),
}
# Operations that apply to what follows them: bound to it, so "not in Lyon" ≠ "in Lyon".
BINDERS = frozenset(["@not", "@by", "@gt", "@lt", "@ge", "@le", "@before", "@after", "@since", "@between"])
RELATIVE = frozenset(
    _split(
        """this last next past previous current today yesterday tomorrow recent recently ago ytd mtd qtd
    now latest"""
    )
)
MONTHS: dict[str, int] = {}
for _number in range(1, 13):
    MONTHS[calendar.month_name[_number].lower()] = _number
    MONTHS[calendar.month_abbr[_number].lower()] = _number
MONTHS["sept"] = 9

_TOKEN = re.compile(
    r"(?P<date>\d{4}-\d{2}-\d{2})(?![\d-])"
    r"|(?P<ym>\d{4}-\d{2})(?![\d-])"
    r"|(?P<word>[^\W_]+(?:['’][^\W_]+)*)"
    r"|(?P<amp>[&#%])"
)
# Short words inside names ("Frankfurt am Main", "Bank of America", "Network & CDN").
CONNECTORS = frozenset(
    ["of", "and", "the", "&", "am", "de", "la", "le", "du", "des", "von", "van", "der", "y"]
)
_YEAR = re.compile(r"^(19|20)\d\d$")
_QUARTER = re.compile(r"^q([1-4])$")
_CONTRACTION_BASES = {"ca": "can", "wo": "will", "sha": "shall"}


# ---------------------------------------------------------------------------------------------
# reading


def tokenize(question: str) -> tuple[Token, ...]:
    """Tokens with offsets; "didn't" → did + not, "Helix Finance's" → helix, finance."""
    tokens: list[Token] = []
    for m in _TOKEN.finditer(question):
        text, start, end = m.group(0), m.start(), m.end()
        if m.lastgroup != "word":
            tokens.append(Token(text, text, start, end))
            continue
        folded = fold(text.replace("’", "'").split("'")[0]) if "'" in text or "’" in text else fold(text)
        low = text.lower().replace("’", "'")
        if low.endswith("n't"):
            base = _CONTRACTION_BASES.get(fold(low[:-3]), fold(low[:-3]))
            tokens.append(Token(text[:-3], base, start, end - 3))
            tokens.append(Token(text[-3:], "not", end - 3, end))
            continue
        if "'" in low:  # possessive 's, and 're / 've / 'll / 'd / 'm: the word before it counts
            keep = low.split("'")[0]
            tokens.append(Token(text[: len(keep)], folded, start, start + len(keep)))
            continue
        tokens.append(Token(text, folded, start, end))
    return tuple(t for t in tokens if t.folded)


def read(question: str, lexicon: Lexicon) -> Reading:
    tokens = tokenize(question)
    words = _words(tokens, lexicon)
    spans = [*_time_spans(question, tokens), *_value_spans(question, tokens, lexicon)]
    relative = any(t.folded in RELATIVE for t in tokens)
    return Reading(question, tokens, tuple(words), tuple(spans), relative)


def _is_function_word(folded: str) -> bool:
    return folded in FILLER or folded in OPS


def _starts_phrase(tokens: Sequence[Token], i: int) -> tuple[int, str | None] | None:
    for n in (3, 2):
        key = tuple(t.folded for t in tokens[i : i + n])
        if len(key) == n and key in PHRASES:
            return n, PHRASES[key]
    return None


def _words(tokens: Sequence[Token], lexicon: Lexicon) -> list[Word]:
    words: list[Word] = []
    i = 0
    while i < len(tokens):
        phrase = _starts_phrase(tokens, i)
        if phrase is not None:
            n, key = phrase
            if key is not None:
                words.append(Word(i, i + n - 1, key))
            i += n
            continue
        found = False
        for n in (3, 2):  # schema phrases: "resource pool", "usage cost", "customer segment"
            run = tokens[i : i + n]
            if len(run) < n or any(_is_function_word(t.folded) or not t.folded.isalpha() for t in run):
                continue
            key = lexicon.concept(" ".join(t.folded for t in run), phrase=True)
            if key is not None:
                words.append(Word(i, i + n - 1, key))
                i += n
                found = True
                break
        if found:
            continue
        folded = tokens[i].folded
        if folded in FILLER:
            pass
        elif folded in OPS:
            words.append(Word(i, i, OPS[folded]))
        elif folded in MONTHS:
            words.append(Word(i, i, f"month{MONTHS[folded]}"))
        else:
            concept = lexicon.concept(folded, phrase=False) if folded.isalpha() else None
            words.append(Word(i, i, concept or _stem(folded)))
        i += 1
    return words


def _stem(word: str) -> str:
    """Plural and -ed/-ing endings off, so "signed up" and "sign up" read alike."""
    word = stem(word)
    if len(word) > 5 and word.endswith("ing"):
        return word[:-3]
    if len(word) > 4 and word.endswith("ied"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("ed"):
        return word[:-2]
    return word


# ---------------------------------------------------------------------------------------------
# spans


def _span(
    question: str,
    tokens: Sequence[Token],
    first: int,
    last: int,
    kind: SlotKind,
    *,
    values: tuple[ValueMatch, ...] = (),
    when: tuple[int, ...] = (),
) -> Span:
    start, end = tokens[first].start, tokens[last].end
    return Span(first, last, kind, question[start:end], start, end, values, when)


def _time_spans(question: str, tokens: Sequence[Token]) -> list[Span]:
    spans: list[Span] = []
    for i, t in enumerate(tokens):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", t.text):
            y, m, d = (int(p) for p in t.text.split("-"))
            if 1 <= m <= 12 and 1 <= d <= calendar.monthrange(y, m)[1]:
                spans.append(_span(question, tokens, i, i, "date", when=(y, m, d)))
            continue
        if re.fullmatch(r"\d{4}-\d{2}", t.text):
            y, m = (int(p) for p in t.text.split("-"))
            if 1 <= m <= 12:
                spans.append(_span(question, tokens, i, i, "month", when=(y, m)))
            continue
        year = _year(t)
        if year is not None:
            spans.append(_span(question, tokens, i, i, "year", when=(year,)))
            continue
        if t.folded in MONTHS and i + 1 < len(tokens) and (y2 := _year(tokens[i + 1])) is not None:
            spans.append(_span(question, tokens, i, i + 1, "month", when=(y2, MONTHS[t.folded])))
            continue
        q = _QUARTER.match(t.folded)
        if q is not None:
            if i + 1 < len(tokens) and (y2 := _year(tokens[i + 1])) is not None:
                spans.append(_span(question, tokens, i, i + 1, "quarter", when=(y2, int(q.group(1)))))
            elif i > 0 and (y0 := _year(tokens[i - 1])) is not None:
                spans.append(_span(question, tokens, i - 1, i, "quarter", when=(y0, int(q.group(1)))))
            continue
        if t.folded.isdigit() and len(t.folded) <= 9:
            spans.append(_span(question, tokens, i, i, "number", when=(int(t.folded),)))
    return spans


def _year(t: Token) -> int | None:
    return int(t.folded) if _YEAR.match(t.folded) else None


def _value_spans(question: str, tokens: Sequence[Token], lexicon: Lexicon) -> list[Span]:
    """Runs of up to MAX_VALUE_TOKENS tokens that match stored values (edges are never filler,
    an operation, a date or a bare number)."""

    def edge(t: Token) -> bool:
        return t.text.isalnum() and not _is_function_word(t.folded) and not t.folded.isdigit()

    spans: list[Span] = []
    for i in range(len(tokens)):
        if not edge(tokens[i]):
            continue
        for j in range(i, min(len(tokens), i + MAX_VALUE_TOKENS)):
            if j > i and tokens[j].start - tokens[j - 1].end > 3:
                break  # not one name any more
            if _is_function_word(tokens[j].folded) and tokens[j].folded not in CONNECTORS:
                break  # "clients are in Lyon" is no name
            if not edge(tokens[j]) and not (j > i and tokens[j].folded.isdigit()):
                continue
            text = question[tokens[i].start : tokens[j].end]
            found = lexicon.values(text)
            if found:
                spans.append(_span(question, tokens, i, j, "value", values=found))
    return spans


# ---------------------------------------------------------------------------------------------
# shape


def slot_label(span: Span, table: str | None = None, column: str | None = None) -> str:
    if span.kind == "value":
        return f"⟨{table}.{column}⟩".lower()
    return f"⟨{span.kind}⟩"


@dataclass(frozen=True)
class _Item:
    pos: int
    key: str
    slot: int | None = None  # index into the chosen spans


def shape(reading: Reading, chosen: Sequence[tuple[Span, str]]) -> Shape | None:
    """The shape of `reading` with `chosen` spans as parameter slots (each with its base label);
    None when a chosen span cuts through a word (the choice does not fit the question)."""
    ordered = sorted(range(len(chosen)), key=lambda k: chosen[k][0].first)
    for a, b in itertools.pairwise(ordered):
        if chosen[a][0].overlaps(chosen[b][0]):
            return None
    items: list[_Item] = []
    for w in reading.words:
        inside = [k for k, (s, _) in enumerate(chosen) if not (w.last < s.first or s.last < w.first)]
        if not inside:
            items.append(_Item(w.first, w.key))
            continue
        s = chosen[inside[0]][0]
        if len(inside) > 1 or w.first < s.first or w.last > s.last:
            return None
    for k, (s, label) in enumerate(chosen):
        items.append(_Item(s.first, label, k))
    items.sort(key=lambda it: (it.pos, it.slot is None))
    items = _absorb_qualifiers(items)
    bound = _bind(items)
    labels: list[str] = [""] * len(chosen)
    counts: dict[str, int] = {}
    for it in bound:
        if it.slot is not None:
            counts[it.key] = counts.get(it.key, 0) + 1
    previous = "^"
    for it in bound:
        if it.slot is not None:
            labels[it.slot] = f"{previous}>{it.key}" if counts[it.key] > 1 else it.key
        previous = it.key
    words = frozenset(it.key for it in bound if it.slot is None)
    head = next((it.key for it in bound if it.slot is None and it.key.startswith(("t:", "c:"))), "")
    return Shape(words=words, slots=tuple(labels), head=head)


def _absorb_qualifiers(items: list[_Item]) -> list[_Item]:
    """A column named next to one of its own values only says which column the value is of:
    "in the enterprise segment" reads as the value alone."""
    out: list[_Item] = []
    for n, it in enumerate(items):
        if it.slot is None and it.key.startswith("c:"):
            own = f"⟨{it.key[2:]}⟩".lower()
            near = [items[m] for m in (n - 1, n + 1) if 0 <= m < len(items)]
            if any(o.slot is not None and o.key == own for o in near):
                continue
        out.append(it)
    return out


def _bind(items: list[_Item]) -> list[_Item]:
    out: list[_Item] = []
    pending: list[str] = []
    for it in items:
        if it.slot is None and it.key in BINDERS:
            pending.append(it.key)
            continue
        if pending:
            ops = [op for op in pending if not (op == "@by" and it.slot is not None)]  # "by card" filters
            key = ":".join([*ops, it.key]) if ops else it.key
            out.append(_Item(it.pos, key, it.slot))
            pending = []
        else:
            out.append(it)
    out.extend(_Item(len(items), op) for op in pending)
    return out
