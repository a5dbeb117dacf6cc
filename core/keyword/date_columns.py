"""Which date column a date or a time bucket of the question is about.

'Total payment amount per month in 2025' is about the date of the payments whose amounts are
added up — not a date of another table the question happens to touch (usage.month). So the
tables are tried in this order: the fact tables (what is counted, summed or ranked by), then the
target, then the other tables named. A table without a date of its own takes the date of the
row it belongs to (a payment line's date is its payment's paid_on), following many-to-one
foreign keys a hop or two. When one table offers several dates, the question's other words pick
one ('signed up' → signup_date), a clarification answered earlier picks one, or the person is
asked — never a guess.
"""

from __future__ import annotations

import itertools

from core.keyword.columns import TEMPORAL, column_kind
from core.keyword.match import Lexicon
from core.keyword.plan import Measure, Ref
from core.keyword.reader import AmbiguousDate, Decline, Reader
from core.values import fold, similarity

PARENT_HOPS = 2  # how far a table without a date looks for the date of the row it belongs to


def fact_tables(r: Reader) -> list[str]:
    """The tables whose rows are counted, aggregated or rank the answer, in the question's order."""
    plan = r.plan
    tables = [m.table for m in plan.measures]
    tables += [o.key.table for o in plan.order if isinstance(o.key, Measure)]
    tables += [
        o.key.table for o in plan.order if isinstance(o.key, Ref) and o.key.table != plan.target and r.top
    ]
    tables += [h.measure.table for h in plan.having]
    return list(dict.fromkeys(tables))


def candidate_tables(r: Reader) -> list[str]:
    """Where a date is looked for: fact tables, the target, then the other tables named."""
    tables = [*fact_tables(r), r.plan.target or ""]
    tables += [m.sense.table for m, _ in r.entities if m.sense]
    tables += [f.ref.table for f in r.plan.filters]
    return [t for t in dict.fromkeys(tables) if t]


def own_dates(lex: Lexicon, table: str) -> list[Ref]:
    t = lex.table(table)
    return (
        [Ref(t.name, c.name) for c in t.columns if column_kind(lex, t.name, c.name) in TEMPORAL] if t else []
    )


def parent_dates(lex: Lexicon, table: str) -> list[Ref]:
    """The date of the nearest table `table` points to (many-to-one), when it has none itself: a
    payment line is dated by its payment. Only one date: a parent with several (a client's
    signup and birth dates) describes an entity, not the event the row belongs to."""
    seen = {table.lower()}
    frontier = [table]
    for _ in range(PARENT_HOPS):
        nxt = []
        for t in frontier:
            for e in lex.db.graph.edges:
                if e.table.lower() == t.lower() and e.ref_unique and e.ref_table.lower() not in seen:
                    seen.add(e.ref_table.lower())
                    nxt.append(e.ref_table)
        dates = [d for t in nxt for d in own_dates(lex, t)]
        if dates:
            return dates if len(dates) == 1 else []
        frontier = nxt
    return []


def pick_date(r: Reader, words: str, refs: list[Ref]) -> Ref:
    """One of several candidate dates: the person's earlier choice, the only one, the one the
    question's words name — or ask (AmbiguousDate). A word that names a date ('graduate') must
    name the one picked."""
    chosen = chosen_column(r, words, refs)
    if chosen is None and len(refs) == 1:
        chosen = refs[0]
    if chosen is None:
        chosen = hinted_date(r, refs)
    if chosen is None:
        raise AmbiguousDate(words, refs)
    if r.date_hints and not any(names_date(h, chosen) for h in r.date_hints):
        raise Decline(f"it could not tell which date '{r.date_hints[0]}' is about", r.date_hints)
    return chosen


def names_date(word: str, ref: Ref) -> bool:
    """'graduate' names predicted_graduation_semester, 'delivery' delivered_at: a word of the
    column's name and the word share their first five letters or more."""
    word = fold(word)
    parts = fold(ref.column.replace("_", " ")).split()
    return len(word) >= 5 and any(len(part) >= 5 and part[:5] == word[:5] for part in parts)


def date_hint(r: Reader, word: str) -> bool:
    """An unmatched word of a question that speaks of a date ('in 2024', 'per month') and that
    names a date column of a table the question names: a hint to the date, not an unknown word."""
    has_date = any(lit.kind in ("year", "month", "quarter", "date", "period") for lit in r.shape.literals)
    if not has_date and not any(c.kind == "bucket" for c in r.shape.cues):
        return False
    tables = {m.sense.table for m in r.matching.mentions if m.sense}
    dates = [d for t in tables for d in own_dates(r.lex, t) + parent_dates(r.lex, t)]
    return any(names_date(word, d) for d in dates)


def chosen_column(r: Reader, words: str, refs: list[Ref]) -> Ref | None:
    """The column the person picked for these words in an earlier clarification."""
    for reading in r.readings:
        if reading.column and fold(reading.words) == fold(words):
            for ref in refs:
                if (ref.table, ref.column) == (reading.table, reading.column):
                    return ref
    return None


def hinted_date(r: Reader, refs: list[Ref]) -> Ref | None:
    """'signed up in 2024' → signup_date: the question's other words name one of the dates."""
    toks = r.shape.tokens
    unmatched = r.matching.unmatched
    loose = list(unmatched) + [
        i for i, role in enumerate(r.shape.role) if role == "content" and i not in unmatched
    ]
    words = [toks[i].low for i in sorted(set(loose))]
    phrases = words + [f"{a} {b}" for a, b in itertools.pairwise(words)]
    scores: dict[Ref, float] = {}
    for ref in refs:
        target = fold(ref.column.replace("_", " "))
        best = max((similarity(fold(p), target) for p in phrases), default=0.0)
        if any(names_date(w, ref) for w in words):
            best = max(best, 0.8)
        for p in phrases:
            for x in r.lex.schema(p):
                if x.kind == "column" and x.table == ref.table and x.column == ref.column:
                    best = max(best, x.score)
        scores[ref] = best
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if ranked and ranked[0][1] >= 0.6 and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 0.2):
        ref = ranked[0][0]
        r.plan.notes.append(f"the date is {ref.table} {ref.column.replace('_', ' ')}")
        return ref
    return None
