"""Recognise the shape of a question from its wording: cue phrases, literals and content words.

Keyword mode has no LLM to read the question, so the words that carry SQL structure are found
by a small lexicon — "how many" (COUNT), "average" (AVG), "per" (GROUP BY), "top 5" (ORDER BY …
LIMIT 5), "more than" (>), "in 2024" (a date range), "list" (show names) — and everything else is
content: words to find in the schema and in the stored values (core/keyword/match.py).

Cue words that Askbase cannot turn into SQL without guessing ("ratio", "not", "median", "both")
are recognised too, so the question is declined with the reason instead of answered wrongly.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from core.dictionary import stem
from core.keyword.grammar import Token, tokenize
from core.keyword.lexicon import FIRST_READER, GRAMMAR_KINDS, WORDS

CueKind = Literal[
    "count",  # how many, number of
    "agg",  # average, total, minimum, maximum   (arg: AVG | SUM | MIN | MAX)
    "super",  # highest, most, earliest           (arg: "desc" | "asc", the adjective)
    "top",  # top, bottom, first                 (arg: "desc" | "asc")
    "group",  # per, each, for each, by X
    "by",  # by: group, ranking measure or a relation, decided in context
    "order",  # ordered by, sorted by
    "dir",  # descending, from highest to lowest (arg: "desc" | "asc")
    "alpha",  # alphabetically
    "cmp",  # more than, at least, >             (arg: > >= < <= =)
    "between",  # between … and …
    "date_prep",  # in, during, before, after, since, until, on   (arg: the preposition)
    "relative",  # last N days, this year         (arg: resolved later)
    "list",  # list, show, which, what
    "distinct",  # distinct, unique, different
    "text",  # starting with, containing, ending with  (arg: prefix | contains | suffix)
    "bucket",  # per month, by year, monthly, which month (arg: year | quarter | month | week | day)
    "or",
    "and",
    "unsupported",  # arg: why keyword mode cannot answer it
]


@dataclass(frozen=True)
class Cue:
    kind: CueKind
    arg: str
    start: int  # token index of the first word
    end: int  # token index after the last word
    words: str  # as typed


@dataclass(frozen=True)
class Literal_:
    """A number, date, year, month or quoted text of the question."""

    kind: Literal["number", "year", "month", "quarter", "date", "quoted", "period"]
    # number: int | float; year: int; month: (year | None, month); quarter: (year | None, 1..4);
    # date: dt.date; quoted: str;
    # period: (unit, offset, length) — offset<0,length 0: the last |offset| units up to today;
    # otherwise the calendar unit `offset` away from the current one (0 this, -1 last)
    value: Any
    start: int
    end: int
    words: str


class _Words:
    """Lookups shared by the finished Shape and the draft it is built from."""

    question: str
    tokens: Sequence[Token]
    cues: Sequence[Cue]
    literals: Sequence[Literal_]
    role: Sequence[str]

    def content_runs(self) -> list[tuple[int, int]]:
        """Maximal runs of content tokens, as (start, end) token indices."""
        runs: list[tuple[int, int]] = []
        i = 0
        while i < len(self.tokens):
            if self.role[i] == "content":
                j = i
                while j < len(self.tokens) and self.role[j] == "content":
                    j += 1
                runs.append((i, j))
                i = j
            else:
                i += 1
        return runs

    def text(self, start: int, end: int) -> str:
        if start >= end:
            return ""
        return self.question[self.tokens[start].start : self.tokens[end - 1].end]

    def after_order_cue(self, start: int) -> bool:
        """The words at `start` come right after 'ordered by' ('sorted by the highest salary',
        'ordered by their highest …'), with only an article or a possessive between."""
        j = start
        while j > 0 and self.tokens[j - 1].low in ("the", "their", "its", "his", "her"):
            j -= 1
        return any(c.kind == "order" and c.end == j for c in self.cues)

    def cue_at(self, i: int) -> Cue | None:
        return next((c for c in self.cues if c.start <= i < c.end), None)

    def literal_at(self, i: int) -> Literal_ | None:
        return next((lit for lit in self.literals if lit.start <= i < lit.end), None)


@dataclass(frozen=True)
class Shape(_Words):
    """The question as tokens, with cue phrases and literals found and the rest left as content."""

    question: str
    tokens: tuple[Token, ...]
    cues: tuple[Cue, ...] = ()
    literals: tuple[Literal_, ...] = ()
    role: tuple[str, ...] = ()  # per token: cue | literal | stop | content


@dataclass
class _Draft(_Words):
    """The Shape while read_shape finds its cues and literals (local to one call)."""

    question: str
    tokens: list[Token]
    cues: list[Cue] = field(default_factory=list)
    literals: list[Literal_] = field(default_factory=list)
    role: list[str] = field(default_factory=list)

    def freeze(self) -> Shape:
        return Shape(
            self.question, tuple(self.tokens), tuple(self.cues), tuple(self.literals), tuple(self.role)
        )


# ---------------------------------------------------------------------------------------------
# tokens

# ---------------------------------------------------------------------------------------------
# the lexicon

# The cue phrases, each with its kind and argument (core/keyword/lexicon.yaml, `cues`).
# (phrases the grammar reads that this reader never did: it reads them word by word)
_GRAMMAR_ONLY = frozenset(
    [
        ("first",),
        *(tuple(p.split()) for p in ("had no", "has not", "have not", "was not", "were not", "%", "/")),
        *(tuple(p.split()) for p in ("divided by", "over the whole of", "for the whole of", "throughout")),
        *(tuple(p.split()) for p in ("in the whole of", "for all of", "most valuable", "most popular")),
        *(tuple(p.split()) for p in ("least valuable", "least popular")),
        *(("what", w, "of") for w in ("%", "percent", "percentage", "share", "proportion", "fraction")),
    ]
)
CUES: dict[tuple[str, ...], tuple[CueKind, str]] = {
    k: (cast(CueKind, kind), "" if kind == "list" else arg)
    for k, (kind, arg) in ((k, FIRST_READER.get(kind, (kind, arg))) for k, (kind, arg) in WORDS.cues.items())
    if kind not in GRAMMAR_KINDS and k not in _GRAMMAR_ONLY
}
TEMPORAL_ADJ = frozenset(
    ["latest", "newest", "earliest", "oldest", "most recent", "most recently", "least recent", "youngest"]
)
LATER_ADJ = frozenset(["latest", "newest", "most recent", "most recently", "youngest"])  # latest date first
# Words that say how recent a row is: placed by the question's date ('new clients per month').
RECENT_WORDS = frozenset(["new", "newly", "recent", "recently"])
# 'the lowest paid employees': ranked by the salary (ranking.IMPLIED)
PAID = ("highest paid", "best paid", "top paid", "most paid", "lowest paid", "worst paid", "least paid")
# 'the most common status': the value most rows have (walk._column_mention)
MODE_CUES = frozenset(["most common", "most frequent", "least common", "least frequent"])
# comparisons said after their number ('5 or more', '2011 or later', '1990 onwards')
POSTFIX = frozenset(
    [
        *("+", "or more", "or less", "or fewer", "or above", "or higher", "or over", "or greater"),
        *("or later", "and later", "onwards", "or more recently", "or earlier", "and earlier"),
    ]
)
# said after the words ('Digital in the name'): walk reads it with the value before it
NAME_SUFFIXES = (
    "in the name",
    "in their name",
    "in its name",
    "in the names",
    "in their names",
    "in the title",
)

# 'across' takes in every row it names ('total stock across markets', 'across all projects',
# 'the average rent across their addresses'), unless it is said to vary (_across_groups).
WHOLE_SCOPE = frozenset(
    [
        ("across", "all"),
        ("across", "the"),  # 'how many students are enrolled across the classes': all of them
        ("across", "the", "whole"),
        ("across", "the", "entire"),
        *(("across", w) for w in ("their", "its", "his", "her")),
    ]
)

# 'how does it vary across different courses', 'sales across each region': one figure each.
# Otherwise 'across' says what a figure is taken over ('total stock across markets').
ACROSS_EACH = frozenset(["different", "each", "every", "various", "individual"])
VARIES = frozenset(["vary", "varies", "differ", "differs", "breakdown", "broken", "split", "compare"])


def _across_groups(lows: list[str], i: int) -> bool:
    return (i + 1 < len(lows) and lows[i + 1] in ACROSS_EACH) or bool(VARIES & set(lows[:i]))


MAX_CUE_WORDS = max(len(k) for k in CUES)


# Comparatives left over once 'more than 3', 'or less' and the like are read as comparisons.
COMPARATIVES = frozenset(["more", "fewer", "less", "than"])


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# 'employees making more than 30k', 'who earn over 50000': an amount of money (filters.compare)
PAY_VERBS = _words("making make makes earning earn earns paid pays paying costing cost costs")
# words before the name a sentence starts with ('distinct product names', '…? just the names')
LEAD_WORDS = _words("the all a an just only their its distinct unique different")
# Words that carry no meaning for the query, and nouns for a row or the data itself ('catalog
# entry', 'all information'): dropped like stop words, but they end no noun phrase — 'the catalog
# entry' is not the catalog (core/keyword/lexicon.yaml, `words`).
ROW_NOUNS = WORDS.sets["row_nouns"]
STOP = WORDS.sets["stop"] | ROW_NOUNS

# 'all information about …', 'all the details of …': every column of the thing (output.py).
EVERYTHING = (
    ("all", "information"),
    ("all", "the", "information"),
    ("all", "info"),
    ("all", "the", "info"),
    ("all", "the", "data"),
    ("all", "details"),
    ("all", "the", "details"),
    ("all", "columns"),
    ("everything",),
    ("all", "attributes"),
)


# 'all course info', 'all the student data': the thing's name is said between. Not 'details',
# which Spider-style schemas keep as a column ('all customer details' is customer_details).
# 'info' and 'data' are row nouns (ROW_NOUNS), never matched to a column such as customer_info.
EVERYTHING_AFTER = frozenset(["info", "information", "data"])


def everything_at(shape: Shape) -> frozenset[int]:
    """The token positions of the phrases that ask for every column ('all the details of')."""
    lows = [t.low for t in shape.tokens]
    at = {
        k
        for p in EVERYTHING
        for i in range(len(lows))
        if tuple(lows[i : i + len(p)]) == p
        for k in range(i, i + len(p))
    }
    for i, low in enumerate(lows):
        if low != "all":
            continue
        start = i + 2 if lows[i + 1 : i + 2] == ["the"] else i + 1
        for end in (start + 1, start + 2):  # one or two words name the thing
            between = lows[start:end]
            if end < len(lows) and lows[end] in EVERYTHING_AFTER and not set(between) & STOP:
                at |= {*range(i, start), end}
    return frozenset(at)


# Relational verbs link the things a question names without restricting them; fillers name no
# restriction ('what kind of', 'overall'); units of the numbers a question compares are said of a
# column, never a restriction of their own; 'who wrote the book' asks for its writer, the column
# named for who does it (core/keyword/lexicon.yaml: `words`, `agents`).
RELATION_VERBS = WORDS.sets["relation_verbs"]
FILLERS = WORDS.sets["fillers"]
AGENT_NOUNS = dict(WORDS.agents)
MEASURE_UNITS = WORDS.sets["measure_units"]
GLUE = RELATION_VERBS | FILLERS | MEASURE_UNITS
# a dash too: "ships with no captain - name and class" asks for what to show after it
SENTENCE_ENDS = frozenset([".", "?", "!", ";", ":", "-", "–", "—"])

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
MONTHS.update({m.lower(): i for i, m in enumerate(calendar.month_abbr) if m})
MONTHS.pop("may", None)  # 'may' as a month only next to a year or after 'in'
UNITS = dict(WORDS.time_units)
# Time buckets: 'per month', 'by year', 'each week', 'which month' group by a calendar unit of a date.
BUCKET_UNITS = {"year": "year", "quarter": "quarter", "month": "month", "week": "week", "day": "day"}
BUCKET_ADVERBS = dict(WORDS.buckets)
WORD_NUMBERS = dict(WORDS.numbers)


# ---------------------------------------------------------------------------------------------
# nouns


def is_generic(words: str) -> bool:
    """'name', 'id', 'code': a word that needs the noun before it."""
    return words.lower().strip() in (
        "name",
        "names",
        "id",
        "ids",
        "code",
        "codes",
        "title",
        "titles",
        "number",
    )


def singular_phrase(words: str) -> str:
    """'datacenters' → 'datacenter', 'business categories' → 'business category'."""
    parts = words.split()
    return " ".join([*parts[:-1], stem(parts[-1].lower())]) if parts else words


def is_plural(words: str) -> bool:
    """'clients', 'business categories': the last word is a plural noun."""
    w = words.lower().split()[-1] if words.strip() else words
    return stem(w) != w


# ---------------------------------------------------------------------------------------------
# shape


def parse_number(text: str) -> float | None:
    t = text.strip().lstrip("$€£").rstrip("%").replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None


def _typed_as_code(tokens: list[Token], i: int, longest: int = 4) -> bool:
    """'departments in division AS', 'the IT staff', 'detentions of type AFTER': a word in
    capitals inside a question that is not itself in capitals is a code, not the stop or cue
    word it spells."""
    text = tokens[i].text
    words = [t.text for t in tokens if t.kind == "word"]
    shouting = sum(1 for w in words if w.isupper()) > len(words) / 2
    return i > 0 and 2 <= len(text) <= longest and text.isupper() and text.isalpha() and not shouting


def said_after(shape: Shape, i: int) -> Cue | None:
    """The comparison said right after the number that ends at token i ('5 or more', '2011 or
    later'): it is read with the number, and it takes the number itself in."""
    cue = shape.cue_at(i)
    if cue is None or cue.start != i or cue.kind not in ("cmp", "date_prep"):
        return None
    return cue if " ".join(t.low for t in shape.tokens[cue.start : cue.end]) in POSTFIX else None


def read_shape(question: str) -> Shape:
    """Tokens, cue phrases and literals of `question`; every other word is content."""
    tokens = tokenize(question)
    shape = _Draft(question=question, tokens=tokens, role=["content"] * len(tokens))
    lows = [t.low for t in tokens]
    _find_literals(shape, lows)
    i = 0
    while i < len(tokens):
        if shape.role[i] != "content":
            i += 1
            continue
        if (
            tokens[i].text == "+"
            and i > 0
            and tokens[i - 1].kind == "number"
            and tokens[i - 1].end == tokens[i].start
        ):
            shape.cues.append(Cue("cmp", ">=", i, i + 1, "+"))  # '20+ floors': 20 or more
            shape.role[i] = "cue"
            i += 1
            continue
        if tokens[i].kind == "punct" and not _counting_sign(shape, lows, i):
            shape.role[i] = "stop"
            i += 1
            continue
        if tokens[i].kind == "op":
            op = WORDS.symbols[tokens[i].text]  # '≥' is '>=': a sign is never dropped
            shape.cues.append(Cue("cmp", op, i, i + 1, tokens[i].text))
            shape.role[i] = "cue"
            i += 1
            continue
        if _typed_as_code(tokens, i, longest=12):  # 'of type AFTER': a code, not 'after'
            i += 1
            continue
        ends = _end_to_end(lows, i) or _end_then_first(tokens, lows, i)
        if ends is not None:
            arg = "desc" if ends.desc else "asc"
            # the key between the ends ('from the most recent year to the oldest') or right after
            # them ('from lightest to heaviest tonnage'); none: a direction only
            key_after = (
                ends.end < len(tokens) and tokens[ends.end].kind == "word" and lows[ends.end] not in STOP
            )
            if ends.counting or (ends.first_end == ends.second_start and not key_after):
                cues = [Cue("dir", arg, i, ends.end, shape.text(i, ends.end))]  # 'from fewest staff to most'
            else:  # 'from the most recent year to the oldest': the words between are the key
                cues = [
                    Cue("order", "", i, ends.first_end, shape.text(i, ends.first_end)),
                    Cue("dir", arg, ends.second_start, ends.end, shape.text(ends.second_start, ends.end)),
                ]
            for cue in cues:
                shape.cues.append(cue)
                for k in range(cue.start, cue.end):
                    shape.role[k] = "cue"
            i = cues[0].end
            continue
        scope = next((n for n in (2, 3) if tuple(lows[i : i + n]) in WHOLE_SCOPE), 0)
        if lows[i] == "across" and not scope and not _across_groups(lows, i):
            scope = 1  # 'total faculty across campuses', 'are there across stations': all of them
        if scope:  # 'total hours across all projects': every project together, not one per project
            for k in range(i, i + scope):
                shape.role[k] = "stop"
            i += scope
            continue
        matched = False
        for n in range(min(MAX_CUE_WORDS, len(tokens) - i), 0, -1):
            key = tuple(lows[i : i + n])
            if key in CUES and all(shape.role[k] == "content" for k in range(i, i + n)):
                kind, arg = CUES[key]
                shape.cues.append(Cue(kind, arg, i, i + n, shape.text(i, i + n)))
                for k in range(i, i + n):
                    shape.role[k] = "cue"
                i += n
                matched = True
                break
        if matched:
            continue
        if lows[i] in STOP and not _typed_as_code(tokens, i):
            shape.role[i] = "stop"
        i += 1
    for i, low in enumerate(lows):
        if low in COMPARATIVES and shape.role[i] == "stop":
            # 'more clients than Berlin', 'which has more, Zurich or Berlin': not 'more than 3'
            shape.cues.append(Cue("unsupported", "a comparison between things", i, i + 1, tokens[i].text))
            shape.role[i] = "cue"
    shape.cues.sort(key=lambda c: c.start)
    _each_ones_extreme(shape, lows)
    _find_periods(shape, lows)
    _find_buckets(shape, lows)
    return shape.freeze()


# 'cities ordered by their highest station latitude': each city's MAX, what the order is by
EACH_ONES = {
    "highest": "MAX",
    "largest": "MAX",
    "biggest": "MAX",
    "greatest": "MAX",
    "lowest": "MIN",
    "smallest": "MIN",
}


def _each_ones_extreme(shape: _Draft, lows: list[str]) -> None:
    """A superlative after 'ordered by their' is each listed thing's own extreme (MAX per city),
    not the one row that has it."""
    for n, cue in enumerate(shape.cues):
        func = EACH_ONES.get(cue.words.lower())
        their = cue.start > 0 and lows[cue.start - 1] == "their"
        if cue.kind == "super" and func is not None and their and shape.after_order_cue(cue.start):
            shape.cues[n] = Cue("agg", func, cue.start, cue.end, cue.words)


# the ends of 'from the lowest (price) to the highest': one word or two, each with its direction
# ('oldest' only facing a newest end: 'from oldest to youngest' sorts ages the other way round)
LOW_ENDS = frozenset(
    (w,)
    for w in [
        "fewest",
        "least",
        "lowest",
        "smallest",
        "shortest",
        "cheapest",
        "earliest",
        "lightest",
        "slowest",
    ]
)
HIGH_ENDS = frozenset(
    [
        *(
            (w,)
            for w in ["most", "highest", "largest", "biggest", "greatest", "longest", "heaviest", "fastest"]
        ),
        ("tallest",),
        ("most", "expensive"),
    ]
)
NEW_ENDS = frozenset([("latest",), ("newest",), ("most", "recent")])
OLD_END = ("oldest",)
COUNTING_ENDS = frozenset([("fewest",), ("least",), ("most",)])  # 'from fewest (staff) to most'


@dataclass(frozen=True)
class _Range:
    """'from the most recent (year) to the oldest': where its two ends are, and its direction."""

    first_end: int  # after 'from (the) A'
    second_start: int  # at 'to'
    end: int
    desc: bool
    counting: bool  # 'from fewest (staff) to most': the words between name what is counted


def _end_at(lows: list[str], k: int) -> tuple[tuple[str, ...], int]:
    """The end word(s) at k, after an optional 'the', and the index after them; ((), k) if none."""
    if k < len(lows) and lows[k] == "the":
        k += 1
    for n in (2, 1):
        words = tuple(lows[k : k + n])
        if len(words) == n and (words in LOW_ENDS | HIGH_ENDS | NEW_ENDS or words == OLD_END):
            return words, k + n
    return (), k


def _facing(a: tuple[str, ...], b: tuple[str, ...]) -> bool | None:
    """The direction of 'from a to b' (True: descending), None when a and b do not face."""
    low, high = LOW_ENDS | {OLD_END}, HIGH_ENDS | NEW_ENDS
    if OLD_END in (a, b) and not {a, b} & NEW_ENDS:
        return None
    if a in low and b in high:
        return False
    if a in high and b in low:
        return True
    return None


def _end_to_end(lows: list[str], i: int) -> _Range | None:
    """'from fewest to most', 'from fewest staff to most', 'from the most recent year to the
    oldest', 'from the earliest created to the latest': a range of two facing ends starting at i
    (up to three words between), else None."""
    if lows[i] != "from":
        return None
    a, first_end = _end_at(lows, i + 1)
    if not a:
        return None
    for j in range(first_end, min(first_end + 4, len(lows) - 1)):
        if lows[j] != "to":
            continue
        b, end = _end_at(lows, j + 1)
        desc = _facing(a, b) if b else None
        if desc is not None:
            return _Range(first_end, j, end, desc, a in COUNTING_ENDS)
    return None


def _end_then_first(tokens: list[Token], lows: list[str], i: int) -> _Range | None:
    """'…, most recent year first', '…, latest season first', '…, highest total stock first':
    one end, the key (one to three words), then 'first' closing the clause — read as a range
    from that end, its key between. Only after a comma or at the start, and never a counting end
    ('most X first' may count X)."""
    if i > 0 and tokens[i - 1].text not in (",", ";", "—", "-"):
        return None
    a, first_end = _end_at(lows, i)
    if not a or a in COUNTING_ENDS or (first_end > i + len(a) and lows[i] == "the"):
        return None
    for j in range(first_end + 1, min(first_end + 4, len(lows))):
        if lows[j] == "first" and (j + 1 == len(lows) or tokens[j + 1].kind == "punct"):
            if any(tokens[k].kind != "word" or lows[k] in STOP for k in range(first_end, j)):
                return None
            desc = a in HIGH_ENDS | NEW_ENDS
            return _Range(first_end, j, j + 1, desc, False)
    return None


def _find_buckets(shape: _Draft, lows: list[str]) -> None:
    """'per month', 'by the year', 'every week', 'which month', 'monthly' → a bucket cue. Runs
    after the periods, so 'last month' stays a date range. Whether the unit is a calendar bucket of
    a date or a column of its own ('review.month' holding 'January') is decided by the planner."""
    for i, low in enumerate(lows):
        if shape.role[i] != "content":
            continue
        if low in BUCKET_ADVERBS:
            _make_bucket(shape, BUCKET_ADVERBS[low], i, i + 1)
            continue
        if low not in BUCKET_UNITS:
            continue
        j = i - 1
        while j >= 0 and lows[j] == "the":
            j -= 1  # 'by the month'
        if j < 0:
            continue
        if lows[j] == "every" and shape.role[j] == "content":
            _make_bucket(shape, BUCKET_UNITS[low], j, i + 1)
            continue
        cue = shape.cue_at(j)
        if cue is None or cue.end != j + 1:
            continue
        if cue.kind in ("group", "by") or (cue.kind == "list" and cue.words.lower() in ("what", "which")):
            shape.cues.remove(cue)
            _make_bucket(shape, BUCKET_UNITS[low], cue.start, i + 1)


def _make_bucket(shape: _Draft, unit: str, start: int, end: int) -> None:
    shape.cues.append(Cue("bucket", unit, start, end, shape.text(start, end)))
    shape.cues.sort(key=lambda c: c.start)
    for k in range(start, end):
        shape.role[k] = "cue"


def _find_periods(shape: _Draft, lows: list[str]) -> None:
    """'last 30 days', 'past 2 years', 'this month', 'last year', 'today' → a period literal
    (resolved against today's date when the query is built)."""
    for cue in [c for c in shape.cues if c.kind == "relative"]:
        i = cue.end
        if cue.arg == "today":
            lit = Literal_(
                "period", ("day", 0 if lows[cue.start] == "today" else -1, 1), cue.start, cue.end, cue.words
            )
        elif cue.arg == "ytd":
            lit = Literal_("period", ("year", 0, 0), cue.start, cue.end, cue.words)
        else:
            n, j = 1, i
            number = shape.literal_at(i)
            if number is not None and number.kind == "number" and isinstance(number.value, int):
                n, j = number.value, number.end
            elif i < len(lows) and lows[i] in WORD_NUMBERS:
                n, j = WORD_NUMBERS[lows[i]], i + 1
            if j >= len(lows) or lows[j] not in UNITS:
                continue
            unit = UNITS[lows[j]]
            if cue.arg == "this":
                value = (unit, 0, 1)  # the current calendar unit
            elif j == i:
                value = (unit, -1, 1)  # 'last year': the previous calendar unit
            else:
                value = (unit, -n, 0)  # 'last 30 days': a rolling window up to today
            lit = Literal_("period", value, cue.start, j + 1, shape.text(cue.start, j + 1))
            if number is not None:
                shape.literals.remove(number)
        shape.literals.append(lit)
        shape.cues.remove(cue)
        for k in range(lit.start, lit.end):
            shape.role[k] = "literal"
    shape.literals.sort(key=lambda lit: lit.start)


QUARTERS = {"q1": 1, "q2": 2, "q3": 3, "q4": 4}
ORDINALS = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4}


