"""Value hints for the SQL writer: how the values a question types are stored — when that helps.

Retrieval (core/retrieve.py) finds stored values that look like the question's words; not all of
them are what the person meant, and a wrong hint is worse than none: 'Al' (a first name)
matched a state code 'AL', and the writer dutifully joined two tables it did not need. So a match
becomes a hint only when it is likely the person's meaning (issue 13, item 4):

- its table is one the question's words name (or the stored value is a strong match on its own:
  the same text up to case, accents and punctuation, or a close spelling of about the same length
  — never a prefix or a part of a longer value);
- its column fits the word's role: a code column (short upper-case values, few of them) takes
  only a word typed as a code ('LAX', 'DC-07'), never a capitalised name that matches it only
  when case is ignored;
- a word the question uses as an ordinary word (not quoted, not a name or a code) counts only
  when it is stored exactly so ('active' → 'ACT' by the catalog's meaning, 'smb' → 'smb'), and
  never when it is a function word ('has' is no airport code 'HAS', 'more than' no student
  named 'More') or a word that names a column and is stored only in another case ('city' in
  'give its name and city' is airports.city, not the call sign 'CITY');
- a number that counts or limits ('top 2', 'more than 3') is no stored code '2'.

Each hint carries the column's type and a few neighbouring stored values ("state_code TEXT, e.g.
'AK', 'AL', 'AZ'"), so the writer sees how the column is spelled, not just one value. A hint is
text in the prompt: it never adds a table to a join (core/scope.py builds the recipe from the
question's schema words). When one typed word is stored equally well in two tables that no join
connects, that is a `Tie`: the writer is told, and may make its two candidates the two readings
(core/pipeline.py asks the person only if their results differ and the judge calls it a real
ambiguity).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from core.database import Database
from core.retrieval import Keywords, Retrieval, ValueMatch
from core.schema_text import sample
from core.settings import EngineSettings
from core.values import fold

log = logging.getLogger(__name__)

MIN_SCORE = 0.80  # retrieval's own floor for a value worth linking
STRONG = 0.90  # a fuzzy match this good, of about the same length, stands on its own
SAME_LENGTH = 0.75  # shorter/longer ratio of typed and stored text for a fuzzy match to count
TIE = 0.03  # two kept columns this close for one typed word: the question may mean either
PROFILE_ROWS = 300  # rows read to learn a column's shape (never the whole table)
MAX_HINTS = 10
PER_WORD = 3  # columns hinted for one typed word
NEIGHBOURS = 1  # stored values shown either side of the matched one
_CODE = re.compile(r"^[A-Z0-9][A-Z0-9_\-./]{0,5}$")
NAMES_SCHEMA = 0.95  # a word whose schema match is this good names that table or column
# 'top 2', 'more than 3', 'at least 5': a number that counts or limits, never a stored value
QUANTITY = re.compile(
    r"\b(top|first|last|bottom|than|least|most|over|under|above|below|limit|only|exactly)\s+(\d+)\b", re.I
)
# Words a question uses for its grammar (and 'id'), never as a value unless typed as one ('"More"').
# fmt: off
FUNCTION_WORDS = frozenset([
    "has", "have", "had", "having", "do", "does", "did", "done", "is", "are", "was", "were", "be",
    "been", "being", "can", "could", "will", "would", "more", "most", "less", "least", "fewer",
    "than", "other", "others", "another", "both", "either", "neither", "not", "no", "none", "nor",
    "same", "different", "each", "every", "all", "any", "some", "also", "only", "just", "very",
    "such", "own", "then", "there", "above", "below", "over", "under", "between", "before",
    "after", "during", "since", "until", "within", "without", "give", "show", "list", "find",
    "tell", "get", "id", "ids", "one", "two", "three", "four", "five", "six", "seven", "eight",
    "nine", "ten",
])
# fmt: on


@dataclass(frozen=True)
class ValueHint:
    typed: str  # as the question wrote it
    table: str
    column: str
    value: str  # the stored spelling
    type: str = ""
    meaning: str = ""  # the catalog's meaning of a stored code, when that is how it matched
    neighbours: tuple[str, ...] = ()  # stored values around it, in order, itself included
    score: float = 1.0


@dataclass(frozen=True)
class Tie:
    """One typed word stored, equally well, in two or more columns."""

    typed: str
    hints: tuple[ValueHint, ...]


@dataclass(frozen=True)
class Hints:
    hints: tuple[ValueHint, ...] = ()
    ties: tuple[Tie, ...] = ()
    dropped: tuple[str, ...] = ()  # why matches were not hinted, for the trace


@dataclass(frozen=True)
class ColumnShape:
    """What a bounded sample says about a column's values."""

    values: tuple[str, ...]  # distinct, sorted
    code: bool  # short upper-case codes, few of them (state codes, currencies, statuses)


