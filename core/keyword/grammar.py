"""The grammar: a question's words → lexemes → the question tree (core/keyword/tree.py).

Why a grammar: keyword mode answers with no LLM, so its reading must be right or it must stay
silent. A reading built by walking the words and patching each phrasing as it turned up could not
be reviewed, and each new branch could break another. Here the words come from the lexicon
(lexicon.yaml) and the schema's own names; each lexeme has a category; and a small PEG over those
categories — each rule a function whose docstring is its production — builds the tree or fails.
A question the rules cannot place word for word is not read at all (the caller declines).

    question  := front? LEAD* head modifier* END
    head      := count | ratio | measure | top | best | listing
    count     := COUNT DISTINCT? DET? NP                         'how many active hosts'
    measure   := AGG DET? NP (OF DET? NP)?                       'average age of students'
               | AGG OF DET? NP | SUPER NP(column)               'the total of all invoices'
               | NP OF DET SUPER NP                              'the age of the oldest student'
    ratio     := SHARE(ratio) OF side (TO | PER | OVER) side         'the ratio of capacity to range'
    top       := TOP NUMBER? DET? NP (BY key)?                   'top 5 clients by total cost'
               | WH? NUMBER NP link? DET SUPER key?              'which 3 majors have the most students'
               | DET? NUMBER SUPER NP (BY key)?                  'the 3 shortest tracks'
               | DET? NUMBER NP WITH DET SUPER key               'the 3 hosts with the lowest memory'
    best      := WH NP link? DET SUPER key?                      'which datacenter has the most hosts'
               | (WH BE)? DET? SUPER NP                          'what is the longest track'
    listing   := LIST? DET? (NP OF DET?)? NP                     'show me the names of all students'
               | WH NP AUX NP VERB PREP?                         'which courses does Mingoz teach'
    key       := AGG? NP | COUNT NP | SUPER? NP
    modifier  := group | window | compare | absent | is | prep | verb | with | order | skip

The schema is consulted only to read words that are a name ('Let There Be Rock', 'last name',
'rank') and business definitions by their names; which table, column or value a phrase means is
the binding pass's decision (core/keyword/bind.py).
"""

from __future__ import annotations

import calendar
import datetime as dt
import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal, Protocol, cast

from core.keyword.lexicon import WORDS
from core.keyword.tree import Condition, Func, Group, Measure, Op, Order, Phrase, Question, Value, Window
from core.plurals import singular

TokenKind = Literal["word", "number", "date", "quoted", "op", "punct"]


@dataclass(frozen=True)
class Token:
    text: str  # as typed
    low: str  # lower case, possessive "'s" dropped, a typo of a common word mended
    start: int
    end: int
    kind: TokenKind
    hyphened: bool = False  # a part after the first of a hyphenated word ('in' of 'check-in')


# ---------------------------------------------------------------------------------------------
# tokens

_TOKEN = re.compile(
    r"""
    (?P<quoted>"[^"]{1,200}"|“[^”]{1,200}”|`[^`]{1,200}`|(?<![\w])'[^']{1,200}'(?![\w]))
  | (?P<date>\d{4}-\d{1,2}-\d{1,2}(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?)
  | (?P<code>(?=[\w\-./]*\d)(?=[\w\-./]*[A-Za-z])[A-Za-z0-9][\w\-./]*[A-Za-z0-9])
  | (?P<number>[$€£]?\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|[$€£]?\d+(?:\.\d+)?%?)
  | (?P<op>{ops})
  | (?P<word>[^\W\d_](?:[\w’'\-&]*[\w])?)
  | (?P<punct>[^\s\w])
    """.replace("{ops}", "|".join(re.escape(s) for s in sorted(WORDS.symbols, key=len, reverse=True))),
    re.VERBOSE | re.UNICODE,
)
# the token kind of each group of _TOKEN: a code (a product code, 'A-12') reads as a word
_KIND_OF_GROUP: dict[str, TokenKind] = {
    "quoted": "quoted",
    "date": "date",
    "code": "word",
    "number": "number",
    "op": "op",
    "word": "word",
    "punct": "punct",
}
# "who've", "they're", "don't": two words each ('do not' is read as the negation it says)
_CONTRACTION = re.compile(r"^([^\W\d_]+?)(n['’]t|['’]ve|['’]re|['’]ll|['’]d)$", re.IGNORECASE)
_EXPANDED = {"n't": "not", "'ve": "have", "'re": "are", "'ll": "will", "'d": "would", "'s": "is"}
_NEGATED_HEADS = {"ca": "can", "wo": "will", "sha": "shall"}  # can't, won't, shan't
# "who's the author …", "what's the total …": 'is' after these; after a noun 's is possessive
_IS_HEADS = re.compile(r"^(who|what|where|when|how|which|that|there|here|it)(['’]s)$", re.IGNORECASE)
# the same typed without the apostrophe, as people do in chat ('whats the total', 'dont have')
_BARE = re.compile(
    r"^(?:(what|who|where|that|how)(s)|(do|does|did|is|are|was|were|have|has|had|ca|wo|could|would|should)(nt))$",
    re.IGNORECASE,
)


def _contraction(text: str) -> tuple[str, str] | None:
    """The head as typed and the word the tail stands for: "don't" and 'dont' → ('do', 'not'),
    "what's" and 'whats' → ('what', 'is')."""
    short = _CONTRACTION.match(text) or _IS_HEADS.match(text)
    if short is not None:
        return short.group(1), _EXPANDED[short.group(2).lower().replace("’", "'")]
    bare = _BARE.match(text)
    if bare is None:
        return None
    return (bare.group(1), "is") if bare.group(2) else (bare.group(3), "not")


def tokenize(question: str) -> list[Token]:
    """Words, numbers, ISO dates, quoted text, comparison signs and punctuation, with offsets."""
    out: list[Token] = []
    for m in _TOKEN.finditer(question):
        kind = _KIND_OF_GROUP[m.lastgroup or "punct"]
        text = m.group()
        split = _contraction(text) if kind == "word" else None
        if split is not None:
            head, tail = split
            low = _NEGATED_HEADS.get(head.lower(), head.lower()) if tail == "not" else head.lower()
            out.append(Token(head, low, m.start(), m.start() + len(head), "word"))
            out.append(Token(text[len(head) :], tail, m.start() + len(head), m.end(), "word"))
            continue
        if kind == "word" and "-" in text and not any(ch.isdigit() for ch in text):
            # hyphenated words are read word by word ('highest-rated', 'round-trip')
            pos = m.start()
            for k, part in enumerate(text.split("-")):
                if part:
                    out.append(Token(part, _low(part), pos, pos + len(part), "word", hyphened=k > 0))
                pos += len(part) + 1
            continue
        out.append(Token(text, _low(text) if kind == "word" else text.lower(), m.start(), m.end(), kind))
    return out


def _low(word: str) -> str:
    """The word as the reader compares it: lower case, a possessive 's dropped, a typo of a
    common word read as the word ('teh', 'hwo': lexicon.yaml `spellings`)."""
    low = word.lower().replace("’", "'")
    if low.endswith("'s"):
        low = low[:-2]
    low = low.rstrip("'")
    return WORDS.spellings.get(low, low)


def parse_number(text: str) -> float | None:
    t = text.strip().lstrip("$€£").rstrip("%").replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


# ---------------------------------------------------------------------------------------------
# values: numbers, years, months, quarters, dates, periods, quoted text

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS["sept"] = 9
QUARTERS = {"q1": 1, "q2": 2, "q3": 3, "q4": 4}
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}
_THOUSANDS = re.compile(r"(\d+(?:\.\d+)?)[kK]")
_NOT_YEAR_AFTER = WORDS.sets["not_year_after"]  # 'top 2000 clients'
_YEAR_AFTER = WORDS.sets["early_year_after"]  # 'hired before 1850': a year however early
# a number said as a word is a number only where a number is expected ('top three', 'more than two')
_NUMBER_BEFORE = WORDS.sets["number_before"]


def values(tokens: Sequence[Token]) -> dict[int, Value]:
    """The values of the question, by the token they start at."""
    lows = [t.low for t in tokens]
    found: dict[int, Value] = {}
    i = 0
    while i < len(tokens):
        value = _value_at(tokens, lows, i, found)
        if value is None:
            i += 1
            continue
        if value.start < i:  # '2024 Q4': the year before is the quarter's
            found.pop(value.start, None)
        found[value.start] = value
        i = value.end
    return found


def _text(tokens: Sequence[Token], start: int, end: int) -> str:
    """The words as typed, spaces as in the question ('AC/DC', 'prod-london-1')."""
    out = ""
    for k in range(start, end):
        gap = k > start and tokens[k].start > tokens[k - 1].end
        out += (" " if gap else "") + tokens[k].text
    return out


def _value_at(tokens: Sequence[Token], lows: list[str], i: int, found: dict[int, Value]) -> Value | None:
    t = tokens[i]
    nxt = lows[i + 1] if i + 1 < len(lows) else ""
    prev = lows[i - 1] if i > 0 else ""
    if t.kind == "quoted":
        return Value("quoted", t.text[1:-1].strip(), i, i + 1, t.text)
    if t.kind == "date":
        try:
            return Value("date", dt.date.fromisoformat(t.text[:10]), i, i + 1, t.text)
        except ValueError:
            return None
    if t.kind == "number":
        number = parse_number(t.text)
        if number is None:
            return None
        unit = nxt in WORDS.sets["measure_units"]  # '2048 GB': a number with its unit is no year
        if (
            t.text.isdigit()
            and len(t.text) == 4
            and (1900 <= number <= 2100 or (1000 <= number < 1900 and prev in _YEAR_AFTER))
            and prev not in _NOT_YEAR_AFTER
            and not unit
        ):
            return Value("year", int(number), i, i + 1, t.text)
        if prev == "-" and tokens[i - 1].end == t.start and (i < 2 or tokens[i - 2].kind != "word"):
            return _number(-number, i - 1, i + 1, "-" + t.text)  # 'lat < -30'
        if nxt == "k" and t.text[0] in "$€£" and tokens[i + 1].start == t.end:
            number *= 1000
            return _number(number, i, i + 2, _text(tokens, i, i + 2))
        return _number(number, i, i + 1, t.text)
    if t.kind != "word":
        return None
    thousands = _THOUSANDS.fullmatch(t.text)
    if thousands is not None:
        return _number(float(thousands.group(1)) * 1000, i, i + 1, t.text)
    if lows[i] in MONTHS and (lows[i] != "may" or _year_at(tokens, i + 1) or prev in ("in", "of", "during")):
        year = _year_at(tokens, i + 1)
        end = i + 2 if year else i + 1
        return Value("month", (year, MONTHS[lows[i]]), i, end, _text(tokens, i, end))
    if lows[i] in QUARTERS or (lows[i] in ORDINALS and nxt == "quarter"):
        return _quarter(tokens, lows, i, found)
    spelled = lows[i] in WORDS.numbers and (lows[i] != "one" or prev in ("top", "than", "least", "most"))
    if spelled and (prev in _NUMBER_BEFORE or i == 0 or tokens[i - 1].kind == "op"):
        return Value("number", WORDS.numbers[lows[i]], i, i + 1, t.text)
    return _period(tokens, lows, i)


def _number(number: float, start: int, end: int, text: str) -> Value:
    return Value("number", int(number) if number.is_integer() else number, start, end, text)


def _year_at(tokens: Sequence[Token], i: int) -> int | None:
    if i < len(tokens) and tokens[i].text.isdigit() and len(tokens[i].text) == 4:
        return int(tokens[i].text)
    return None


def _quarter(tokens: Sequence[Token], lows: list[str], i: int, found: dict[int, Value]) -> Value:
    """'Q1 2023', 'Q3 of 2024', 'the first quarter of 2023', '2023 Q4'."""
    q = QUARTERS.get(lows[i]) or ORDINALS[lows[i]]
    start, end = i, i + 1 if lows[i] in QUARTERS else i + 2
    after = end + 1 if end < len(lows) and lows[end] in ("of", "in") else end
    year = _year_at(tokens, after)
    if year is not None:
        end = after + 1
    else:
        before = next((v for v in found.values() if v.end == i and v.kind == "year"), None)
        if before is not None:
            year, start = before.value, before.start
    return Value("quarter", (year, q), start, end, _text(tokens, start, end))


def _period(tokens: Sequence[Token], lows: list[str], i: int) -> Value | None:
    """'last 30 days', 'past 2 years', 'this month', 'last year', 'today', 'year to date'."""
    for n in (3, 2, 1):
        kind, arg = WORDS.cues.get(tuple(lows[i : i + n]), ("", ""))
        if kind == "relative":
            break
    else:
        return None
    if arg == "today":
        return Value("period", ("day", 0 if lows[i] == "today" else -1, 1), i, i + n, _text(tokens, i, i + n))
    if arg == "ytd":
        return Value("period", ("year", 0, 0), i, i + n, _text(tokens, i, i + n))
    j, count = i + n, 1
    if j < len(tokens) and tokens[j].kind == "number" and tokens[j].text.isdigit():
        j, count = j + 1, int(tokens[j].text)
    elif j < len(lows) and lows[j] in WORDS.numbers:
        j, count = j + 1, WORDS.numbers[lows[j]]
    if j >= len(lows) or lows[j] not in WORDS.time_units:
        return None
    unit = WORDS.time_units[lows[j]]
    if arg == "this":
        period = (unit, 0, 1)
    elif j == i + n:
        period = (unit, -1, 1)  # 'last year': the calendar unit before this one
    else:
        period = (unit, -count, 0)  # 'last 30 days': up to today
    return Value("period", period, i, j + 1, _text(tokens, i, j + 1))


# ---------------------------------------------------------------------------------------------
# lexemes: every token placed in a category


class Names(Protocol):
    """What the lexer asks of the schema (and of the business definitions in force)."""

    def spells(self, words: str) -> bool:
        """The words are, word for word, a table's or column's name or synonym, or a stored value."""
        ...

    def defined(self, words: str) -> str:
        """The ref of the metric, named filter or entity called so ('' if none)."""
        ...

    def acronym(self, word: str) -> str:
        """The words of the one column name a word typed in capitals stands for ('GPA' →
        'total gpa', 'DOB' → 'date of birth'); '' if none or several."""
        ...


class NoNames:
    """A schema with no names: the grammar on the lexicon alone (tests, and the verified reader's
    first pass)."""

    def spells(self, words: str) -> bool:
        return False

    def defined(self, words: str) -> str:
        return ""

    def acronym(self, word: str) -> str:
        return ""


@dataclass(frozen=True)
class Lex:
    """One lexeme: a cue kind of the lexicon ('count', 'cmp', 'det', …) or 'value', 'np' (content
    words), 'def' (a business definition), 'unit' (a time unit), 'munit' (a unit of a number),
    'verb' (a relation verb), 'stop' or 'punct'."""

    cat: str
    arg: str
    start: int
    end: int
    text: str
    value: Value | None = None

    @property
    def phrase(self) -> Phrase:
        return Phrase(self.start, self.end, self.text)


MAX_PHRASE = max(len(k) for k in WORDS.cues)
MAX_NAME = 5  # words a name spelled with function words may have ('Let There Be Rock')
_NAME_KINDS = frozenset(["order", "agg", "count", "super", "relative", "top", "by", "text", "filler", "unit"])