def _counting_sign(shape: _Draft, lows: list[str], i: int) -> bool:
    """'# of people per country' counts; 'phone # of customers' is their phone numbers."""
    if lows[i] != "#" or _next(lows, i) != "of":
        return False
    after_noun = i > 0 and shape.tokens[i - 1].kind == "word" and shape.role[i - 1] == "content"
    return not (after_noun and lows[i - 1] not in STOP)


def _next(lows: list[str], i: int) -> str:
    return lows[i + 1] if i + 1 < len(lows) else ""


def _after_comparison(lows: list[str], i: int) -> bool:
    """The words before token i are a comparison cue ('more than', 'at least')."""
    return any(
        CUES.get(tuple(lows[i - n : i]), ("",))[0] == "cmp" for n in range(1, min(MAX_CUE_WORDS, i) + 1)
    )


def _quarter(shape: _Draft, lows: list[str], i: int) -> Literal_:
    """'Q1 2023', 'Q3 of 2024', 'the first quarter of 2023', '2023 Q4' (a year just before is merged)."""
    q = QUARTERS.get(lows[i]) or ORDINALS[lows[i]]
    start, end = i, i + 1 if lows[i] in QUARTERS else i + 2
    year: int | None = None
    after = end + 1 if _next(lows, end - 1) in ("of", "in") else end
    token = shape.tokens[after] if after < len(lows) else None
    if token is not None and token.text.isdigit() and len(token.text) == 4:
        year, end = int(token.text), after + 1
    elif shape.literals and shape.literals[-1].kind == "year" and shape.literals[-1].end == i:
        before = shape.literals.pop()
        year, start = before.value, before.start
    return Literal_("quarter", (year, q), start, end, shape.text(start, end))