def value_hints(
    db: Database,
    retrieval: Retrieval,
    keywords: Keywords,
    settings: EngineSettings,
    *,
    named: Collection[str],
    visible: Collection[str],
    question: str = "",
) -> Hints:
    """The value matches worth telling the writer. `named`: tables the question's words name;
    `visible`: tables the writer sees (a hint about any other table is useless); `question`: its
    text, where a number may be a quantity ('top 2') rather than a value."""
    quantities = {n for _, n in QUANTITY.findall(question)}
    named_low = {t.lower() for t in named}
    visible_low = {t.lower() for t in visible}
    typed_values = {v.casefold() for v in keywords.values}
    names_schema = {m.keyword.casefold() for m in retrieval.schema if m.score >= NAMES_SCHEMA}
    kept: list[ValueHint] = []
    dropped: list[str] = []
    seen: set[tuple[str, str, str, str]] = set()
    for m in sorted(retrieval.values, key=lambda m: -m.score):
        key = (m.keyword.casefold(), m.table.lower(), m.column.lower(), m.value)
        if key in seen or m.score < MIN_SCORE or m.table.lower() not in visible_low:
            continue
        seen.add(key)
        if m.keyword in quantities and m.via not in ("meaning", "choice"):
            dropped.append(
                f"{m.keyword!r} → {m.table}.{m.column} = {m.value!r}: a quantity ('top {m.keyword}')"
            )
            continue
        why = _misfit(
            db,
            m,
            settings,
            named_low,
            m.keyword.casefold() in typed_values,
            m.keyword.casefold() in names_schema,
        )
        if why:
            dropped.append(f"{m.keyword!r} → {m.table}.{m.column} = {m.value!r}: {why}")
            continue
        kept.append(_hint(db, m, settings))
    kept, elsewhere = _settled_by_names(kept, named_low)
    dropped += elsewhere
    kept = _few_per_word(kept)[:MAX_HINTS]
    return Hints(hints=tuple(kept), ties=_ties(kept, _joined_columns(db)), dropped=tuple(dropped))


def _few_per_word(hints: list[ValueHint]) -> list[ValueHint]:
    count: dict[str, int] = {}
    out = []
    for h in hints:
        word = h.typed.casefold()
        count[word] = count.get(word, 0) + 1
        if count[word] <= PER_WORD:
            out.append(h)
    return out


def _joined_columns(db: Database) -> frozenset[frozenset[tuple[str, str]]]:
    """Column pairs a join connects (airport.state_code = state.state_code): the same value in
    both is one thing, not two readings. Worked out once per graph: a warehouse's graph has tens
    of thousands of edges, and every question asks."""
    graph = db.graph

    def pairs() -> frozenset[frozenset[tuple[str, str]]]:
        out = set()
        for e in graph.edges:
            for a, b in zip(e.columns, e.ref_columns, strict=True):
                out.add(frozenset(((e.table.lower(), a.lower()), (e.ref_table.lower(), b.lower()))))
        return frozenset(out)

    return db.catalog.memo(("joined columns", id(graph)), pairs)


def _settled_by_names(hints: list[ValueHint], named: set[str]) -> tuple[list[ValueHint], list[str]]:
    """A word stored in a table the question names means that table's value ('active clients':
    client.status, not compute.status): its hints elsewhere go."""
    in_named = {h.typed.casefold() for h in hints if h.table.lower() in named}
    kept, dropped = [], []
    for h in hints:
        if h.typed.casefold() in in_named and h.table.lower() not in named:
            dropped.append(
                f"{h.typed!r} → {h.table}.{h.column} = {h.value!r}: the question names another table it is stored in"
            )
        else:
            kept.append(h)
    return kept, dropped


def _misfit(
    db: Database,
    m: ValueMatch,
    settings: EngineSettings,
    named: set[str],
    as_value: bool,
    names_column: bool = False,
) -> str:
    """Why this match would mislead the writer; "" when it is a fair hint. `as_value`: the word
    was typed as a value (quoted, a code, a capitalised name); `names_column`: it names a table or
    column of the schema."""
    if m.via in ("meaning", "choice"):
        return ""  # the catalog says the code means the word, or the person chose it
    typed, stored = fold(m.keyword).replace(" ", ""), fold(m.value).replace(" ", "")
    exact = typed == stored
    if not as_value and not exact:
        return "an ordinary word of the question, not stored so"
    if not as_value and m.keyword.casefold() in FUNCTION_WORDS:
        return "a function word of the question"
    if not as_value and names_column and m.keyword != m.value:
        return "a word that names a column, stored only in another case"
    if not exact:
        if min(len(typed), len(stored)) < SAME_LENGTH * max(len(typed), len(stored), 1):
            return "a prefix or a part of a longer value"
        if m.score < STRONG and m.table.lower() not in named:
            return "a loose match in a table the question does not name"
    shape = column_shape(db, m.table, m.column, settings)
    if shape.code and m.keyword != m.value and m.keyword != m.keyword.upper():
        return "a word typed as a name, matching a code column only when case is ignored"
    return ""


