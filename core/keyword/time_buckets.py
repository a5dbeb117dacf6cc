"""'per month', 'by year', 'monthly', 'which month': group by a calendar unit of a date.

The date is the one of the fact being counted or aggregated ('total payment amount per month' →
the month of the payment's paid_on, core/keyword/date_columns.py), or the date column the
question names ('clients per year of signup date'). A table that keeps the unit as a column of
its own (publication.year as a number, review.month as 'January') is grouped by that column, as
the data's own answer to 'per year'. The SQL for a bucket is written per dialect in
core/keyword/date_sql.py; here it is only `Ref(table, column, bucket=unit)`.
"""

from __future__ import annotations

from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, ranking_measure
from core.keyword.date_columns import fact_tables, own_dates, parent_dates, pick_date
from core.keyword.date_sql import MONTH_NAMES, WEEKDAY_NAMES
from core.keyword.match import Lexicon, Mention
from core.keyword.plan import OrderKey, Ref
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import Cue

# Column names (lower case, without '_') that hold a unit themselves, besides the unit's own name.
UNIT_NAMES = {"year": ("yr",), "month": ("monthname",), "quarter": ("qtr",), "week": (), "day": ()}


def place_buckets(r: Reader) -> None:
    """Add a group per time bucket of the question; the first bucket's date is also the one a date
    in the question restricts ('per month in 2025')."""
    if not r.buckets:
        return
    _rank_by_totals(r)
    facts = fact_tables(r)
    for cue, subject in r.buckets:
        if subject is None and not facts:
            raise Decline(
                f"it groups by {cue.arg} but names nothing to count or compute per {cue.arg}", [cue.words]
            )
        ref = _bucket_ref(r, cue, subject, facts)
        r.plan.groups.append(ref)
        if ref.bucket and r.time_column is None:
            r.time_column = ref.raw


def _rank_by_totals(r: Reader) -> None:
    """'Which month had the highest cost': months are ranked by each month's total cost (its rows
    added up, or averaged for rates), not by a single row's cost."""
    if r.superlative is None or r.superlative[1] is None or r.plan.measures:
        return
    for k, o in enumerate(r.plan.order):
        if (
            isinstance(o.key, Ref)
            and not o.key.bucket
            and column_kind(r.lex, o.key.table, o.key.column) in NUMERIC
        ):
            measure = ranking_measure(o.key, o.words)
            r.plan.order[k] = OrderKey(measure, o.desc, o.words)
            r.plan.notes.append(
                f"each {r.buckets[0][0].arg}'s {o.key.table} rows {'averaged' if measure.func == 'AVG' else 'added up'}"
            )
            r.superlative = (r.superlative[0], None)


def _bucket_ref(r: Reader, cue: Cue, subject: Mention | None, facts: list[str]) -> Ref:
    unit = cue.arg
    if subject is not None and subject.sense is not None and subject.sense.column:
        ref = Ref(subject.sense.table, subject.sense.column)
        kind = column_kind(r.lex, ref.table, ref.column)
        if kind in TEMPORAL:
            return Ref(ref.table, ref.column, unit)
        if kind in NUMERIC and unit == "year":
            return ref  # 'per year of publication' over a year number
        raise Decline(f"it could not group '{subject.words}' by {unit}", [cue.words, subject.words])
    fact = facts[0]
    own = unit_column(r.lex, fact, unit)
    if own is not None:
        return own
    dates = own_dates(r.lex, fact) or parent_dates(r.lex, fact)
    if not dates:
        raise Decline(f"it found no date of {fact} to group by {unit}", [cue.words])
    date = pick_date(r, cue.words, dates)
    return Ref(date.table, date.column, unit)


def calendar_order(r: Reader) -> None:
    """Order month and weekday names by the calendar, not alphabetically ('April' before 'August'
    only by accident): note the text columns the answer is ordered by that hold such names."""
    for o in r.plan.order:
        if isinstance(o.key, Ref) and not o.key.bucket and o.key in r.plan.groups:
            names = calendar_names(r.lex, o.key)
            if names:
                r.plan.calendar[o.key] = names


def calendar_names(lex: Lexicon, ref: Ref) -> str | None:
    """'month' or 'weekday' when the text column stores those names (found in the value index)."""
    if column_kind(lex, ref.table, ref.column) != "text":
        return None
    for kind, names in (("month", MONTH_NAMES), ("weekday", WEEKDAY_NAMES)):
        found = sum(
            any(s.table == ref.table and s.column == ref.column and s.via == "value" for s in lex.values(n))
            for n in names[:4]
        )
        if found >= 2:
            return kind
    return None


def unit_column(lex: Lexicon, table: str, unit: str) -> Ref | None:
    """A column of `table` that is not a date and holds the unit itself (year, month_name...)."""
    t = lex.table(table)
    if t is None:
        return None
    names = {unit, f"{table.lower().replace('_', '')}{unit}", *UNIT_NAMES[unit]}
    hits = [
        c.name
        for c in t.columns
        if c.name.lower().replace("_", "") in names and column_kind(lex, t.name, c.name) not in TEMPORAL
    ]
    return Ref(t.name, hits[0]) if len(hits) == 1 else None