RANKING_WORDS = frozenset(
    [
        "most",
        "least",
        "fewest",
        "highest",
        "lowest",
        "largest",
        "smallest",
        "biggest",
        "oldest",
        "youngest",
        "longest",
        "shortest",
        "best",
        "worst",
        "latest",
        "earliest",
        "newest",
    ]
)


_THOUSANDS = re.compile(r"\d+(?:\.\d+)?[kK]")
# words a typed amount follows ('more than 30k', 'between 10k and 20k', 'salary of 50k')
_BEFORE_AMOUNT = _words("than over under above below least most between and of exceeding to $")


def _number(value: float, start: int, end: int, words: str) -> Literal_:
    return Literal_("number", int(value) if value.is_integer() else value, start, end, words)


def _find_literals(shape: _Draft, lows: list[str]) -> None:
    tokens = shape.tokens
    i = 0
    while i < len(tokens):
        t = tokens[i]
        lit: Literal_ | None = None
        if t.kind == "quoted":
            lit = Literal_("quoted", t.text[1:-1].strip(), i, i + 1, t.text)
        elif t.kind == "date":
            try:
                lit = Literal_("date", dt.date.fromisoformat(t.text[:10]), i, i + 1, t.text)
            except ValueError:
                lit = None
        elif t.kind == "number":
            value = parse_number(t.text)
            if value is not None:
                is_year = (
                    t.text.isdigit()
                    and len(t.text) == 4
                    and 1900 <= value <= 2100
                    and not (i > 0 and lows[i - 1] in ("top", "first", "bottom", "last"))
                )
                nxt = tokens[i + 1] if i + 1 < len(tokens) else None
                if nxt is not None and nxt.start == t.end and nxt.low == "k" and t.text[0] in "$€£":
                    value *= 1000  # '$30k'
                    lit = _number(value, i, i + 2, shape.text(i, i + 2))
                elif is_year:
                    lit = Literal_("year", int(value), i, i + 1, t.text)
                else:
                    lit = _number(value, i, i + 1, t.text)
        elif t.kind == "word" and _THOUSANDS.fullmatch(t.text) and i > 0 and lows[i - 1] in _BEFORE_AMOUNT:
            # 'making more than 30k', 'over $50k': thousands (a stored code '10K' is no amount)
            lit = _number(float(t.text[:-1]) * 1000, i, i + 1, t.text)
        elif t.kind == "word" and (lows[i] in MONTHS or lows[i] == "may"):
            nxt = tokens[i + 1] if i + 1 < len(tokens) else None
            year = int(nxt.text) if nxt and nxt.text.isdigit() and len(nxt.text) == 4 else None
            prev = lows[i - 1] if i > 0 else ""
            if lows[i] != "may" or year or prev in ("in", "of", "during"):
                month = MONTHS.get(lows[i], 5)
                end = i + 2 if year else i + 1
                lit = Literal_("month", (year, month), i, end, shape.text(i, end))
        elif t.kind == "word" and (
            lows[i] in QUARTERS or (lows[i] in ORDINALS and _next(lows, i) == "quarter")
        ):
            lit = _quarter(shape, lows, i)
        elif (
            t.kind == "word"
            and lows[i] in WORD_NUMBERS
            and i > 0
            and (
                lows[i - 1] in ("top", "first", "last")
                or _after_comparison(lows, i)
                or (lows[i - 1] == "the" and _next(lows, i) in RANKING_WORDS)
                or (lows[i - 1] in ("have", "has", "had", "with", "only") and _next(lows, i) not in STOP)
            )
        ):
            # 'top three', 'more than one captain', 'the three most common': a number, which must
            # then find its place; 'locations that only have one station' too (else the count
            # would vanish with 'one' as a stop word)
            lit = Literal_("number", WORD_NUMBERS[lows[i]], i, i + 1, t.text)
        if lit is not None:
            shape.literals.append(lit)
            for k in range(lit.start, lit.end):
                shape.role[k] = "literal"
            i = lit.end
        else:
            i += 1