def lexemes(tokens: Sequence[Token], names: Names) -> Iterator[list[Lex]]:
    """The readings of the tokens as lexemes, the lexicon's first: then, one at a time and in
    pairs, cue words that the schema spells as a name ('rank', 'last name') read as that name."""
    found = values(tokens)
    first = _lex(tokens, found, names, frozenset())
    yield first
    flexible = [lx for lx in first if _nameable(lx) and _spelled(tokens, lx, names)]
    for n in (1, 2):
        for chosen in itertools.combinations(flexible, n):
            yield _lex(tokens, found, names, frozenset(lx.start for lx in chosen))
    verbs = _participles(tokens, first, found, names)
    if verbs != first:
        yield verbs


def _nameable(lx: Lex) -> bool:
    """A cue the schema's own name may outrank: a cue kind that is often a column's word ('rank',
    'last name'), or an unsupported word a column is named by ('trip duration': a duration column
    is read, not computed)."""
    return lx.cat in _NAME_KINDS or (lx.cat == "unsupported" and lx.text.lower() in WORDS.sets["column_cues"])


def _participles(tokens: Sequence[Token], ls: list[Lex], found: dict[int, Value], names: Names) -> list[Lex]:
    """The first reading with a past participle that ends content words before a period or a
    time grouping read as a verb: 'campuses founded before 1900' says what happened to the
    campuses, and so their date. Only a later reading: 'payments failed in 2025' first reads
    'failed' as the stored status it may be."""
    lows = [t.low for t in tokens]
    if any(lx.cat == "share" for lx in ls):
        return ls  # 'what % of payments failed in 2025': the participle is what the share counts
    out: list[Lex] = []
    for lx in ls:
        p = lx.end - 1
        last = _last_next(lows, lx.end)  # 'which datacenter opened most recently': opened_on ranks
        if lx.cat != "np" or lx.arg or not _past_participle(lows, p) or (names.spells(lows[p]) and not last):
            out.append(lx)
            continue
        if not _period_next(lows, lx.end, found) and not last:
            out.append(lx)
            continue
        if p > lx.start:
            out.append(Lex("np", "", lx.start, p, _text(tokens, lx.start, p)))
        out.append(Lex("verb", lows[p], p, lx.end, tokens[p].text))
    return out


def _spelled(tokens: Sequence[Token], lx: Lex, names: Names) -> bool:
    """The cue's words, alone or with the content words next to them, spell a name; or the
    content words before a cue of several words spell one with its first words ('phone number
    of Ana': 'phone number', not 'number of')."""
    lows = [t.low for t in tokens]
    for s in range(max(0, lx.start - 2), lx.start + 1):
        for e in range(lx.end, min(len(tokens), lx.end + 3) + 1):
            if names.spells(" ".join(lows[s:e])):
                return True
    return any(
        names.spells(" ".join(lows[s:e]))
        for s in range(max(0, lx.start - 2), lx.start)
        for e in range(lx.start + 1, lx.end)
    )


def _lex(
    tokens: Sequence[Token], found: dict[int, Value], names: Names, as_names: frozenset[int]
) -> list[Lex]:
    lows = [t.low for t in tokens]
    out: list[Lex] = []
    i = 0
    while i < len(tokens):
        got = _lex_at(tokens, lows, i, found, names, as_names)
        if _particle_of_compound(tokens, out, got):
            got = Lex("np", "", got.start, got.end, got.text)  # 'check-in', 'drop-off': one noun
        if _names_with(tokens, out, got, names):
            got = Lex("np", "", got.start, got.end, got.text)  # 'helpfulness scores': a column, not a verb
        if got.cat == "np" and out and out[-1].cat == "np" and tokens[i].kind == "word" and not out[-1].value:
            prev = out.pop()  # adjacent content words are one phrase
            got = Lex("np", "", prev.start, got.end, " ".join(t.text for t in tokens[prev.start : got.end]))
        out.append(got)
        i = got.end
    return out


def _particle_of_compound(tokens: Sequence[Token], out: Sequence[Lex], got: Lex) -> bool:
    """A preposition joined by a hyphen to the content word before it ('check-in', 'drop-off',
    'sign-up') is part of that noun, not a preposition of the question."""
    return (
        got.cat in ("prep", "date_prep")
        and got.end == got.start + 1
        and tokens[got.start].hyphened
        and bool(out)
        and out[-1].cat == "np"
        and out[-1].end == got.start
    )


def _names_with(tokens: Sequence[Token], out: Sequence[Lex], got: Lex, names: Names) -> bool:
    """A relation verb right after content words that spells a schema name with them is part of
    that name ('helpfulness scores' → helpfulness_score, 'round trip costs'): the verb reading
    ('who scores …') would leave the name in two pieces."""
    if got.cat != "verb" or not out or out[-1].cat != "np" or out[-1].value is not None:
        return False
    words = " ".join(t.low for t in tokens[out[-1].start : got.end])
    return names.spells(words)


def _lex_at(
    tokens: Sequence[Token],
    lows: list[str],
    i: int,
    found: dict[int, Value],
    names: Names,
    as_names: frozenset[int],
) -> Lex:
    t = tokens[i]
    if i in found:
        v = found[i]
        if v.kind == "quoted":  # '"Machine Learning"': a name, as said; the binder looks it up
            return Lex("np", "quoted", v.start, v.end, v.text, v)
        return Lex("value", v.kind, v.start, v.end, v.text, v)
    for n in range(min(MAX_NAME, len(tokens) - i), 0, -1):
        words = " ".join(lows[i : i + n])
        ref = names.defined(words) if all(x.kind == "word" for x in tokens[i : i + n]) else ""
        if ref:
            return Lex("def", ref, i, i + n, _text(tokens, i, i + n))
    name = _name_at(tokens, lows, i, names, as_names)
    if name is not None:
        return name
    if t.kind == "op":
        return Lex("cmp", WORDS.symbols[t.text], i, i + 1, t.text)
    for n in range(min(MAX_PHRASE, len(tokens) - i), 0, -1):
        cue = WORDS.cues.get(tuple(lows[i : i + n]))
        if cue is not None and all(x.kind in ("word", "punct") for x in tokens[i : i + n]):
            return Lex(cue[0], cue[1], i, i + n, _text(tokens, i, i + n))
    if t.kind == "punct":
        return Lex("punct", t.text, i, i + 1, t.text)
    for n in (3, 1):
        bucket = WORDS.buckets.get(" ".join(lows[i : i + n]))
        if bucket is not None:  # 'monthly', 'month-by-month'
            return Lex("bucket", bucket, i, i + n, _text(tokens, i, i + n))
    if lows[i] in WORDS.time_units:
        return Lex("unit", WORDS.time_units[lows[i]], i, i + 1, t.text)
    units = WORDS.sets["measure_units"]
    if lows[i] in units and i > 0 and (i - 1 in found or lows[i - 1] == "in" or lows[i - 1] in units):
        return Lex("munit", lows[i], i, i + 1, t.text)  # '1024 GB', '500 euros', 'in square km'
    if lows[i] in WORDS.sets["relation_verbs"] or (
        lows[i] in WORDS.sets["priced"] and _compared_next(lows, i + 1, found) and not _after_det(lows, i)
    ):
        return Lex("verb", lows[i], i, i + 1, t.text)
    if lows[i] in WORDS.sets["stop"] and not names.spells(lows[i]):
        return Lex("stop", lows[i], i, i + 1, t.text)
    return Lex("np", "", i, i + 1, t.text)


def _after_det(lows: Sequence[str], i: int) -> bool:
    """A determiner comes right before i: the word after it is a noun ('have a cost under 5'), not
    the verb it may also be ('products that cost less than 600')."""
    return i > 0 and WORDS.cues.get((lows[i - 1],), ("", ""))[0] == "det"


def _past_participle(lows: Sequence[str], i: int) -> bool:
    """A word that reads as a past participle ('founded', 'awarded'), not a noun ('speed', 'bed')."""
    w = lows[i]
    return len(w) > 4 and w.endswith("ed") and not w.endswith("eed") and w.isalpha()


def _period_next(lows: Sequence[str], i: int, found: dict[int, Value]) -> bool:
    """A period or a time grouping starts at i ('before 1900', 'between 1950 and 1970', 'in 2004',
    'per year'): a participle before one says what happened to the rows, and so their date —
    'campuses founded before 1900' — it is not part of the thing's name."""
    if i >= len(lows):
        return False
    cue = WORDS.cues.get((lows[i],))
    if cue is not None and cue[0] == "group" and i + 1 < len(lows) and lows[i + 1] in WORDS.time_units:
        return True
    timed = i + 1 in found and found[i + 1].is_time
    return cue is not None and cue[0] in ("date_prep", "between") and timed


def _last_next(lows: Sequence[str], i: int) -> bool:
    """'last', 'first' or 'most recently' ends the question at i: a participle before it says what
    happened to the rows, and so which date ranks them ('which datacenter opened most recently')."""
    for n in (2, 1):
        said = " ".join(lows[i : i + n])
        if said in _LAST_WORDS and all(w in "?.!" for w in lows[i + n :]):
            return True
    return False


def _compared_next(lows: Sequence[str], i: int, found: dict[int, Value]) -> bool:
    """A comparison, a range or a number starts at i: 'cost' before one is a verb ('products
    that cost less than 600'), not the noun of 'the usage cost'."""
    if i in found and found[i].kind == "number":
        return True
    return any(
        (cue := WORDS.cues.get(tuple(lows[i : i + n]))) is not None and cue[0] in ("cmp", "between")
        for n in range(1, MAX_PHRASE + 1)
    ) or (i < len(lows) and lows[i] in WORDS.symbols)


def _name_at(
    tokens: Sequence[Token], lows: list[str], i: int, names: Names, as_names: frozenset[int]
) -> Lex | None:
    """Words that are a name though some are function or cue words: a stored value or a name
    spelled with them ('Let There Be Rock', 'How to Get There'), or a cue word the reading takes
    as the name it spells ('rank', 'last name')."""
    if i > 0 and tokens[i - 1].kind == "number" and lows[i] in WORDS.sets["measure_units"]:
        return None  # '1024 GB of RAM': the number's unit, then what it measures — no name
    for n in range(min(MAX_NAME, len(tokens) - i), 0, -1):
        span = tokens[i : i + n]
        if (
            span[0].kind == "punct"
            or span[-1].kind == "punct"
            or any(x.kind == "punct" and x.text not in "&/.-'" for x in span[1:-1])
        ):
            continue  # a sign inside a name: 'AC/DC', 'R&D', 'Network & CDN', 'S.A.'
        if any(x.kind not in ("word", "number", "punct") for x in span):
            continue
        text = _text(tokens, i, i + n)
        inside = [k for k in range(i, i + n) if k in as_names]
        signed = any(x.kind == "punct" for x in span)
        capitalized = n > 1 and span[0].text[:1].isupper() and _has_function_word(lows[i : i + n])
        if (inside or signed or capitalized or _code_or_of_name(tokens, lows, i, n, names)) and names.spells(
            text.lower()
        ):
            return Lex("np", "name", i, i + n, text)
    return None


def _code_or_of_name(tokens: Sequence[Token], lows: Sequence[str], i: int, n: int, names: Names) -> bool:
    """Words that may be a name though a cue reads them otherwise: a code typed in capitals in a
    question that is not all capitals ('in division AS': the stored 'AS', not the word 'as'), or
    words joined by 'of' ('the dates of birth': the column date_of_birth) — when the schema spells
    them (the caller checks)."""
    if n == 1:
        word = tokens[i].text
        said_low = any(t.kind == "word" and t.text.islower() for t in tokens)
        return len(word) > 1 and word.isalpha() and word.isupper() and said_low
    joins = [k for k, w in enumerate(lows[i : i + n]) if WORDS.cues.get((w,), ("",))[0] == "of"]
    if not joins:
        return False
    k = joins[0]
    # 'dates of birth' is one name; 'types of restaurants' says the types of a thing named alone
    return 0 < k < n - 1 and not names.spells(" ".join(lows[i + k + 1 : i + n]))


def _has_function_word(lows: Sequence[str]) -> bool:
    return any(w in WORDS.sets["stop"] or tuple([w]) in WORDS.cues for w in lows)


# ---------------------------------------------------------------------------------------------
# the rules: lexemes → the tree (each returns what it read and where it stopped, or None)

Step = tuple[Question, int]
Rule = Callable[[Sequence[Lex], int, Question], Step | None]


def _at(ls: Sequence[Lex], i: int, *cats: str) -> bool:
    return i < len(ls) and ls[i].cat in cats


def _is(ls: Sequence[Lex], i: int, cat: str, *args: str) -> bool:
    return i < len(ls) and ls[i].cat == cat and (not args or ls[i].arg in args)


def _skip(ls: Sequence[Lex], i: int, *cats: str) -> int:
    while i < len(ls) and ls[i].cat in cats:
        i += 1
    return i


def _np(ls: Sequence[Lex], i: int) -> tuple[Phrase, int] | None:
    """DET? NP"""
    j = _skip(ls, i, "det")
    return (ls[j].phrase, j + 1) if _at(ls, j, "np") else None


def _number_at(ls: Sequence[Lex], i: int) -> Value | None:
    return ls[i].value if _is(ls, i, "value", "number") else None


def parse(ls: Sequence[Lex]) -> Question | None:
    """The tree of the first head rule after which every lexeme is placed, or None."""
    found = trees(ls)
    return found[0] if found else None


def trees(ls: Sequence[Lex]) -> list[Question]:
    """Every tree the head rules place every lexeme in, in the rules' order: the binding pass
    takes the first one the schema can bind ('the latest payment date' is a figure, 'the
    longest track' a ranking — the grammar alone cannot tell)."""
    start = _skip(ls, 0, "filler", "punct")
    ranked = _ranked_lead(ls, start)
    if ranked:
        return ranked
    front, i = _front(ls, start)
    out = _headed(ls, front, _skip(ls, i, "filler", "punct"))
    if not out and i > start:  # 'clients in Berlin - which are they?': no topic after all
        out = _headed(ls, Question("list"), start)
    if not out:
        out = _set_said_first(ls, start)
    return out


def _set_said_first(ls: Sequence[Lex], i: int) -> list[Question]:
    """FOR DET? NP (compare | absent | text | prep)* ',' head — 'for universities with enrollment
    over 20000, how many per affiliation?': the rows the head is about, said first with their
    restrictions, for a head that names no rows of its own"""
    if not (_is(ls, i, "prep") and ls[i].text.lower() in WORDS.sets["topic_leads"]):
        return []
    got = _np(ls, i + 1)
    if got is None:
        return []
    q, j = Question("list", thing=got[0]), got[1]
    while not (_is(ls, j, "punct", ",") or j >= len(ls)):
        for rule in (_compare, _absent, _text_in, _prep, _and):
            step = rule(ls, j, q)
            if step is not None and step[1] > j:
                q, j = step
                break
        else:
            return []
    if j >= len(ls):
        return []
    # a head that also shows columns asks for a figure of each row, which this does not read
    return [t for t in _headed(ls, q, j + 1) if t.ask in ("count", "measure") and not t.shown]


def _ranked_lead(ls: Sequence[Lex], i: int) -> list[Question]:
    """RANK(rank words) top — 'Rank the 6 datacentres with the most CPU hours', 'rank the top 5
    clients by revenue': the verb only asks for the ranking the rest says, so it leads in as
    'show' does; only trees that rank (any other reading is the order rule's)."""
    if not (_at(ls, i, "order") and ls[i].text.lower() in WORDS.sets["rank_words"]):
        return []
    if not _at(ls, i + 1, "det", "top", "value"):
        return []
    return [q for q in _headed(ls, Question("list"), i + 1) if q.ask == "rank" and q.order is not None]