def _hint(db: Database, m: ValueMatch, settings: EngineSettings) -> ValueHint:
    table = db.catalog.table(m.table)
    column = table.column(m.column) if table is not None else None
    shape = column_shape(db, m.table, m.column, settings)
    return ValueHint(
        typed=m.keyword,
        table=m.table,
        column=m.column,
        value=m.value,
        type=column.type if column is not None else "",
        meaning=m.meaning,
        neighbours=_around(shape.values, m.value),
        score=m.score,
    )


def _around(values: Sequence[str], value: str) -> tuple[str, ...]:
    ordered = sorted({*values, value})
    i = ordered.index(value)
    return tuple(ordered[max(0, i - NEIGHBOURS) : i + NEIGHBOURS + 1])


def _ties(hints: Sequence[ValueHint], joined: AbstractSet[frozenset[tuple[str, str]]]) -> tuple[Tie, ...]:
    """Words stored equally well in columns of different tables that no join connects ('Lyon':
    a customer's city and a supplier's). Two columns of one table (a flight's from and to
    airport) are not a tie here: the question's own words ("from", "to") say which."""
    by_word: dict[str, list[ValueHint]] = {}
    for h in hints:
        by_word.setdefault(h.typed.casefold(), []).append(h)
    out = []
    for found in by_word.values():
        best = max(h.score for h in found)
        places: list[ValueHint] = []
        for h in found:
            here = (h.table.lower(), h.column.lower())
            if best - h.score > TIE or any(h.table.lower() == p.table.lower() for p in places):
                continue
            if any(frozenset((here, (p.table.lower(), p.column.lower()))) in joined for p in places):
                continue
            places.append(h)
        if len(places) > 1:
            out.append(Tie(found[0].typed, tuple(places)))
    return tuple(out)


def column_shape(db: Database, table: str, column: str, settings: EngineSettings) -> ColumnShape:
    """The first rows' values of a column (read once per catalog, through the guard)."""

    def read() -> ColumnShape:
        t = db.catalog.table(table)
        col = t.column(column) if t is not None else None
        if t is None or col is None:
            return ColumnShape((), False)
        rows = sample(db, t, [col.name], settings, PROFILE_ROWS)
        values = sorted({str(r[0]) for r in rows if r[0] is not None})
        code = (
            bool(values)
            and len(values) <= max(60, len(rows) // 3)
            and sum(1 for v in values if _CODE.match(v) and any(ch.isalpha() for ch in v))
            >= 0.9 * len(values)
        )
        return ColumnShape(tuple(values), code)

    return db.catalog.memo(("column_shape", db.name, table.lower(), column.lower()), read)


def hints_text(hints: Hints) -> str:
    """The prompt's section on stored values (empty when there is nothing to say). One line per
    typed word and stored spelling, naming every column that holds it:

        - fare.from_airport, fare.to_airport = 'LAX' (TEXT; e.g. 'JFK', 'LAX', 'ORD')
        - client.status = 'ACT' for 'active' (TEXT; 'ACT' means active)
        - 'Lyon' is stored in customers.city and suppliers.city (TEXT; e.g. 'Lille', 'Lyon', 'Madrid')
    """
    if not hints.hints:
        return ""
    tied = {(t.typed.casefold(), h.table.lower(), h.column.lower()) for t in hints.ties for h in t.hints}
    groups: dict[tuple[str, str], list[ValueHint]] = {}
    for h in hints.hints:
        groups.setdefault((h.typed.casefold(), h.value), []).append(h)
    lines = ["### Values found in the data"]
    for (word, value), same in groups.items():
        first = same[0]
        if first.meaning and first.meaning.lower() != value.lower():
            about = f"'{value}' means {first.meaning}"
        else:
            about = (
                "e.g. " + ", ".join(f"'{v}'" for v in first.neighbours) if len(first.neighbours) > 1 else ""
            )
        details = "; ".join(x for x in (first.type, about) if x)
        tail = f" ({details})" if details else ""
        places = [f"{h.table}.{h.column}" for h in same]
        if len(same) > 1 and any((word, h.table.lower(), h.column.lower()) in tied for h in same):
            lines.append(f"- '{first.typed}' is stored in {' and '.join(places)}{tail}")
            continue
        typed = f" for '{first.typed}'" if first.typed != value else ""
        lines.append(f"- {', '.join(places)} = '{value}'{typed}{tail}")
    return "\n".join(lines) + "\n"
