"""Dates in the question become ranges on a date column: 'in 2025', 'before March 2024', 'last 30 days'.

Two decisions matter. Which column: the one the question names next to the date, else the one
a time bucket groups by ('per month in 2025'), else the date of the fact the question counts or
aggregates (core/keyword/date_columns.py). Which range: computed in Python (core/keyword/dates.py)
and written as ISO literals, so the same SQL text works on every dialect; a year kept in a
number column is compared as a number.
"""

from __future__ import annotations

import calendar

from core.keyword.columns import NUMERIC, column_kind
from core.keyword.date_columns import candidate_tables, own_dates, parent_dates, pick_date
from core.keyword.dates import period
from core.keyword.match import Mention
from core.keyword.plan import Filter, Ref
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import Cue, Literal_


def date_literal(r: Reader, lit: Literal_, pending: list[Cue], last: Mention | None) -> list[Cue]:
    """Keep a date literal, its preposition and the date column just before it (if any) until the
    whole question is read; returns the cues still pending."""
    prep = next((c for c in reversed(pending) if c.kind in ("date_prep", "between")), None)
    subject = last if last is not None and r.date_subject(last) and r.adjacent(last, lit) else None
    r.used_literals.add(lit.start)
    how = (
        ("between" if prep.kind == "between" else prep.arg)
        if prep
        else ("in" if lit.kind != "period" else "")
    )
    r.pending_dates.append((lit, how, subject))
    if subject is not None:
        r.role(subject).kind = "subject"
    return [c for c in pending if c.kind not in ("date_prep", "between")]


def date_filters(r: Reader) -> None:
    """Turn the pending dates into filters, now that the target and measures are known."""
    dates = list(r.pending_dates)
    while dates:
        lit, prep, subject = dates.pop(0)
        ref = date_column(r, lit, subject)
        if prep == "between":
            if not dates or dates[0][0].kind != lit.kind:
                raise Decline(f"it could not read the range starting at '{lit.words}'", [lit.words])
            end = dates.pop(0)[0]
            r.plan.filters.extend(_between(r, lit, end, ref))
            continue
        r.plan.filters.extend(_date_filters(r, lit, prep, ref))


def _between(r: Reader, first: Literal_, last: Literal_, ref: Ref) -> list[Filter]:
    words = f"between {first.words} and {last.words}"
    if column_kind(r.lex, ref.table, ref.column) in NUMERIC:
        if first.kind != "year":
            raise Decline(f"it could not compare '{words}' with the number column {ref.column}", [words])
        return [Filter(ref, ">=", first.value, words), Filter(ref, "<=", last.value, words)]
    lo, _ = period(r.today, first)
    _, hi = period(r.today, last)
    if lo is None or hi is None:
        raise Decline(f"it could not read the range '{words}'", [words])
    return [Filter(ref, "range", (lo, hi), words)]


def date_column(r: Reader, lit: Literal_, subject: Mention | None) -> Ref:
    """The column a date literal restricts: the one named next to it, the one a time bucket groups
    by, else a date of the tables in core/keyword/date_columns.py's order."""
    if subject is not None and subject.sense is not None and subject.sense.column:
        return Ref(subject.sense.table, subject.sense.column)
    if r.time_column is not None:
        return r.time_column  # 'per month in 2025': the months of the same date
    for table in candidate_tables(r):
        t = r.lex.table(table)
        if t is None:
            continue
        if lit.kind == "year":
            years = [
                c.name
                for c in t.columns
                if c.kind in NUMERIC and c.name.lower() in ("year", f"{table.lower()}_year", "yr")
            ]
            if len(years) == 1:
                return Ref(table, years[0])
        dates = own_dates(r.lex, table)
        if dates:
            return pick_date(r, lit.words, dates)
        if lit.kind in ("year", "month"):
            years = [c.name for c in t.columns if c.kind in NUMERIC and "year" in c.name.lower()]
            if len(years) == 1:
                return Ref(table, years[0])
        parents = parent_dates(r.lex, table)
        if parents:
            return pick_date(r, lit.words, parents)
    raise Decline(f"it found no date to compare with '{lit.words}'", [lit.words])


def _date_filters(r: Reader, lit: Literal_, prep: str, ref: Ref) -> list[Filter]:
    kind = column_kind(r.lex, ref.table, ref.column)
    words = lit.words if not prep or prep == "in" else f"{prep} {lit.words}"
    if kind in NUMERIC:  # a year column
        if lit.kind not in ("year", "month") or (lit.kind == "month" and lit.value[0] is None):
            raise Decline(
                f"it could not compare '{lit.words}' with the number column {ref.column}", [lit.words]
            )
        year = lit.value if lit.kind == "year" else lit.value[0]
        out = [_year_op(ref, prep, year, words)]
        if lit.kind == "month":
            if prep not in ("in", ""):
                raise Decline(f"it could not compare '{words}' with month names", [lit.words])
            month_col = _month_text_column(r, ref.table)
            if month_col is None:
                raise Decline(f"it found no month to compare with '{lit.words}'", [lit.words])
            out.append(Filter(month_col, "=", calendar.month_name[lit.value[1]], words))
        return out
    lo, hi = period(r.today, lit)
    if lo is None and hi is None and lit.kind == "quarter":
        raise Decline(f"it could not tell which year '{lit.words}' is in", [lit.words])
    if lo is None and hi is None:  # a month of any year
        return [Filter(ref, "month", lit.value[1], words)]
    if prep == "before":
        return [Filter(ref, "range", (None, lo), words)]
    if prep == "after" and lit.kind != "period":
        start = hi if r.shape.tokens[lit.start - 1].low == "after" else lo
        return [Filter(ref, "range", (start, None), words)]
    return [Filter(ref, "range", (lo, hi), words)]


def _year_op(ref: Ref, prep: str, year: int, words: str) -> Filter:
    if prep == "before":
        return Filter(ref, "<", year, words)
    if prep == "after":
        return Filter(ref, ">", year, words)
    return Filter(ref, "=", year, words)


def _month_text_column(r: Reader, table: str) -> Ref | None:
    """A text column of `table` that stores month names ('April'), found in the value index."""
    for s in r.lex.values("April"):
        if s.table == table and s.kind == "value":
            return Ref(s.table, s.column or "")
    return None