def _headed(ls: Sequence[Lex], front: Question, i: int) -> list[Question]:
    """The trees of each head rule from lexeme i, with what was said in front of it."""
    out: list[Question] = []
    for head in HEADS:
        got = head(ls, i if head in _HEADS_AS_SAID else _lead(ls, i))
        if got is None:
            continue
        q, j = got
        if (front.thing is not None or _shared(q)) and (front.thing is None) == (q.thing is None):
            continue  # 'of all the clients in Spain, what fraction …': the set said first, a share after
        q = replace(
            q,
            thing=q.thing or front.thing,
            windows=(*front.windows, *q.windows),
            groups=(*front.groups, *q.groups),
            conditions=(*front.conditions, *q.conditions),
        )
        done = _modifiers(ls, j, q)
        if done is not None and done not in out:
            out.append(done)
    return out


def _shared(q: Question) -> bool:
    return any(m.func == "share" for m in q.measures)


def _lead(ls: Sequence[Lex], i: int) -> int:
    """LIST* BE? DET? — 'show me', 'what is the', 'which are'"""
    return _skip(ls, _skip(ls, _skip(ls, i, "list", "filler"), "be"), "det")


_FRONT_ENDS = (",", ":", "-", "–", "—")


def _front(ls: Sequence[Lex], i: int) -> tuple[Question, int]:
    """(window | group | prep | TIME | NP)+ (',' | ':' | '-') | OF DET? NP prep* ',' | BUCKET —
    'In 2025, how many …', 'For each nationality, show …', 'In prod-singapore-1, which host …',
    'Germany: how many …', '2024 broken down by month: how many …': a period, a grouping or a
    filter said first, as a topic; 'Of all the clients in Switzerland, what fraction …': the set
    a share is of, with its own restrictions (the whole's, not the part's)."""
    if _at(ls, i, "bucket"):  # 'monthly cost per CPU hour', 'month-by-month new client signups'
        return Question("list", groups=(Group(unit=ls[i].arg),)), i + 1
    q, j = Question("list"), i
    whole = _at(ls, i, "of") and _at(ls, _skip(ls, i + 1, "det"), "np")
    if whole:
        k = _skip(ls, i + 1, "det")
        q, j = Question("list", thing=ls[k].phrase), k + 1
    q, j = _front_piece(ls, j, q, whole)
    if j == i or not (_at(ls, j, "punct") and ls[j].arg in _FRONT_ENDS):
        return Question("list"), i
    while True:  # 'enterprise segment, 2026 - total usage cost?': one piece after another
        more, k = _front_piece(ls, j + 1, q, whole)
        if k == j + 1 or not (_at(ls, k, "punct") and ls[k].arg in _FRONT_ENDS):
            break
        q, j = more, k
    if whole:
        q = replace(q, conditions=tuple(replace(c, whole=True) for c in q.conditions))
    return q, j + 1


def _front_piece(ls: Sequence[Lex], j: int, q: Question, whole: bool) -> Step:
    """(window | group | prep | TIME | NP)* — one piece of what is said in front"""
    while True:
        for rule in (_window, _group, _prep, *(() if whole else (_topic,))):
            got = rule(ls, j, q)
            if got is not None and got[1] > j:
                q, j = got
                break
        else:
            return q, j


def _topic(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """TIME | NP — said alone before a colon or comma, a topic: the period or the value the
    question is about ('2024 broken down by month: …', 'Germany: …')"""
    value = ls[i].value if _at(ls, i, "value") else None
    if value is not None and value.is_time:
        return replace(q, windows=(*q.windows, Window(value))), i + 1
    if _at(ls, i, "np") and not q.conditions and not q.windows and not q.groups:
        return replace(q, conditions=(Condition(None, "=", ls[i].phrase, prep=":"),)), i + 1
    return None


def _count(ls: Sequence[Lex], i: int) -> Step | None:
    """COUNT DISTINCT? DET? NP (OF DET? NP)? — 'how many active hosts', 'number of different
    majors', 'the total number of points scored across all results'"""
    if not _at(ls, i, "count"):
        return None
    j = _skip(ls, i + 1, "det")
    distinct = _at(ls, j, "distinct")
    got = _np(ls, j + distinct)
    if got is None:
        return None
    counted, k = got
    verbs = ls[k : _skip(ls, k, "verb")]
    after = k + len(verbs)
    if (
        _at(ls, after, "np", "det")
        or _linked_group(ls, k) > k
        or (_at(ls, after, "with") and _at(ls, after + 1, "np"))
    ):
        verbs = []  # 'restaurants serve Italian food': the verb and its object say which rows;
        # 'papers associated with each dataset', '… with papers': the verb links them to others
    k += len(verbs)
    thing = counted
    if _at(ls, k, "of"):
        owner = _np(ls, k + 1)
        if owner is not None:
            thing, k = owner
    elif distinct:  # 'how many different opening years are there across cinemas': of all of them
        e = _skip(ls, k, "exist")
        over = _over_set(ls, e) if _at(ls, e, "prep", "group") else None
        if over is not None and _skip(ls, over[1], "punct") == len(ls):
            thing, k = over
    measure = Measure("count", counted, distinct=distinct, hint=ls[i].text.lower())
    said = (Phrase(verbs[0].start, verbs[-1].end, " ".join(x.text for x in verbs)),) if verbs else ()
    return Question("count", thing=thing, measures=(measure,), verbs=said), k


def _measure(ls: Sequence[Lex], i: int) -> Step | None:
    """AGG COUNT? DET? NP (OF DET? NP)? | AGG OF DET? NP | AGG AUX? VERB | NP OF DET SUPER NP"""
    i = _skip(ls, i, "det")
    funcs: list[Func] = []
    while _at(ls, i, "agg") and _at(ls, i + 1, "and") and _at(ls, i + 2, "agg", "super"):
        funcs.append(_func(ls[i]))  # 'the average and total capacity', 'max and min weeks'
        i += 2
    if funcs and _at(ls, i, "super"):
        funcs.append(_func(ls[i]))
        got = _np(ls, i + 1)
        if got is None:
            return None
        column, j = got
        owner = _np(ls, j + 1) if _at(ls, j, "of") else None
        thing, j = owner if owner else (None, j)
        return Question("measure", thing=thing, measures=tuple(Measure(f, column) for f in funcs)), j
    if funcs:
        rest = _measure(ls, i)
        if rest is None or len(rest[0].measures) != 1:
            return None
        m = rest[0].measures[0]
        return replace(rest[0], measures=(*(replace(m, func=f) for f in funcs), m)), rest[1]
    if _at(ls, i, "np") and ls[i].text.endswith(("'s", "’s")) and _at(ls, i + 1, "agg"):
        rest = _measure(ls, i + 1)  # "Helix Finance's total usage cost"
        if rest is None:
            return None
        cond = Condition(None, "=", ls[i].phrase, prep="of")
        return replace(rest[0], conditions=(cond, *rest[0].conditions)), rest[1]
    if _at(ls, i, "agg"):
        func = cast(Func, ls[i].arg.lower())
        if _at(ls, i + 1, "of"):  # 'the total of all invoices': the table's own figure
            got = _np(ls, i + 2)
            if got is None:
                return None
            return Question("measure", thing=got[0], measures=(Measure(func),)), got[1]
        j = _skip(ls, i + 1, "aux", "be", "filler")
        conditions, j = _who_did(ls, j) if j > i + 1 else ((), j)
        if _at(ls, j, "verb"):  # 'how much did we sell', 'how much was paid', 'total spent'
            k = _skip(ls, j, "verb")
            hint = " ".join(x.text.lower() for x in ls[j:k])
            thing = None
            if (
                _at(ls, k, "prep", "date_prep")
                and ls[k].text.lower() in ("on", "for")
                and _at(ls, k + 1, "np")
            ):
                thing, k = ls[k + 1].phrase, k + 2  # '… spend on usage'
            return Question(
                "measure", thing=thing, measures=(Measure(func, hint=hint),), conditions=conditions
            ), k
        skipped = _at(ls, i + 1, "count")  # 'the maximum number of CPU cores' (a column), 'the
        got = _np(ls, i + 1 + skipped)  # average number of payments' (rows: counts, averaged)
        counted = skipped and bool(set(ls[i + 1].text.lower().split()) & WORDS.sets["counts"])
        if got is None:
            return None
        column, j = got
        thing = None
        if _at(ls, j, "of", "date_prep") and (ls[j].cat == "of" or ls[j].arg == "on"):
            owner = _np(ls, j + 1)  # 'of students', 'on a host'
            if owner is not None:
                thing, j = owner
        return Question("measure", thing=thing, measures=(Measure(func, column, counted=counted),)), j
    if _at(ls, i, "np") and _at(ls, i + 1, "of") and _at(ls, _skip(ls, i + 2, "det"), "super"):
        k = _skip(ls, i + 2, "det")  # 'the age of the oldest student', 'the date of the earliest race'
        owner = _np(ls, k + 1)
        if owner is None:
            return None
        said = ls[k].text.lower()
        extreme: Func = "max" if ls[k].arg == "desc" else "min"
        measure = Measure(extreme, ls[i].phrase, hint=said)
        return Question("measure", thing=owner[0], measures=(measure,)), owner[1]
    return None


def _who_did(ls: Sequence[Lex], j: int) -> tuple[tuple[Condition, ...], int]:
    """NP ((PREP | DATE_PREP) NP)? VERB — 'how much did Glacier Payments spend', 'how much did
    clients in Paris spend': who did it, and where they are, as conditions; none when no verb
    follows."""
    who = _np(ls, j) if _at(ls, j, "np", "det") else None
    if who is None:
        return (), j
    k = who[1]
    where: tuple[Condition, ...] = ()
    if _at(ls, k, "prep", "date_prep") and _at(ls, k + 1, "np") and _at(ls, k + 2, "verb"):
        where, k = (Condition(None, "=", ls[k + 1].phrase, prep=ls[k].text.lower()),), k + 2
    if not _at(ls, k, "verb"):
        return (), j
    return (Condition(None, "=", who[0], prep="of"), *where), k


def _func(x: Lex) -> Func:
    """The aggregate of an 'agg' cue, or of a superlative said of a figure ('the youngest age')."""
    if x.cat == "agg":
        return cast(Func, x.arg.lower())
    return "max" if x.arg == "desc" else "min"


def _count_of(ls: Sequence[Lex], i: int) -> Step | None:
    """AGG NP COUNT(count of) DET? NP — 'average core count of retired servers': the number of
    cores each has, aggregated (as 'the average number of cores of retired servers')"""
    i = _skip(ls, i, "det")
    if not (_at(ls, i, "agg") and _at(ls, i + 1, "np") and _is(ls, i + 2, "count")):
        return None
    owner = _np(ls, i + 3) if ls[i + 2].text.lower() == "count of" else None
    if owner is None:
        return None
    measure = Measure(_func(ls[i]), ls[i + 1].phrase, counted=True)
    return Question("measure", thing=owner[0], measures=(measure,)), owner[1]


def _per_one(ls: Sequence[Lex], i: int) -> Step | None:
    """COUNT NP AUX DET? NP (HAVE | VERB)? AGG — 'how many cores does an active host have on
    average': the aggregate of the number each one has (a column the binding pass must find, as
    for 'the average number of cores')"""
    if not _at(ls, i, "count") or not _at(ls, i + 1, "np") or not _at(ls, i + 2, "aux"):
        return None
    got = _np(ls, i + 3)
    if got is None:
        return None
    j = _skip(ls, got[1], "have", "verb")
    if not _at(ls, j, "agg") or j == got[1] or ls[j].text.lower() == "how much":
        return None
    measure = Measure(_func(ls[j]), ls[i + 1].phrase, counted=True)
    return Question("measure", thing=got[0], measures=(measure,)), j + 1


def _most_of(ls: Sequence[Lex], i: int) -> Step | None:
    """AGG(how much) NP (BE | AUX) DET SUPER NP — 'how much CPU is the busiest resource pool
    using': the figure of the one that has the most of it, the highest (lowest) of the figure"""
    if not (_is(ls, i, "agg") and ls[i].text.lower() == "how much" and _at(ls, i + 1, "np")):
        return None
    j = i + 2
    if not _at(ls, j, "be", "aux") or not _at(ls, j + 1, "det") or not _at(ls, j + 2, "super"):
        return None
    got = _np(ls, j + 3)
    if got is None:
        return None
    measure = Measure(_func(ls[j + 2]), ls[i + 1].phrase, hint=ls[j + 2].text.lower())
    return Question("measure", thing=got[0], measures=(measure,)), got[1]


def _postfix(ls: Sequence[Lex], i: int) -> Step | None:
    """NP (COUNT | AGG) — 'payment count for Q3 2025', 'usage cost total for clients in New York'"""
    if not _at(ls, i, "np") or not _at(ls, i + 1, "count", "agg"):
        return None
    if ls[i + 1].text.lower() not in ("count", "counts", "total", "sum", "average", "avg"):
        return None
    if ls[i + 1].cat == "count":
        return Question("count", thing=ls[i].phrase, measures=(Measure("count", ls[i].phrase),)), i + 2
    return Question("measure", measures=(Measure(_func(ls[i + 1]), ls[i].phrase),)), i + 2


def _share(ls: Sequence[Lex], i: int) -> Step | None:
    """SHARE OF? DET? NP? — 'what percentage of payments (failed)', 'what share of 2024 payments',
    'proportion of payments that failed': the rows that meet what is said after, among those; with
    no NP the set was said first ('of all the clients in Spain, what fraction are smb')"""
    if not _at(ls, i, "share"):
        return None
    j = _skip(ls, i + 1, "of", "det")
    windows: tuple[Window, ...] = ()
    value = ls[j].value if _at(ls, j, "value") else None
    if value is not None and value.is_time:  # 'of 2024 payments'
        windows, j = (Window(value),), j + 1
    got = _np(ls, j)
    if got is None:
        if j > i + 1 or windows:
            return None
        return Question("measure", measures=(Measure("share"),)), i + 1
    return Question("measure", thing=got[0], measures=(Measure("share"),), windows=windows), got[1]


_RATIO_WORDS = WORDS.sets["ratio_words"]
# what stands between a ratio's numerator and its denominator ('to', 'over', 'per', 'divided by', '/')
_RATIO_LINKS = WORDS.sets["ratio_links"]


def _ratio(ls: Sequence[Lex], i: int) -> Step | None:
    """SHARE(ratio) OF side LINK side — 'the ratio of helpfulness scores to clarity scores', 'the
    ratio of population per area', 'the ratio of the total number of X to the total number of Y':
    the numerator and the denominator each in its place (the ratio turned round is another
    question); a side said with no aggregate is each row's own figure (func 'value'), which the
    binding pass divides row by row when both are numbers of one row."""
    if not (_is(ls, i, "share") and ls[i].text.lower() in _RATIO_WORDS and _at(ls, i + 1, "of")):
        return None
    top = _ratio_side(ls, i + 2)
    if top is None or not _ratio_link(ls, top[1]):
        return None
    over = _ratio_side(ls, top[1] + 1)
    if over is None:
        return None
    measure = Measure("ratio", over=over[0], top=top[0])
    return Question("measure", measures=(measure,)), over[1]


def _ratio_link(ls: Sequence[Lex], i: int) -> bool:
    """TO | OVER | PER | DIVIDED BY | '/' — the word between a ratio's two sides."""
    return i < len(ls) and ls[i].text.lower() in _RATIO_LINKS and ls[i].cat in ("prep", "group", "cmp", "np")


def _ratio_side(ls: Sequence[Lex], i: int) -> tuple[Measure, int] | None:
    """DET? (COUNT | AGG COUNT?)? DET? NP (IN MUNIT)? — one side of a ratio: 'clarity scores', 'the
    total number of keywords', 'its range in miles' (the unit said only says how it is measured)"""
    j = _skip(ls, i, "det")
    func: Func = "value"
    if _at(ls, j, "agg"):
        func, j = _func(ls[j]), j + 1
        if _at(ls, j, "count"):  # 'the total number of publications': a count
            func, j = "count", j + 1
    elif _at(ls, j, "count"):
        func, j = "count", j + 1
    got = _np(ls, j)
    if got is None:
        return None
    phrase, k = got
    if _is(ls, k, "date_prep", "in") and _at(ls, k + 1, "munit"):
        k = _skip(ls, k + 1, "munit")  # 'range in miles'
    return Measure(func, phrase), k


def _when(ls: Sequence[Lex], i: int) -> Step | None:
    """WHEN AUX (GROUP | DET)? NP (PREP NP)? (LAST | FIRST)? VERB* DET? (LAST | FIRST)? NP — 'when did
    Kestrel Fashion GmbH last make a payment': the latest date of those rows"""
    if not (_is(ls, i, "stop", *WORDS.sets["time_questions"]) and _at(ls, i + 1, "aux", "be")):
        return None
    j = i + 2
    k = _skip(ls, j, "det")
    if ls[i + 1].cat == "be" and (_is(ls, k, "relative", "last") or _is(ls, k, "top", "asc")):
        got = _np(ls, k + 1)  # 'when was the last payment from Obsidian Biotech SE'
        if got is None:
            return None
        func: Func = "max" if ls[k].cat == "relative" else "min"
        q = Question("measure", thing=got[0], measures=(Measure(func, hint="date"),))
        if _at(ls, got[1], "prep", "date_prep", "of") and _at(ls, got[1] + 1, "np"):
            cond = Condition(None, "=", ls[got[1] + 1].phrase, prep=ls[got[1]].text.lower())
            return replace(q, conditions=(cond,)), got[1] + 2
        return q, got[1]
    each = _at(ls, j, "group")
    got = _np(ls, j + each)
    if got is None:
        return None
    who, j = got
    conditions: tuple[Condition, ...] = ()
    if not each:
        conditions = (Condition(None, "=", who, prep="of"),)
    if _at(ls, j, "date_prep", "prep") and _at(ls, j + 1, "np"):  # 'a client in Berlin'
        conditions, j = (*conditions, Condition(None, "=", ls[j + 1].phrase, prep=ls[j].text.lower())), j + 2
    func = "max"
    verb = None
    for _ in range(2):
        if _is(ls, j, "relative", "last") or _is(ls, j, "top", "asc"):
            func, j = ("max" if ls[j].cat == "relative" else "min"), j + 1
        if _at(ls, j, "verb") and verb is None:
            verb = ls[j].phrase
        j = _skip(ls, j, "verb", "have", "det")
    got = _np(ls, j)
    if got is None and verb is not None and _skip(ls, j, "punct") == len(ls):
        got = (verb, j)  # 'when did Acme Logistics GmbH last pay': what paying makes
    if got is None:
        return None
    groups = (Group(who),) if each else ()
    measure = Measure(func, hint="date")
    return Question("measure", thing=got[0], measures=(measure,), conditions=conditions, groups=groups), got[
        1
    ]


def _when_extreme(ls: Sequence[Lex], i: int) -> Step | None:
    """WHEN (AUX | BE) DET? SUPER(latest | earliest …) NP VERB* — 'when did the latest payment
    happen', 'when was the earliest booking made': the latest (earliest) date of those rows."""
    if not (_is(ls, i, "stop", *WORDS.sets["time_questions"]) and _at(ls, i + 1, "aux", "be")):
        return None
    k = _skip(ls, i + 2, "det")
    if not _at(ls, k, "super") or ls[k].text.lower() not in _LAST_WORDS:
        return None
    got = _np(ls, k + 1)
    if got is None:
        return None
    func: Func = "max" if _LAST_WORDS[ls[k].text.lower()] else "min"
    q = Question("measure", thing=got[0], measures=(Measure(func, hint="date"),))
    return q, _skip(ls, got[1], "verb")  # 'happen', 'made': what the rows' date records


def _extreme(ls: Sequence[Lex], i: int) -> Step | None:
    """DET? SUPER NP ((OF | FOR | FROM) DET? NP)? — 'the latest payment date of Kestrel Fashion
    GmbH', 'the most recent payment date for X': the figure (the binding pass declines it when the
    words name rows, not a column)"""
    i = _skip(ls, i, "det")
    if not _at(ls, i, "super") or not _at(ls, i + 1, "np"):
        return None
    column, j = ls[i + 1].phrase, i + 2
    conditions: tuple[Condition, ...] = ()
    j = _skip(ls, j, "filler") if _at(ls, j, "filler") and _is(ls, j + 1, "date_prep", "in") else j
    j = _skip(ls, j + 1, "munit") if _is(ls, j, "date_prep", "in") and _at(ls, j + 1, "munit") else j
    over = _over_set(ls, j)  # 'the most CPU any resource pool …', 'the highest usage of a pool'
    if over is not None:
        measure = Measure(_func(ls[i]), column, hint=ls[i].text.lower())
        return Question("measure", thing=over[0], measures=(measure,)), over[1]
    if _at(ls, j, "of", "prep", "date_prep") and _at(ls, _skip(ls, j + 1, "det"), "np"):
        k = _skip(ls, j + 1, "det")
        conditions, j = (Condition(None, "=", ls[k].phrase, prep=ls[j].text.lower()),), k + 1
    measure = Measure(_func(ls[i]), column, hint=ls[i].text.lower())
    return Question("measure", measures=(measure,), conditions=conditions), j


_ANY = WORDS.sets["any"]


def _over_set(ls: Sequence[Lex], j: int) -> tuple[Phrase, int] | None:
    """OF? (ANY | EVERY | A) NP | (AMONG | ACROSS) DET? NP | OF (THE | ALL) NP(plural) — the rows a
    superlative figure is taken over ('the highest usage of a pool', 'among the pools', 'of the
    pools'): the set, not a restriction of it ('of Acme' restricts, 'of the pools' does not)."""
    k = _skip(ls, j, "of")
    if _is(ls, k, "det") and ls[k].text.lower() in _ANY and _at(ls, k + 1, "np"):
        return ls[k + 1].phrase, k + 2
    among = _at(ls, j, "prep", "group") and ls[j].text.lower() in WORDS.sets["among"]
    if not among and not (_at(ls, j, "of") and _is(ls, j + 1, "det")):
        return None
    k = _skip(ls, j + 1, "det")
    if not _at(ls, k, "np"):
        return None
    last = ls[k].text.lower().split()[-1]
    if not among and not (last.endswith("s") and not last.endswith("ss")):
        return None
    return ls[k].phrase, k + 1


def _key(ls: Sequence[Lex], i: int) -> tuple[Measure | Phrase, int] | None:
    """AGG NP | COUNT NP | NP — what a ranking is by"""
    if _at(ls, i, "agg"):
        func = cast(Func, ls[i].arg.lower())
        if _at(ls, i + 1, "verb"):  # 'by total spent'
            return Measure(func, hint=ls[i + 1].text.lower()), i + 2
        got = _np(ls, i + 1)
        return (Measure(func, got[0]), got[1]) if got else None
    if _at(ls, i, "count"):
        got = _np(ls, _skip(ls, i + 1, "det"))
        return (Measure("count", got[0]), got[1]) if got else None
    return _np(ls, i)


def _top(ls: Sequence[Lex], i: int) -> Step | None:
    """TOP NUMBER? DET? NP (BY key | link? DET SUPER key)? | WH? NUMBER NP link? DET SUPER key? |
    DET? NUMBER SUPER NP (BY key)? | DET? NUMBER NP WITH DET SUPER key"""
    i = _skip(ls, i, "det")
    if _at(ls, i, "top") and _at(ls, i + 1 + (_number_at(ls, i + 1) is not None), "super"):
        n = _number_at(ls, i + 1)  # 'top 3 most valuable gifts'
        k = i + 1 + (n is not None)
        got = _np(ls, k + 1)
        if got is None:
            return None
        order = Order(None, ls[k].arg == "desc", hint=ls[k].text.lower())
        return Question("rank", thing=got[0], limit=n.value if n else 1, order=order), got[1]
    if _at(ls, i, "top"):
        n = _number_at(ls, i + 1)
        got = _np(ls, i + 1 + (n is not None))
        if got is None:
            return None
        thing, j = got
        desc = ls[i].arg == "desc"
        q = Question("rank", thing=thing, limit=n.value if n else 1)
        if _at(ls, j, "by") or (_at(ls, j, "group") and ls[j].text.lower() == "by"):
            key = _key(ls, _skip(ls, j + 1, "det"))
            if key is None:
                return None
            return replace(q, order=Order(key[0], desc)), key[1]
        ranked = _ranked(ls, j)  # 'the top 3 publications with the highest number of citations'
        if ranked is not None:
            return replace(q, order=ranked[0]), ranked[1]
        return replace(q, order=Order(None, desc)), j
    j = _skip(ls, i, "det")
    n = _number_at(ls, j)
    if n is None:
        return None
    j += 1
    if _at(ls, j, "super"):  # 'the 3 shortest tracks', 'the 5 oldest hosts by commissioning date'
        k = _skip(ls, j + 1, "verb")  # '3 earliest hired employees'
        got = _np(ls, k)
        if got is None:
            return None
        hint = " ".join(x.text.lower() for x in ls[j:k])
        thing, k = got
        order = Order(None, ls[j].arg == "desc", hint=hint)
        if _at(ls, k, "by"):
            key = _key(ls, _skip(ls, k + 1, "det"))
            if key is None:
                return None
            order, k = replace(order, key=key[0]), key[1]
        return Question("rank", thing=thing, limit=n.value, order=order), k
    got = _np(ls, j)
    if got is None:
        return None
    thing, k = got
    ranked = _ranked(ls, k)
    if ranked is None:
        return None
    order, k = ranked
    return Question("rank", thing=thing, limit=n.value, order=order), k


def _ranked(ls: Sequence[Lex], i: int) -> tuple[Order, int] | None:
    """link? DET SUPER key? — '… have the most students', '… with the lowest phone numbers',
    '… earn the most', '… have hosted the most races', '… are the smallest'"""
    j = _skip(ls, i, "rel", "have", "with", "aux", "be", "verb")
    hint = " ".join(x.text.lower() for x in ls[i:j] if x.cat == "verb")
    j = _skip(ls, j, "prep", "date_prep")  # 'appears in the most films'
    if j < len(ls) and ls[j].cat == "np" and ls[j].end - ls[j].start == 1 and _at(ls, j + 1, "det"):
        hint, j = (hint + " " + ls[j].text.lower()).strip(), j + 1  # a verb the lexicon does not know
        j = _skip(ls, j, "prep", "date_prep")
    top = _is(ls, j + 1, "top", "desc") and _number_at(ls, j + 2) is None  # 'with the top score'
    if not _at(ls, j, "det") or not (_at(ls, j + 1, "super") or top):
        return None
    sup = ls[j + 1]
    key = _key(ls, j + 2)
    if key is None:
        return Order(None, sup.arg == "desc", hint=(hint or sup.text).lower()), j + 2
    return Order(key[0], sup.arg == "desc", hint=sup.text.lower()), key[1]


def _best(ls: Sequence[Lex], i: int) -> Step | None:
    """WH NP link? DET SUPER key? | (WH BE)? DET? SUPER NP — every row tied for first"""
    if _at(ls, i, "list") and ls[i].arg == "wh":
        if _at(ls, i + 1, "unit"):  # 'which month had the most payments', 'which year in 2025 …'
            q = Question("rank", groups=(Group(unit=ls[i + 1].arg),))
            j = i + 2
            window = _window(ls, j, q)
            q, j = window if window is not None else (q, j)
            ranked = _ranked(ls, j)
            if ranked is None:
                return None
            return replace(q, order=replace(ranked[0], ties=True)), ranked[1]
        got = _np(ls, i + 1)
        if got is not None:
            # 'which datacenters starting with dev serve the most clients': part of a name said first
            said = _text_said(ls, got[1], Question("rank"))
            conditions, k = (said[0].conditions, said[1]) if said is not None else ((), got[1])
            ranked = _ranked(ls, k)
            if ranked is not None:
                order = replace(ranked[0], ties=True)
                return Question("rank", thing=got[0], conditions=conditions, order=order), ranked[1]
        i = _skip(ls, i + 1, "be")
    latest = _latest_done(ls, _skip(ls, _skip(ls, i, "list", "filler"), "det"))
    if latest is not None:
        return latest
    j = _skip(ls, i, "det")
    if _at(ls, j, "super"):
        got = _np(ls, j + 1)
        if got is not None:
            order = Order(None, ls[j].arg == "desc", hint=ls[j].text.lower(), ties=True)
            return _first_to(ls, got[1], Question("rank", thing=got[0], order=order))
    return None


def _first_to(ls: Sequence[Lex], k: int, q: Question) -> Step:
    """… TO (VERB | NP) — 'the latest host to enter service', 'the first client to sign up': the
    infinitive after a superlative names the event whose date ranks the rows"""
    if (
        q.order is None
        or ls[k - 1].cat != "np"
        or not _is(ls, k, "prep")
        or ls[k].text.lower() not in WORDS.sets["infinitive"]
    ):
        return q, k
    said = ls[k + 1].text.lower().split()[0] if _at(ls, k + 1, "verb", "np") else ""
    if not _at(ls, k + 1, "verb") and said not in WORDS.sets["events"]:
        return q, k  # 'the latest payment to Acme': to whom, a restriction
    j = k + 2
    if _one_word(ls, j) and (j + 1 == len(ls) or _at(ls, j + 1, "prep", "date_prep", "punct")):
        j += 1  # 'to enter service'
    words = " ".join(x.text.lower() for x in ls[k + 1 : j])
    hint = f"{'latest' if q.order.desc else 'earliest'} {words}"
    return replace(q, order=replace(q.order, hint=hint)), j


def _latest_done(ls: Sequence[Lex], j: int) -> Step | None:
    """(MOST RECENTLY | LAST | FIRST | EARLIEST) PARTICIPLE NP — 'the most recently commissioned
    node', 'the first founded campus': the rows ranked by the date the participle names (as
    'which node was commissioned most recently'), every row tied for first"""
    if not _at(ls, j, "super", "relative", "top") or ls[j].text.lower() not in _LAST_WORDS:
        return None
    if not _at(ls, j + 1, "np") or ls[j + 1].end - ls[j + 1].start < 2:
        return None
    done, _, rest = ls[j + 1].text.partition(" ")
    if not done.lower().endswith("ed") or not rest:
        return None
    desc = _LAST_WORDS[ls[j].text.lower()]
    thing = Phrase(ls[j + 1].start + 1, ls[j + 1].end, rest)
    order = Order(None, desc, hint=f"{'latest' if desc else 'earliest'} {done.lower()}", ties=True)
    return Question("rank", thing=thing, order=order), j + 2


Item = Phrase | Measure


def _item(ls: Sequence[Lex], i: int) -> tuple[Item, int] | None:
    """DET? (NAMES | NP | COUNT NP? | AGG NP? | REL AGG) — one thing to show"""
    i = _skip(ls, i, "det", "rel")
    if _at(ls, i, "names"):
        return Phrase(ls[i].start, ls[i].end, "names"), i + 1
    if _at(ls, i, "np"):
        return ls[i].phrase, i + 1
    if _at(ls, i, "count", "agg"):
        func = cast(Func, "count" if ls[i].cat == "count" else ls[i].arg.lower())
        got = _np(ls, i + 1)
        return (Measure(func, got[0]), got[1]) if got else (Measure(func), i + 1)
    return None


def _items(ls: Sequence[Lex], i: int) -> tuple[list[Item], int]:
    """item ((',' | AND | ', AND') item)* — 'the name, class, and rank', 'the count and the id'"""
    found: list[Item] = []
    got = _item(ls, i)
    while got is not None:
        found.append(got[0])
        i = got[1]
        j = _skip(ls, i, "punct") if _is(ls, i, "punct", ",") else i
        j = j + 1 if _at(ls, j, "and") else j
        if j == i:
            break
        got = _item(ls, j)
        if got is None and any(isinstance(x, Measure) for x in found):
            got = _figure_item(ls, j)
    return found, i


def _figure_item(ls: Sequence[Lex], i: int) -> tuple[Item, int] | None:
    """DET? SUPER NP after a figure in a list of things to show — 'the average age and the
    youngest age': beside another figure, a superlative of a column is its aggregate (MIN), not
    a ranking of the rows."""
    i = _skip(ls, i, "det")
    if not (_at(ls, i, "super") and _at(ls, i + 1, "np")):
        return None
    return Measure(_func(ls[i]), ls[i + 1].phrase, hint=ls[i].text.lower()), i + 2


def _listing(ls: Sequence[Lex], i: int) -> Step | None:
    """LIST? DET? items (OF DET? NP)? | WH NP (AUX | BE) NP VERB* PREP? | WH NP AUX FILLER* VERB+ |
    WH NP BE (GROUP | DET) NP PREP?"""
    wh = _is(ls, i, "list", "wh")
    i = _skip(ls, i, "list", "be", "filler")
    found, j = _items(ls, i)
    if not found:
        return None
    if _at(ls, j, "of", "group") and (len(found) > 1 or ls[j].cat == "of" or _of_each(ls[j])):
        owner = _np(ls, j + 1)  # 'the names of all students', 'name and age of each member'
        if owner is not None:
            measures = tuple(x for x in found if isinstance(x, Measure))
            if measures and ls[j].cat == "group":  # 'the name and average rating for each business'
                shown = tuple(x for x in found if isinstance(x, Phrase))
                return Question(
                    "measure", thing=owner[0], measures=measures, shown=shown, groups=(Group(owner[0]),)
                ), owner[1]
            if measures:
                return Question("measure", thing=owner[0], measures=measures), owner[1]
            return Question("list", thing=owner[0], shown=tuple(found), only_shown=True), owner[1]
        ranked = _shown_of_ranked(ls, j, found)
        if ranked is not None:
            return ranked
    if len(found) > 1:
        measures = tuple(x for x in found if isinstance(x, Measure))
        if measures:
            return Question(
                "measure", measures=measures, shown=tuple(x for x in found if isinstance(x, Phrase))
            ), j
        if _at(ls, j, "with", "rel", "prep"):
            # 'give me the dates and zip codes with a storm event': the columns, of the rows said
            # after; with no rows said ('statement ids and details') the grammar reads no owner
            return Question("list", shown=tuple(found), only_shown=True), j
        return None
    first = found[0]
    if not isinstance(first, Phrase) or first.text == "names":
        return None
    if wh and _at(ls, j, "exist") and _at(ls, j + 1, "np") and _is(ls, j + 2, "date_prep", "in"):
        # 'what cities do we have stations in': the cities the stations are in, each once
        return Question("list", thing=ls[j + 1].phrase, shown=(first,), only_shown=True, distinct=True), j + 3
    if not wh or not _at(ls, j, "aux", "be"):
        return Question("list", thing=first), j
    k = _skip(ls, j + 1, "filler")
    if _at(ls, k, "verb") and ls[j].cat == "aux":  # 'what product lines do we sell'
        return Question("list", thing=first, distinct=True), _skip(ls, k, "verb")
    each = _at(ls, k, "group", "det")
    other = _np(ls, k + each)
    if other is None:
        return Question("list", thing=first), j
    end = _skip(ls, other[1], "verb", "prep", "date_prep")
    if each and _at(ls, end - 1, "prep", "date_prep"):  # 'which city is each datacenter in'
        return Question("list", thing=other[0], shown=(first,)), end
    if end > other[1] or ls[j].cat == "aux":  # 'which courses does Mingoz teach', 'which films is X in'
        return Question("list", thing=first, conditions=(Condition(None, "=", other[0], prep="by"),)), end
    return Question("list", thing=first), j


def _of_each(x: Lex) -> bool:
    """A grouping word said as OF ('of each', 'of every'): 'the name of each customer' lists each
    one's name, as 'the names of all customers' does."""
    return x.cat == "group" and WORDS.cues.get((x.text.lower().split()[0],), ("",))[0] == "of"


def _each_listed(ls: Sequence[Lex], i: int) -> Step | None:
    """LIST GROUP(each | every) NP ((',' | AND) (THEIR | ITS)? NP)+ — 'list each company and its
    investor', 'show every ship's class and its captain': the columns named, of each row."""
    if not (_at(ls, i, "list") and ls[i].arg != "wh" and _is(ls, i + 1, "group") and _at(ls, i + 2, "np")):
        return None
    if ls[i + 1].text.lower() not in WORDS.sets["any"]:
        return None
    shown, j = [ls[i + 2].phrase], i + 3
    while _at(ls, j, "and") or _is(ls, j, "punct", ","):
        k = _skip(ls, j, "and", "punct")
        k += _is(ls, k, "det") and ls[k].text.lower() in WORDS.sets["possessives"]
        if not _at(ls, k, "np"):
            break
        shown, j = [*shown, ls[k].phrase], k + 1
    if len(shown) < 2:
        return None
    return Question("list", shown=tuple(shown), only_shown=True), j


def _distinct_after(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """','? DISTINCT END after the rows listed — 'countries of members, no duplicates': each once."""
    j = _skip(ls, i, "punct") if _is(ls, i, "punct", ",", "-", "–", "—") else i
    if q.ask != "list" or not _at(ls, j, "distinct") or _skip(ls, j + 1, "punct", "filler") != len(ls):
        return None
    return replace(q, distinct=True), j + 1


def _shown_of_ranked(ls: Sequence[Lex], j: int, found: Sequence[Item]) -> Step | None:
    """items OF (top | DET? SUPER NP) — 'the names of the top 3 restaurants with the highest
    ratings', 'the titles of the 5 longest films', 'the name of the oldest student': the rows
    ranked, showing what is named."""
    if not _at(ls, j, "of") or not all(isinstance(x, Phrase) for x in found):
        return None
    if any(lx.cat == "names" for lx in ls[:j]):
        return None  # 'the first and last name of the oldest …': no rule reads a person's names yet
    if _every_column(found):
        return None  # 'all details of the …': every column, which no rule reads yet
    got = _top(ls, j + 1) or _best(ls, _skip(ls, j + 1, "det"))
    if got is None or got[0].ask != "rank" or got[0].thing is None:
        return None
    return replace(got[0], shown=tuple(found), only_shown=True), got[1]


def _of_value(ls: Sequence[Lex], i: int) -> Step | None:
    """LIST? DET? NP OF DET? NP — 'all pools of prod-ashburn-1': the rows of the first, the second
    their value (tried after 'the names of all students')"""
    i = _skip(ls, i, "list", "be", "filler", "det")
    if not (_at(ls, i, "np") and _at(ls, i + 1, "of") and _at(ls, _skip(ls, i + 2, "det"), "np")):
        return None
    j = _skip(ls, i + 2, "det")
    return Question(
        "list", thing=ls[i].phrase, conditions=(Condition(None, "=", ls[j].phrase, prep="of"),)
    ), j + 1


# -- heads that read a listing or a ranking said around the thing it is about -------------------


def _distinct_listing(ls: Sequence[Lex], i: int) -> Step | None:
    """LIST? BE? DET? DISTINCT listing — 'what are the distinct locations of the race tracks', 'the
    different positions of players', 'what distinct payment method codes appear on invoices': the
    listing, each value once"""
    j = _skip(ls, _skip(ls, i, "list", "be", "filler"), "det")
    if not _at(ls, j, "distinct") or not _at(ls, j + 1, "np"):
        return None
    got = _listing([*ls[:j], *ls[j + 1 :]], i)  # the listing as if the word were not said
    if got is None or got[0].ask != "list" or got[1] <= j:
        return None
    return replace(got[0], distinct=True), got[1] + 1


def _has_ranked(ls: Sequence[Lex], i: int) -> Step | None:
    """WH NP HAVE DET NP (WITH | REL) link* DET SUPER key — 'which country has the airport with the
    highest elevation', 'which city has the branch that has the most members': the one row ranked
    first (the second phrase, said in the singular), showing what is asked of it"""
    if not (_is(ls, i, "list", "wh") and _at(ls, i + 1, "np") and _at(ls, i + 2, "have")):
        return None
    if not _at(ls, i + 3, "det"):
        return None
    got = _np(ls, i + 3)
    if got is None or not (_at(ls, got[1], "rel", "with") or _is(ls, got[1], "list", "wh")):
        return None
    if not _singular(got[0].text):
        return None
    ranked = _ranked(ls, _skip(ls, got[1], "rel", "list"))
    if ranked is None:
        return None
    q = Question("rank", thing=got[0], shown=(ls[i + 1].phrase,), only_shown=True, order=ranked[0], limit=1)
    return q, ranked[1]


_TEXT_BETWEEN: tuple[Rule, ...] = ()  # filled in below, once the modifier rules are defined


def _asked_of(ls: Sequence[Lex], i: int) -> Step | None:
    """WH NP BE DET NP (text | compare)+ PREP END — 'what country are the airlines starting with
    "Orbit" from', 'which city are the stations with more than 20 docks in': what is asked of the
    rows the words in between say which (as 'which city is each datacenter in')"""
    if not (_is(ls, i, "list", "wh") and _at(ls, i + 1, "np") and _at(ls, i + 2, "be")):
        return None
    if not _at(ls, i + 3, "det"):
        return None
    other = _np(ls, i + 3)
    end = _skip_back(ls, len(ls), "punct", "filler")
    if other is None or end - 1 <= other[1] or not _at(ls, end - 1, "prep", "date_prep"):
        return None
    q = Question("list", thing=other[0], shown=(ls[i + 1].phrase,), only_shown=True)
    inner = _placed(ls[: end - 1], other[1], q, _TEXT_BETWEEN)
    return (inner, end) if inner is not None else None


def _count_per(ls: Sequence[Lex], i: int) -> Step | None:
    """COUNT (GROUP | BY) … — 'how many per affiliation', 'how many for each genre': the rows counted
    are not named; the grouping says whose rows (the binding pass finds the table it is of)"""
    if not (_at(ls, i, "count") and _at(ls, i + 1, "group", "by")):
        return None
    return Question("count", measures=(Measure("count", hint=ls[i].text.lower()),)), i + 1


def _columns_alone(ls: Sequence[Lex], i: int) -> Step | None:
    """LIST? DET? item (',' | AND) item … (END | ',') — 'company names and sales, largest sales
    first', 'statement ids and details': columns said with no rows after them; the binding pass
    finds the one table they are of"""
    j = _skip(ls, i, "list", "be", "filler")
    found, k = _items(ls, j)
    if len(found) < 2 or not all(isinstance(x, Phrase) and x.text != "names" for x in found):
        return None
    if not (_skip(ls, k, "punct", "filler") == len(ls) or _is(ls, k, "punct", ",")):
        return None
    return Question("list", shown=tuple(found), only_shown=True), k


def _skip_back(ls: Sequence[Lex], end: int, *cats: str) -> int:
    """Where the lexemes before `end` that are of `cats` start (`end` when none are)."""
    while end > 0 and ls[end - 1].cat in cats:
        end -= 1
    return end


HEADS: tuple[Callable[[Sequence[Lex], int], Step | None], ...] = (
    _count,
    _per_one,
    _most_of,
    _count_of,
    _postfix,
    _ratio,
    _share,
    _when,
    _when_extreme,
    _measure,
    _top,
    _best,
    _extreme,
    _listing,
    _each_listed,
    _distinct_listing,
    _of_value,
    _has_ranked,
    _asked_of,
    _count_per,
    _columns_alone,
)
# the heads that read the question's first words themselves ('which …', 'list …'): no lead is skipped
_HEADS_AS_SAID = (
    _best,
    _listing,
    _each_listed,
    _when,
    _when_extreme,
    _of_value,
    _distinct_listing,
    _has_ranked,
    _asked_of,
    _columns_alone,
)


# -- modifiers ----------------------------------------------------------------------------------


def _modifiers(ls: Sequence[Lex], i: int, q: Question) -> Question | None:
    """modifier* END: every lexeme after the head placed by a modifier rule, or None."""
    return _placed(ls, i, q, MODIFIERS)


def _placed(ls: Sequence[Lex], i: int, q: Question, rules: Sequence[Rule]) -> Question | None:
    """rule* END: the tree once every lexeme from i is placed by the first of `rules` that takes
    it (and moves on), or None when one is placed by none."""
    while i < len(ls):
        for rule in rules:
            got = rule(ls, i, q)
            if got is not None and got[1] > i:
                q, i = got
                break
        else:
            return None
    return q


def _skipped(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """FILLER | EXIST | PUNCT | VERB PREP? BACK | END WH BE? BACK | (AS | IN) DET? SHARE | IN TOTAL
    — words that add nothing ('… - which are they?', 'as a percentage' after a share, 'in total'
    after a total)"""
    back = _skip(ls, _skip(ls, i + 1, "list"), "be")  # '… - which are they?', '… - what are those?'
    if _is(ls, i, "punct", *_ENDS) and back > i + 1 and _said_back(ls, back) and q.ask == "list":
        return q, back + 1
    if _shared(q) and _at(ls, i, "prep", "date_prep") and _at(ls, _skip(ls, i + 1, "det"), "share"):
        return q, _skip(ls, i + 1, "det") + 1  # 'as a percentage', 'in percent': how a share is said
    if _at(ls, i, "filler", "exist", "punct") and ls[i].arg not in ("(",):
        return q, i + 1
    if _in_total(ls, i, q):
        return q, i + 1  # 'how much did they rack up in total': the total already asked for
    if _at(ls, i, "be", "aux") and _at(ls, i + 1, "exist"):  # 'do we have', 'have there been'
        return q, i + 2
    if _at(ls, i, "be", "have") and _at(ls, i + 1, "group", "bucket") and not _did_after(ls, i + 2):
        return q, i + 1  # 'are in each city', 'have each'; not 'has each builder built' (a verb of its own)
    if _owned_last(ls, i, q):
        return q, i + 1  # 'the largest amount any customer has'
    back = _said_again(ls, i)
    if back > i:
        return q, back  # 'the number of papers they have published'

    if _is(ls, i, "date_prep", "in") and _at(ls, i + 1, "munit") and ls[i + 1].arg not in MONEY_UNITS:
        return q, _skip(ls, i + 1, "munit")  # 'memory in GB': the unit only ('in euros' may pick a currency)
    if _is(ls, i, "punct", "(") and _at(ls, i + 1, "super"):  # '(lowest latitude)'
        return q, i + 1
    j = _skip(ls, _skip(ls, i, "verb"), "with", "prep", "by")
    if j > i and ls[i].cat == "verb" and j < len(ls) and ls[j].text.lower() in WORDS.sets["back"]:
        return q, j + 1  # 'associated with them': a link back to what is already named
    return None


def _owned_last(ls: Sequence[Lex], i: int, q: Question) -> bool:
    """HAVE END after a figure of a set ('the largest outstanding amount any customer has', 'the
    average age each student has'): the figure is the set's own, already said."""
    ends = _skip(ls, i + 1, "filler", "punct") == len(ls)
    return ends and _at(ls, i, "have") and q.thing is not None and bool(q.measures) and _at(ls, i - 1, "np")


def _said_again(ls: Sequence[Lex], i: int) -> int:
    """NP BACK (HAVE | BE | AUX)* VERB+ — 'the number of papers they have published', 'reviews they
    posted': a clause on the noun before it that points back at the rows already named and says
    the link again; it adds nothing. Where it ends (i when it is not one)."""
    if not (_at(ls, i - 1, "np") and i < len(ls) and ls[i].text.lower() in WORDS.sets["back"]):
        return i
    j = _skip(ls, i + 1, "have", "be", "aux")
    k = _skip(ls, j, "verb")
    return k if k > j else i


def _did_after(ls: Sequence[Lex], i: int) -> bool:
    """The content words at i end in a verb ('each builder built', 'each author published'): 'has'
    before them is an auxiliary, not what the rows have."""
    if not _at(ls, i, "np"):
        return False
    last = ls[i].text.split()[-1].lower()
    return len(ls[i].text.split()) > 1 and (last in WORDS.agents or _past_participle([last], 0))


def _in_total(ls: Sequence[Lex], i: int, q: Question) -> bool:
    """'in total' said after a total is asked for: it adds nothing."""
    said = _is(ls, i, "agg", "SUM") and ls[i].text.lower() in WORDS.sets["sum_after"]
    counted = [m.func for m in q.measures] == ["count"] and not q.groups  # 'how many routes in total'
    return said and ([m.func for m in q.measures] == ["sum"] or counted)


def _top_after(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """TOP NUMBER FILLER* END after a ranking — 'which pools consumed the most CPU hours? top 5
    pls': how many of the ranked rows, said last; only in the ranking's own direction."""
    if q.ask != "rank" or q.order is None or q.limit is not None or not _at(ls, i, "top"):
        return None
    n = _number_at(ls, i + 1)
    if n is None or not isinstance(n.value, int) or (ls[i].arg == "desc") != q.order.desc:
        return None
    if _skip(ls, i + 2, "filler", "punct") != len(ls):
        return None
    return replace(q, limit=n.value, order=replace(q.order, ties=False)), i + 2


def _counted_after(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """END COUNT EXIST? FILLER* END? after rows listed — 'hosts with more than 100 cores - how many
    are there?', 'clients in Berlin: how many?': the rows described first, then counted; the
    count of those rows, as 'how many hosts have more than 100 cores'."""
    if q.ask != "list" or q.thing is None or q.measures or q.shown or q.groups or q.order or q.limit:
        return None
    if not (_is(ls, i, "punct", *_ENDS) and _at(ls, i + 1, "count")):
        return None
    j = _skip(ls, _skip(ls, i + 2, "exist"), "filler", "punct")
    if j != len(ls):
        return None
    measure = Measure("count", q.thing, hint=ls[i + 1].text.lower())
    return replace(q, ask="count", measures=(measure,)), j


def _said_back(ls: Sequence[Lex], i: int) -> bool:
    """The word points back at what is already named ('they', 'those', 'them') and ends the question."""
    said = i < len(ls) and ls[i].text.lower() in (*WORDS.sets["back"], "those", "these")
    return said and _skip(ls, i + 1, "filler", "punct") == len(ls)


def _group(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(GROUP | BY) DET? (NP (OF NP)?)? UNIT? | BUCKET — 'per segment', 'per month', 'per signup
    year', 'monthly', 'each type of food'"""
    if _at(ls, i, "bucket"):
        return replace(q, groups=(*q.groups, Group(unit=ls[i].arg))), i + 1
    if _at(ls, i, "np") and _at(ls, i + 1, "by") and _at(ls, i + 2, "np") and _same(ls[i], ls[i + 2]):
        return replace(q, groups=(*q.groups, Group(ls[i].phrase))), i + 3  # 'datacenter by datacenter'
    i = _linked_group(ls, i)
    if not _at(ls, i, "group", "by"):
        return None
    groups: list[Group] = []
    j = i
    while True:
        j = _skip(ls, j + 1, "det")
        by = ls[j].phrase if _at(ls, j, "np") else None
        j += by is not None
        if by is not None and _at(ls, j, "of") and _at(ls, j + 1, "np"):  # 'each type of food'
            by, j = Phrase(by.start, ls[j + 1].end, f"{by.text} of {ls[j + 1].text}"), j + 2
        unit = ls[j].arg if _at(ls, j, "unit") else ""
        j += bool(unit)
        if by is None and unit and _at(ls, j, "of") and _at(ls, _skip(ls, j + 1, "det"), "np"):
            j = _skip(ls, j + 1, "det")  # 'by year of settlement': the unit of the date named after it
            by, j = ls[j].phrase, j + 1
        if by is None and not unit:
            return None
        groups.append(Group(by, unit))
        if not (_at(ls, j, "and") and _at(ls, _skip(ls, j + 1, "det"), "np", "unit")):
            break  # 'by rank and sex': both
    return replace(q, groups=(*q.groups, *groups)), j


def _linked_group(ls: Sequence[Lex], i: int) -> int:
    """BE? VERB+ (WITH | PREP) before GROUP — 'papers associated with each dataset', 'keyphrases
    are linked to each paper': the verb only links the rows to what they are counted for; where
    the grouping starts (i when no such link is said). A verb with no preposition before a
    grouping ('signed up per month') is _event's: it names the date."""
    j = _skip(ls, i, "be")
    k = _skip(ls, j, "verb")
    if k > j and _at(ls, k, "with", "prep") and _at(ls, k + 1, "group"):
        return k + 1
    return i


def _same(a: Lex, b: Lex) -> bool:
    return a.text.lower() == b.text.lower()


def _window(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """DATE_PREP? DET? TIME | BETWEEN TIME AND TIME | OF DET? TIME NP — 'in Q4 2024', 'since
    2020', 'between 1960 and 1970', 'of the 2018 season', 'last 30 days'"""
    prep, j = "in", i
    if _at(ls, i, "date_prep"):
        prep, j = ls[i].arg, i + 1
    elif _is(ls, i, "prep") and ls[i].text.lower() in ("for", "within"):  # 'for 2024'
        j = i + 1
    elif _at(ls, i, "between"):
        low, high = ls[i + 1 : i + 2], ls[i + 3 : i + 4]
        if (
            low
            and high
            and _at(ls, i + 2, "and")
            and _is(ls, i + 1, "value", "year", "month", "date", "quarter")
            and _is(ls, i + 3, "value", "year", "month", "date", "quarter")
        ):
            window = Window(low[0].value, "between", high[0].value)  # type: ignore[arg-type]
            return replace(q, windows=(*q.windows, window)), i + 4
        return None
    elif _at(ls, i, "of"):
        j = _skip(ls, i + 1, "det")
        if _at(ls, j, "unit") and _is(ls, j + 1, "value", ls[j].arg):
            j += 1  # 'each month of the year 2021': the unit said before its value
        if _is(ls, j, "value", "year") and _at(ls, j + 1, "np"):
            window = Window(ls[j].value, "in", subject=ls[j + 1].phrase)  # type: ignore[arg-type]
            return replace(q, windows=(*q.windows, window)), j + 2
        if _is(ls, j, "value", "year", "quarter", "month"):  # 'each month of 2024'
            window, k = _or_later(ls, j + 1, Window(ls[j].value))  # type: ignore[arg-type]
            return replace(q, windows=(*q.windows, window)), k
        return None
    j = _skip(ls, j, "det")
    if not _at(ls, j, "value") or ls[j].value is None or not ls[j].value.is_time:  # type: ignore[union-attr]
        return None
    window, k = _or_later(ls, j + 1, Window(ls[j].value, prep))  # type: ignore[arg-type]
    return replace(q, windows=(*q.windows, window)), k


def _date_of(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(HAVE | WITH) DET? NP OF TIME (or later | or earlier)? — 'have an opening year of 2011 or
    later', 'with a founding year of 1990': the period said of the date the words name."""
    j = _skip(ls, i, "have", "with")
    if j == i:
        return None
    j = _skip(ls, j, "det")
    if not (
        _at(ls, j, "np")
        and _at(ls, j + 1, "of")
        and _is(ls, j + 2, "value", "year", "month", "date", "quarter")
    ):
        return None
    window, k = _or_later(ls, j + 3, Window(ls[j + 2].value, subject=ls[j].phrase))  # type: ignore[arg-type]
    return replace(q, windows=(*q.windows, window)), k


def _or_later(ls: Sequence[Lex], j: int, window: Window) -> tuple[Window, int]:
    """TIME DATE_PREP(since | until) — 'an opening year of 2011 or later', '2019 and earlier',
    '2020 onwards': said after the period, the period and everything after (before) it."""
    if window.prep != "in" or not _is(ls, j, "date_prep", "since", "until"):
        return window, j
    if _at(ls, _skip(ls, j + 1, "det"), "value"):
        return window, j  # '2020 from 2021 …': the word leads into a period of its own
    return replace(window, prep=ls[j].arg), j + 1


_LINKS = ("with", "have", "rel", "be", "aux", "list")


def _compare(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LINK* DET? NP? (CMP NUMBER | BETWEEN NUMBER AND NUMBER) (MUNIT | UNIT | NP)? | NUMBER CMP
    — 'with a salary over 115000', 'have age <= 17', 'are at least 19 years old', '5 or more'"""
    j = _skip(ls, i, *_LINKS)
    hint = ""
    while _at(ls, j, "verb"):  # 'earning between …', 'scored more than …'
        hint, j = ls[j].text.lower(), j + 1
    if (
        not hint and j == i and i > 0 and _at(ls, i - 1, "verb")
    ):  # the verb read before: 'how many … cost at least'
        hint = ls[i - 1].text.lower()
    j = _skip(ls, j, "det")
    subject = None
    if _at(ls, j, "np") and _at(ls, j + 1, "cmp", "between"):
        subject, j = ls[j].phrase, j + 1
    elif (
        _at(ls, j, "np") and _at(ls, j + 1, "of") and _at(ls, j + 2, "cmp")
    ):  # 'a rental duration of at least 7 days'
        subject, j = ls[j].phrase, j + 2
    op: Op
    upper = None
    said_unit = ""
    if _at(ls, j, "cmp") and _number_at(ls, j + 1) is not None:
        op, value, k = ls[j].arg, _number_at(ls, j + 1), j + 2  # type: ignore[assignment]
        if (
            ls[j].text.lower() not in ("=", "==", "!=", "<>", "≠", ">", "<", ">=", "<=", "≥", "≤")
            and not hint
        ):
            hint = ls[j].text.lower()  # 'older than', 'longer than': the word implies the column
    elif _at(ls, j, "between") and _number_at(ls, j + 1) and _at(ls, j + 2, "and") and _number_at(ls, j + 3):
        op, value, upper, k = "between", _number_at(ls, j + 1), _number_at(ls, j + 3), j + 4
    elif _number_at(ls, j) is not None and (after := _or_more(ls, j + 1)) is not None:
        said_unit, said, k = after  # '5 or more', '1024 GB of RAM or more'
        op, value, subject = ls[k - 1].arg, _number_at(ls, j), subject or said  # type: ignore[assignment]
    elif (
        subject is None
        and (hint or _had(ls, i, j))
        and _number_at(ls, j) is not None
        and _at(ls, j + 1, "np")
    ):
        op, value, k = "=", _number_at(ls, j), j + 1  # 'worth 4 credits', 'had 0 bikes available'
    elif subject is not None and _is(ls, j, "cmp", "=", "!=") and _at(ls, j + 1, "np"):
        cond = Condition(subject, cast(Op, ls[j].arg), ls[j + 1].phrase)  # 'rating != R'
        return replace(q, conditions=(*q.conditions, cond)), j + 2
    else:
        return None
    unit = said_unit
    if _at(ls, k, "munit", "unit") and not unit:
        unit, k = ls[k].text.lower(), k + 1
        if _at(ls, k, "np") and ls[k].end - ls[k].start == 1 and ls[k].text.lower() in ("old", "long"):
            unit, k = f"{unit} {ls[k].text.lower()}", k + 1  # 'years old', 'minutes long'
        elif _at(ls, k, "of") and _at(ls, k + 1, "np"):  # 'GB of RAM'
            subject, k = subject or ls[k + 1].phrase, k + 2
        elif subject is None and _at(ls, k, "np"):  # '2048 GB memory': the unit, then the column
            subject, k = ls[k].phrase, k + 1
    elif subject is None and _at(ls, k, "np"):  # 'between 32 and 48 cores', 'more than 25 points'
        subject, k = ls[k].phrase, k + 1
    cond = Condition(subject, op, value, upper, unit=unit, hint=hint)
    return replace(q, conditions=(*q.conditions, cond)), k


def _had(ls: Sequence[Lex], i: int, j: int) -> bool:
    """HAVE or WITH links the rows to a number said before what it counts ('stations that had 0
    bikes available', 'hosts with 64 cores'): the figure is that number."""
    return any(x.cat in ("have", "with") for x in ls[i:j])


def _or_more(ls: Sequence[Lex], i: int) -> tuple[str, Phrase | None, int] | None:
    """MUNIT? (OF? NP)? CMP(or more | or less | +) — what may follow a number whose comparison is
    said after it: the unit, the column and where the comparison ends"""
    unit = ls[i].text.lower() if _at(ls, i, "munit") else ""
    j = i + bool(unit)
    said = None
    k = j + (bool(unit) and _at(ls, j, "of"))
    if _at(ls, k, "np") and _is(ls, k + 1, "cmp"):
        said, j = ls[k].phrase, k + 1
    if _is(ls, j, "cmp") and ls[j].text.lower().startswith(("or ", "+")):
        return unit, said, j + 1
    return None


def _absent(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LINK* NEG(no | never | without | not) VERB? DET? NP — 'have no payments', 'without an email
    address', 'have never hosted a race', 'do not take part in any activity', 'not been returned'"""
    j = _skip(ls, i, "rel", "have", "aux", "list", "be")
    if not _at(ls, j, "neg") or ls[j].arg == "except":
        return None
    k = _skip(ls, j + 1, "be", "have", "verb", "prep", "date_prep", "det")
    if not _at(ls, k, "np"):
        return None
    plain_not = ls[j].text.lower() in ("not", "is not", "are not", "was not", "were not")
    said_any = any(x.cat == "det" and x.text.lower() == "any" for x in ls[j + 1 : k])
    if plain_not and (
        k == j + 1 or (any(x.cat in ("prep", "date_prep") for x in ls[j + 1 : k]) and not said_any)
    ):
        return None  # 'not active', 'not from the USA': a value, read by _is and _prep
    cond = Condition(
        ls[k].phrase, "absent", hint=" ".join(x.text.lower() for x in ls[j + 1 : k] if x.cat == "verb")
    )
    return replace(q, conditions=(*q.conditions, cond)), k + 1


def _is_value(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LINK* NEG? DET? NP — 'are churned', 'are not active', 'have the rank AsstProf', 'other than
    Berlin', 'with city code PIT', 'whose major = 600' is _compare's"""
    j = _skip(ls, i, "rel", "list", "be", "have", "with", "aux")
    negated = _at(ls, j, "neg")
    if negated and ls[j].arg == "without":
        return None
    j = _skip(ls, j + negated, "be", "det")
    share = any(m.func == "share" for m in q.measures)  # 'what percentage of payments in 2026 failed'
    if not _at(ls, j, "np") or (j == i and not negated and not share):
        return None
    op: Op = "!=" if negated else "="
    if _is(ls, j + 1, "np", "quoted") and ls[j].arg != "quoted":  # 'with the title "Dune"'
        cond = Condition(ls[j].phrase, op, ls[j + 1].phrase, prep=ls[i].text.lower())
        return replace(q, conditions=(*q.conditions, cond)), j + 2
    cond = Condition(None, op, ls[j].phrase, prep=ls[i].text.lower())
    return replace(q, conditions=(*q.conditions, cond)), j + 1


def _whose_either(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(WITH | REL) DET? NP BE NP (OR NP)+ — 'whose rank is Midshipman or Lieutenant', 'with a
    class of … or …' is _prep's: the column said, any one of the values."""
    j = _skip(ls, i, "with", "rel")
    if j == i:
        return None
    j = _skip(ls, j, "det")
    if not (_at(ls, j, "np") and _at(ls, j + 1, "be") and _at(ls, j + 2, "np") and _at(ls, j + 3, "or")):
        return None
    also: list[Phrase] = []
    k = j + 3
    while _at(ls, k, "or") and _at(ls, k + 1, "np"):
        also.append(ls[k + 1].phrase)
        k += 2
    if _at(ls, k, "or"):
        return None
    cond = Condition(ls[j].phrase, "=", ls[j + 2].phrase, prep=ls[i].text.lower(), also=tuple(also))
    return replace(q, conditions=(*q.conditions, cond)), k


def _prep(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LINK* VERB* NEG? (PREP | DATE_PREP | BY) DET? NP — 'in Berlin', 'live in Calgary', 'are from
    Germany', 'by AC/DC', 'not from the USA', 'supported by Jane Peacock', 'play Football'"""
    j = _skip(ls, i, "rel", "list", "be", "have", "aux")
    negated = _at(ls, j, "neg") and ls[j].arg != "without"
    j += negated
    verbs = j
    j = _skip(ls, j, "verb", "be")
    words = [x for x in ls[verbs:j] if x.cat == "verb"]
    j = _skip(ls, j, "neg")
    prep = ""
    if _at(ls, j, "prep", "date_prep", "by") or (words and _at(ls, j, "with")):
        prep, j = ls[j].text.lower(), j + 1  # 'in Berlin', 'associated with the keyphrase …'
    elif not words:
        return None
    got = _value_phrase(ls, j)
    if got is None:
        return None
    said = " ".join([*(x.text.lower() for x in words), prep]).strip()
    (subject, value), k = got
    also: list[Phrase] = []
    while _at(ls, k, "or") and isinstance(value, Phrase):  # 'from Aberdeen or from Denver'
        other = _np(ls, _skip(ls, k + 1, "prep", "date_prep", "be"))
        if other is None:
            return None
        also.append(other[0])
        k = other[1]
    cond = Condition(subject, "!=" if negated else "=", value, prep=said, also=tuple(also))
    return replace(q, conditions=(*q.conditions, cond)), k


def _value_phrase(ls: Sequence[Lex], i: int) -> tuple[tuple[Phrase | None, Phrase | Value], int] | None:
    """DET? NP (OF DET? NP | NUMBER | NAMING? QUOTED)? — 'Berlin', 'the state of CA', 'store 2',
    'the journal named "Nature"'"""
    got = _np(ls, i)
    if got is None:
        return None
    phrase, j = got
    if _at(ls, j, "of") and _at(ls, _skip(ls, j + 1, "det"), "np"):  # 'the state of CA'
        k = _skip(ls, j + 1, "det")
        return (phrase, ls[k].phrase), k + 1
    k = j + (_at(ls, j, "stop") and ls[j].text.lower() in WORDS.sets["naming"])
    if _is(ls, k, "np", "quoted") and ls[j - 1].arg != "quoted":  # 'the journal (named) "Nature"'
        return (phrase, ls[k].phrase), k + 1
    number = _number_at(ls, j)
    if number is not None:  # 'store 2'
        return (phrase, number), j + 1
    return (None, phrase), j


def _with(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(WITH | AND | ALONG WITH) (THEIR | ITS) (NP | COUNT NP | AGG NP) — 'with their titles':
    columns to show; 'list every segment with its number of clients': a figure for each row
    listed, which groups the figure by what is listed"""
    if (
        not _at(ls, i, "with", "and")
        or not _is(ls, i + 1, "det")
        or ls[i + 1].text.lower() not in WORDS.sets["possessives"]
    ):
        return None
    if _at(ls, i + 2, "np"):
        return replace(q, shown=(*q.shown, ls[i + 2].phrase)), i + 3
    got = _item(ls, i + 2)
    if got is None or not isinstance(got[0], Measure) or got[0].of is None:
        return None
    if q.ask != "list" or q.measures or q.groups or q.thing is None or q.shown:
        return None
    m = got[0]
    if m.func == "count":
        return replace(q, ask="count", thing=m.of, measures=(m,), groups=(Group(q.thing),)), got[1]
    return replace(q, ask="measure", thing=None, measures=(m,), groups=(Group(q.thing),)), got[1]


def _order(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """ORDER (DET RESULTS)? (BY)? DET? (key | UNIT) | ORDER? (DIR | ALPHA) — 'sorted by name', 'in
    descending order', 'ordered alphabetically', 'order the results by the region name'. A key
    'ranked by' (or an aggregate) with no direction after 'top N' ranks in the head's direction. An order
    said after a superlative lists every row in that order ('which lakes have the largest areas,
    ordered from largest to smallest')."""
    j = i + _at(ls, i, "order")
    if _at(ls, j, "dir", "alpha"):
        desc = ls[j].arg in ("desc", "old")
        if q.order is None:
            order = Order(None, desc, hint=ls[j].cat)
        else:
            order = replace(q.order, desc=desc, ties=q.order.ties and j == i and q.limit is None)
            if ls[j].arg in ("young", "old"):  # 'sorted by born, youngest first': said in ages
                order = replace(order, hint=ls[j].text.lower())
        return replace(q, order=order), j + 1
    if j == i:
        return None
    k = _skip(ls, j, "det")
    if _at(ls, k, "stop") and _at(ls, k + 1, "by"):
        j = k + 1  # 'order the results by …', 'sort them by …'
    j = _skip(ls, j, "by", "det")
    if _at(ls, j, "unit") and any(g.unit == ls[j].arg for g in q.groups):
        return q, j + 1  # 'per month …, ordered by the month': time groups come in time order
    key = _key(ls, j)
    if key is None and _at(ls, j, "verb") and j > i and ls[j - 1].cat == "order":
        key = ls[j].phrase, j + 1  # 'sorted by born': the date the verb names
    if key is None:
        return None
    # 'the top 10 pools ranked by CPU hours': the key of the head's ranking, in its direction;
    # 'top 5 clients sorted by name' only says how the five are shown
    ranks = ls[i].text.lower().split()[0] in WORDS.sets["rank_words"] or isinstance(key[0], Measure)
    # 'which authors wrote the most books, ordered by the number of books': the head's key said
    # again keeps the head's direction
    again = q.order is not None and q.order.key is not None and _key_words(q.order.key) == _key_words(key[0])
    desc = ranks and q.order is not None and (q.order.key is None or again) and q.order.desc
    return replace(q, order=Order(key[0], desc)), key[1]


def _key_words(key: Measure | Phrase) -> str:
    """The words a ranking key was said with ('books' for 'the most books' and 'the number of books')."""
    if isinstance(key, Phrase):
        return key.text.lower()
    return key.of.text.lower() if key.of is not None else key.hint


def _owner(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """AUX GROUP? DET? NP HAVE? — 'does each datacenter have' (one figure each), 'do students
    have', 'did customer MARY SMITH (make)' (whose rows)"""
    if not _at(ls, i, "aux"):
        return None
    each = _at(ls, i + 1, "group")
    got = _np(ls, i + 1 + each)
    if got is None:
        return None
    phrase, j = got
    j = _skip(ls, j, "have")
    if each:
        return replace(q, groups=(*q.groups, Group(phrase))), j
    return replace(q, conditions=(*q.conditions, Condition(None, "=", phrase, prep="of"))), j


_LAST_WORDS = {"last": True, "most recently": True, "latest": True, "first": False, "earliest": False}


def _ranked_after(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(REL | WH | WITH) link* DET SUPER key? after the rows listed — 'the authors who wrote the
    most papers', 'the business with the highest rating': those rows ranked, every row tied for
    first (as 'which authors wrote the most papers'). When what to show is said of one thing ('the
    title of the publication that has received the most citations') the answer is that one row,
    showing only what is asked: the figure that ranks is not asked for."""
    if q.ask != "list" or q.order is not None or q.limit is not None or q.thing is None:
        return None
    if q.conditions:  # 'which country has the airport with the highest elevation': the airport is ranked
        return None
    if not (_at(ls, i, "rel", "with") or _is(ls, i, "list", "wh")):
        return None
    ranked = _ranked(ls, _skip(ls, i, "rel", "list"))
    if ranked is None:
        return None
    if _every_column(q.shown):
        return None  # 'all details of the airport with …': every column, which no rule reads yet
    if q.only_shown and _singular(q.thing.text):  # 'the title of the publication that …': the one
        return replace(q, ask="rank", order=ranked[0], limit=1), ranked[1]
    return replace(q, ask="rank", order=replace(ranked[0], ties=True)), ranked[1]


def _every_column(shown: Sequence[object]) -> bool:
    """What to show is every column ('details', 'info' said after 'all'): no rule reads that yet."""
    every = WORDS.sets["every_column"]
    return any(isinstance(x, Phrase) and set(x.text.lower().split()) <= every for x in shown)


def _singular(words: str) -> bool:
    """The phrase's last word is no plural ('publication', 'business'; not 'papers')."""
    last = words.lower().split()[-1]
    return singular(last) == last


def _asked_again(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """AND COUNT NP (AUX | HAVE | BE)* BACK ('/' BACK)? (HAVE | VERB)* (THAT UNIT)? END — 'which
    author had the most books in 2021 and how many books did he/she have that year': the figure
    that ranks asked for again, which a ranking shows; 'which users posted reviews … and how many
    reviews have they posted': one count for each row listed."""
    if not (_at(ls, i, "and") and _at(ls, i + 1, "count") and _at(ls, i + 2, "np")):
        return None
    j = _skip(ls, i + 3, "aux", "have", "be")
    if not _back(ls, j):
        return None
    j += 1
    if _is(ls, j, "group") and ls[j].text == "/" and _back(ls, j + 1):
        j += 2  # 'he/she'
    j = _skip(ls, j, "have", "verb")
    if q.windows and _at(ls, j, "rel") and _at(ls, j + 1, "unit"):
        j += 2  # 'that year': the period already said
    if _skip(ls, j, "punct", "filler") != len(ls):
        return None
    counted = ls[i + 2].phrase
    if q.ask == "rank" and q.order is not None and q.order.key is not None:
        # asked for: shown, even where only what was named would be ('the name of the instructor …')
        return (replace(q, only_shown=False), j) if _key_words(q.order.key) == counted.text.lower() else None
    if q.ask == "list" and q.thing is not None and not (q.measures or q.groups or q.shown):
        measure = Measure("count", counted)
        return replace(q, ask="count", thing=counted, measures=(measure,), groups=(Group(q.thing),)), j
    return None


def _back(ls: Sequence[Lex], i: int) -> bool:
    """A word that points back at a thing already named ('they', 'he', 'she')."""
    return i < len(ls) and ls[i].text.lower() in WORDS.sets["back"]


def _text_in(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """WITH? QUOTED TEXT(in its name | in the title …) | TEXT QUOTED — 'the journal with "IEEE
    Transactions" in its name', 'clients whose names start with "Ha"': part of a stored name,
    the words quoted as said."""
    j = i + _at(ls, i, "with")
    if (
        _is(ls, j, "np", "quoted")
        and _is(ls, j + 1, "text", "contains")
        and " ".join(ls[j + 1].text.lower().split()) in WORDS.sets["contains_after"]
    ):
        cond = Condition(None, "contains", ls[j].phrase)
        return replace(q, conditions=(*q.conditions, cond)), j + 2
    if _at(ls, i, "text") and _is(ls, i + 1, "np", "quoted"):
        cond = Condition(None, cast(Op, ls[i].arg), ls[i + 1].phrase)
        return replace(q, conditions=(*q.conditions, cond)), i + 2
    return None


def _text_said(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(WITH | HAVE | REL)? (DET? NP)? TEXT NP | HAVE NP TEXT(in the name …) — 'names containing
    Digital', 'with names starting with Orbit', 'whose title ends with Night', 'which lenses have
    Digital in the name': part of a stored text, the words after the cue as said (unquoted; the
    quoted form is _text_in's). A column said before the cue ('names') is the one matched."""
    j = _skip(ls, i, "with", "have", "rel")
    k = _skip(ls, j, "det")
    subject = None
    if _at(ls, k, "np") and _at(ls, k + 1, "text"):
        subject, k = ls[k].phrase, k + 1
    elif _at(ls, k, "text"):
        pass
    else:
        k = -1
    if k >= 0 and _is(ls, k + 1, "np") and not _is(ls, k + 1, "np", "quoted"):
        cond = Condition(subject, cast(Op, ls[k].arg), ls[k + 1].phrase)
        return replace(q, conditions=(*q.conditions, cond)), k + 2
    if (
        j > i
        and _at(ls, j, "np")
        and _is(ls, j + 1, "text", "contains")
        and " ".join(ls[j + 1].text.lower().split()) in WORDS.sets["contains_after"]
    ):
        cond = Condition(None, "contains", ls[j].phrase)
        return replace(q, conditions=(*q.conditions, cond)), j + 2
    return None


def _said_last(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """BE? (VERB | NP)+ (PREP NP)? (LAST | FIRST | MOST RECENTLY) (END | PREP …) — 'which machine
    … was installed last', 'which host went into service last', 'which host was commissioned
    most recently in X': the rows ranked by the date the words name, every row tied for first"""
    if q.ask != "list" or q.order is not None or q.thing is None or q.limit is not None:
        return None
    j = _skip(ls, _skip(ls, i, "rel"), "be", "aux")  # 'the branch that opened earliest'
    k = _skip(ls, j, "verb", "np")
    if k == j or (k == j + 1 and ls[j].end - ls[j].start > 2):
        return None
    if _at(ls, k, "prep", "date_prep") and _at(ls, k + 1, "np"):
        k += 2  # 'into service'
    last = ls[k].text.lower() if _at(ls, k, "relative", "top", "super") else ""
    ends = _skip(ls, k + 1, "punct", "filler") == len(ls) or _is(ls, k + 1, "punct", *_ENDS)
    if last not in _LAST_WORDS or not (ends or _at(ls, k + 1, "prep", "date_prep")):
        return None  # a place may follow: 'was commissioned most recently in prod-london-1'
    said = " ".join(x.text.lower() for x in ls[j:k])
    desc = _LAST_WORDS[last]
    order = Order(None, desc, hint=f"{'latest' if desc else 'earliest'} {said}", ties=True)
    return replace(q, ask="rank", order=order), k + 1


def _we_did(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """AUX FILLER+ (VERB | WORD) — 'did we charge', 'have you billed': what we did to the rows,
    said of no one in the data; the verb may name their date"""
    j = _skip(ls, i + 1, "filler") if _at(ls, i, "aux", "have") else i
    if j == i + 1 or j == i:
        return None
    if not (_at(ls, j, "verb") or (_at(ls, j, "np") and ls[j].end - ls[j].start == 1)):
        return None
    return replace(q, verbs=(*q.verbs, ls[j].phrase)), j + 1


def _event(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(BE | HAVE)* VERB+ before a period, a grouping, a ranking or the end — 'were made in Q4
    2024', 'signed up per month', 'took place in July 2016', 'ever held': the verb says the rows
    happened; said before a period it names the date ('signed up' → the signup date)"""
    j = _skip(ls, _skip(ls, i, "rel", "list"), "be", "have", "exist", "filler")
    k = _skip(ls, j, "verb")
    if k == j and j > i and ls[j - 1].cat == "be" and _window(ls, _participle(ls, j), q) is not None:
        k = _participle(ls, j)  # 'were predicted to graduate in …': said before a period, a verb
    k = _skip(ls, k, "filler") if k > j and _skip(ls, k, "filler", "punct") == len(ls) else k
    if k == j or (j > i and ls[i].cat == "list" and ls[i].arg != "wh"):
        return None
    verbs = Phrase(ls[j].start, ls[k - 1].end, " ".join(x.text for x in ls[j:k]))
    nxt = _window(ls, k, q)
    if nxt is not None:
        window = replace(nxt[0].windows[-1], subject=verbs)
        return replace(q, windows=(*q.windows, window)), nxt[1]
    agent = _at(ls, k, "by") and not _at(ls, _skip(ls, k + 1, "det"), "unit")
    ends = k == len(ls) or _in_total(ls, k, q)  # 'did they rack up in total'
    if ends or (_at(ls, k, "group", "by", "punct", "bucket", "between") and not agent):
        return replace(q, verbs=(*q.verbs, verbs)), k  # 'taken by students' is whose, not a grouping
    return None


def _participle(ls: Sequence[Lex], j: int) -> int:
    """VERB+ | PARTICIPLE (TO WORD)? — after 'were' and before a period: 'were predicted to
    graduate in …', 'are expected to close by …': a participle the lexicon does not list is a
    verb all the same, naming what happened to the rows and so their date. Said with no period
    ('lessons that were cancelled') it stays a value ('Cancelled'): the caller checks."""
    k = _skip(ls, j, "verb")
    if k > j or not _one_word(ls, j) or not ls[j].text.lower().endswith("ed"):
        return k
    if _is(ls, j + 1, "prep") and ls[j + 1].text.lower() == "to" and _one_word(ls, j + 2):
        return j + 3  # 'predicted to graduate'
    return j + 1


def _one_word(ls: Sequence[Lex], i: int) -> bool:
    return _is(ls, i, "np", "") and ls[i].end - ls[i].start == 1


_ENDS = frozenset(["?", ".", "!", ";", ":", "-", "–", "—"])
MONEY_UNITS = WORDS.sets["money_units"]


def _show(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """END (LIST | FILLER)* BOTH? items — '…? just names', '… - show the country and the average',
    '…: club id, club name and number of coaches': what to show, said after the question"""
    if not (_at(ls, i, "punct") and ls[i].arg in _ENDS):
        return None
    j = _skip(ls, i + 1, "list", "filler", "punct")
    j += _at(ls, j, "unsupported") and ls[j].text.lower() == "both"  # 'give both names and …'
    found, k = _items(ls, j)
    k = _skip(ls, k, "filler")  # '… - name and date please'
    if not found or (k < len(ls) and not _at(ls, k, "punct")):
        return None
    return replace(q, shown=(*q.shown, *found)), k


def _direction(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """FROM DET? SUPER TO DET? SUPER NP? | DIR UNIT? TO DET? SUPER | SUPER NP FIRST — 'from
    lightest to heaviest tonnage', 'from the most recent year to the oldest', 'highest profits first'"""
    if _is(ls, i, "date_prep", "since") and _at(ls, _skip(ls, i + 1, "det"), "super"):
        j = _skip(ls, i + 1, "det")
        k = _skip(ls, j + 1, "prep", "det")
        if _at(ls, k, "super") and k > j + 1:
            key = ls[k + 1].phrase if _at(ls, k + 1, "np") else None
            order = Order(key, ls[j].arg == "desc", hint=ls[j].text.lower())
            return replace(q, order=order), k + 1 + (key is not None)
    if (
        _at(ls, i, "dir")
        and _at(ls, i + 1, "unit", "np")
        and _at(ls, i + 2, "prep")
        and _at(ls, _skip(ls, i + 3, "det"), "super")
    ):
        key = ls[i + 1].phrase
        return replace(q, order=Order(key, ls[i].arg in ("desc", "old"))), _skip(ls, i + 3, "det") + 1
    if (
        _at(ls, i, "super")
        and _at(ls, i + 1, "np")
        and _is(ls, i + 2, "top", "asc")
        and ls[i + 2].text.lower() == "first"
    ):
        return replace(q, order=Order(ls[i + 1].phrase, ls[i].arg == "desc")), i + 3
    return None


def _from_to(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """ORDER? FROM DIR NP? | ORDER? FROM SUPER NP (TO | PREP) DET? SUPER — 'sorted by number of
    hosts from fewest to most', 'sort from fewest to most stations', 'sorted from fewest cards to
    most': the direction said from one end to the other; the key said inside it or after it, else
    the one already said ('sorted by …'), else what the superlative implies."""
    if _at(ls, i, "order"):
        got = _direction(ls, i + 1, q)  # 'ordered from the earliest created to the latest'
        if got is not None:
            return got
    j = i + _at(ls, i, "order")
    if not (_is(ls, j, "date_prep", "since") and ls[j].text.lower() in WORDS.sets["range_starts"]):
        return None
    if _at(ls, j + 1, "dir") and ls[j + 1].arg in ("asc", "desc"):
        desc = ls[j + 1].arg == "desc"
        k = j + 2
        key: Phrase | Measure | None = _said_again_as(q, ls[k].phrase) if _at(ls, k, "np") else None
        if key is not None:
            k += 1
        elif q.order is not None:
            key = q.order.key
        hint = q.order.hint if q.order is not None and key is None else ""
        return replace(q, order=Order(key, desc, hint=hint)), k
    if _at(ls, j + 1, "super") and _at(ls, j + 2, "np") and _at(ls, j + 3, "prep"):
        k = _skip(ls, j + 4, "det")
        if _at(ls, k, "super") and ls[k].arg != ls[j + 1].arg:
            key = _said_again_as(q, ls[j + 2].phrase)
            order = Order(key, ls[j + 1].arg == "desc", hint=ls[j + 1].text.lower())
            return replace(q, order=order), k + 1
    return None


def _said_again_as(q: Question, key: Phrase) -> Phrase | Measure:
    """The measure already asked for when the key says its words again ('how many stations …,
    sort from fewest to most stations': by that count), else the key as said."""
    for m in q.measures:
        if m.of is not None and singular(m.of.text.lower()) == singular(key.text.lower()):
            return m
    return key


def _and(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """AND — between two modifiers ('in Berlin and active')"""
    return (q, i + 1) if _at(ls, i, "and") and i + 1 < len(ls) else None


def _in_count(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LINK* VERB* DATE_PREP(in | on) compare — 'products that are in 2+ events', 'actors who
    appear in more than 3 films': how many of the other rows they are in, compared (as 'with more
    than 3 films')"""
    j = _skip(ls, i, *_LINKS)
    k = _skip(ls, j, "verb")
    if not _is(ls, k, "date_prep", "in", "on") or _number_at(ls, _skip(ls, k + 1, "cmp")) is None:
        return None
    got = _compare(ls, k + 1, q)
    if got is None or len(got[0].conditions) != len(q.conditions) + 1:
        return None
    cond = got[0].conditions[-1]
    if cond.subject is None or cond.unit or cond.op == "=" or cond.upper is not None:
        return None
    hint = " ".join(x.text.lower() for x in ls[j:k]) or cond.hint
    return replace(got[0], conditions=(*q.conditions, replace(cond, hint=hint))), got[1]


def _dir_alpha(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """DATE_PREP(in)? DIR ALPHA — 'in descending alphabetical order', 'ascending alphabetically':
    the alphabetical order, in the direction said"""
    j = i + _is(ls, i, "date_prep", "in")
    if not (_at(ls, j, "dir") and _at(ls, j + 1, "alpha")) or ls[j].arg not in ("asc", "desc"):
        return None
    return replace(q, order=Order(None, ls[j].arg == "desc", hint="alpha")), j + 2


def _named(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """(REL BE?)? NAMING NP — 'the product named catnip', 'a student called Linda': the row whose
    name is what follows (a quoted name is _value_phrase's)"""
    j = _skip(ls, i, "rel", "be")
    if not (_is(ls, j, "stop") and ls[j].text.lower() in WORDS.sets["naming"] and _is(ls, j + 1, "np", "")):
        return None
    cond = Condition(None, "=", ls[j + 1].phrase, prep=ls[j].text.lower())
    return replace(q, conditions=(*q.conditions, cond)), j + 2


MODIFIERS: tuple[Rule, ...] = (
    _in_count,
    _dir_alpha,
    _named,
    _top_after,
    _counted_after,
    _show,
    _direction,
    _from_to,
    _distinct_after,
    _skipped,
    _group,
    _window,
    _said_last,
    _ranked_after,
    _asked_again,
    _text_in,
    _text_said,
    _event,
    _we_did,
    _owner,
    _date_of,
    _compare,
    _absent,
    _with,
    _whose_either,
    _prep,
    _is_value,
    _order,
    _and,
)
_TEXT_BETWEEN = (
    _text_in,
    _compare,
    _absent,
    _and,
)  # what may say which rows between a noun and its preposition


# -- a follow-up: what it changes in the last question -------------------------------------------


def _bare(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """DET? (TIME | NP) — said alone in a follow-up, a period or a value: 'what about 2024?',
    'and only the failed ones?', 'France?'"""
    j = _skip(ls, i, "det")
    value = ls[j].value if _at(ls, j, "value") else None
    if value is not None and value.is_time:
        return replace(q, windows=(*q.windows, Window(value))), j + 1
    if _at(ls, j, "np"):
        return replace(q, conditions=(*q.conditions, Condition(None, "=", ls[j].phrase))), j + 1
    return None


def _continuing(ls: Sequence[Lex], i: int, q: Question) -> Step | None:
    """LIST | DET(those) | FOLLOW_ON | POINTING — words inside a follow-up that only say it
    continues the last answer ('now show only those with …')"""
    said = ls[i].text.lower() in WORDS.sets["follow_on"] | WORDS.sets["pointing"]
    return (q, i + 1) if _at(ls, i, "list") or said else None


CHANGES: tuple[Rule, ...] = (
    _continuing,
    _skipped,
    _group,
    _window,
    _compare,
    _absent,
    _with,
    _prep,
    _is_value,
    _bare,
)


def change(ls: Sequence[Lex]) -> Question | None:
    """(window | group | compare | absent | with | prep | is | bare)+ END — what a follow-up in a
    thread changes in the last question: its filters, its period, its grouping ('in Germany',
    '2024', 'per country', 'the failed ones'). None when a word asks for anything else (a
    ranking, another measure): such a change needs an LLM."""
    q = _placed(ls, 0, Question("list"), CHANGES)
    return q if q is not None and (q.conditions or q.windows or q.groups) else None


# ---------------------------------------------------------------------------------------------
# reading a question


@dataclass(frozen=True)
class Reading:
    """A question read: its tokens, the lexemes the trees were built from, and the trees the
    grammar places every word in (none: the question is not read)."""

    question: str
    tokens: tuple[Token, ...]
    lexemes: tuple[Lex, ...]
    trees: tuple[Question, ...] = ()

    @property
    def tree(self) -> Question | None:
        return self.trees[0] if self.trees else None

    def with_tree(self, tree: Question) -> Reading:
        return replace(self, trees=(tree,))


_ACRONYM = re.compile(r"^[A-Z]{2,6}s?$")


def spelled_out(tokens: Sequence[Token], names: Names) -> tuple[Token, ...]:
    """Words typed in capitals that are no stored value or name as typed but stand for one column
    ('the average GPA' → total_gpa): read as that column's words. Why: people shorten a column
    to its initials or to its one telling word, and the schema's names — not a list of
    abbreviations kept for each database — say which column that is."""
    out: list[Token] = []
    for t in tokens:
        if t.kind == "word" and _ACRONYM.match(t.text) and t.low not in WORDS.spellings.values():
            bare = t.low[:-1] if t.text.endswith("s") and not t.text.isupper() else t.low
            words = "" if names.spells(t.low) else names.acronym(bare)
            if words:
                t = replace(t, low=words)
        out.append(t)
    return tuple(out)


def read(question: str, names: Names | None = None) -> Reading:
    """The question's trees: those of the first reading of its words that the grammar places
    whole, then those of the readings after it (a cue word taken as the name it spells: 'the
    shortest minimum connect time'), for the binding pass to try when the first ones do not bind.
    Every tree is over the same tokens, so one Reading carries them all."""
    tokens = spelled_out(tokenize(question), names or NoNames())
    first: list[Lex] | None = None
    placed: list[Lex] | None = None
    found: list[Question] = []
    for reading in lexemes(tokens, names or NoNames()):
        first = first or reading
        more = [t for t in trees(reading) if t not in found]
        if more and placed is None:
            placed = reading
        found += more
    return Reading(question, tokens, tuple(placed or first or ()), tuple(found))


def _said_to_continue(tokens: Sequence[Token]) -> tuple[int, int]:
    """[start, end) of the tokens left when the words that only say 'this continues the last
    answer' are taken off both ends ('and only those', 'what about', '… instead?')."""
    on, pointing = WORDS.sets["follow_on"], WORDS.sets["pointing"]
    a, b = 0, len(tokens)
    while a < b and (tokens[a].kind == "punct" or tokens[a].low in on | pointing or _leads_in(tokens, a)):
        a += 1
    while b > a and (tokens[b - 1].kind == "punct" or tokens[b - 1].low in on | pointing):
        b -= 1
    return a, b


def _leads_in(tokens: Sequence[Token], i: int) -> bool:
    """'what about', 'how about': the question word only leads into the change."""
    pair = " ".join(t.low for t in tokens[i : i + 2])
    return pair in WORDS.sets["follow_on_leads"]


def continues(question: str) -> bool:
    """The message says it continues the last answer: it starts with a follow-on word ('and only
    …', 'what about …') or points at the last answer's rows ('those', 'the failed ones')."""
    tokens = tokenize(question)
    words = [t for t in tokens if t.kind == "word"]
    pointing = WORDS.sets["pointing"]
    said_on = bool(words) and (words[0].low in WORDS.sets["follow_on"] or _leads_in(words, 0))
    return said_on or any(t.low in pointing for t in words)


def read_change(question: str, names: Names | None = None) -> Reading:
    """A follow-up read as a change to the last question: its one tree (if any) holds only the
    conditions, periods and groupings it says, over the words left when those that only say
    'this continues' are taken off."""
    names = names or NoNames()
    tokens = tokenize(question)
    a, b = _said_to_continue(tokens)
    core = question[tokens[a].start : tokens[b - 1].end] if a < b else ""
    tokens = list(spelled_out(tokenize(core), names))
    first: list[Lex] | None = None
    for ls in lexemes(tokens, names):
        first = first or ls
        tree = change(ls)
        if tree is not None:
            return Reading(core, tuple(tokens), tuple(ls), (tree,))
    return Reading(core, tuple(tokens), tuple(first or ()), ())
