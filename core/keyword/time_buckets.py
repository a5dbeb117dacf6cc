"""'per month', 'by year', 'monthly', 'which month': group by a calendar unit of a date.

The date is the one of the fact being counted or aggregated ('total payment amount per month' →
the month of the payment's paid_on, core/keyword/dates.py), or the date column the question
names ('clients per year of signup date'). A table that keeps the unit as a column of its own
(publication.year as a number, review.month as 'January') is grouped by that column, as the
data's own answer to 'per year'. The SQL for a bucket is written per dialect in
core/keyword/compile.py; here it is only `Ref(table, column, bucket=unit)`.
"""

from __future__ import annotations

import calendar

from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, ranking_measure
from core.keyword.dates import fact_tables, own_dates, parent_dates, pick_date
from core.keyword.match import Lexicon, Mention
from core.keyword.plan import Context, Decline, OrderKey, Plan, Ref, frozen_map
from core.keyword.shapes import Cue

# Column names (lower case, without '_') that hold a unit themselves, besides the unit's own name.
UNIT_NAMES = {"year": ("yr",), "month": ("monthname",), "quarter": ("qtr",), "week": (), "day": ()}
MONTH_NAMES = tuple(calendar.month_name[1:])
WEEKDAY_NAMES = tuple(calendar.day_name)  # Monday first, as ISO counts


def place_buckets(plan: Plan, ctx: Context) -> Plan:
    """Add a group per time bucket of the question; the first bucket's date is also the one a date
    in the question restricts ('per month in 2025')."""
    if not plan.buckets:
        return plan
    plan = _rank_by_totals(plan, ctx)
    facts = fact_tables(plan)
    for cue, subject in plan.buckets:
        if subject is None and not facts:
            raise Decline(
                f"it groups by {cue.arg} but names nothing to count or compute per {cue.arg}", [cue.words]
            )
        plan, ref = _bucket_ref(plan, ctx, cue, subject, facts)
        plan = plan.adding(groups=ref)
        if ref.bucket and plan.time_column is None:
            plan = plan.but(time_column=ref.raw)
    return plan


def _rank_by_totals(plan: Plan, ctx: Context) -> Plan:
    """'Which month had the highest cost': months are ranked by each month's total cost (its rows
    added up, or averaged for rates), not by a single row's cost."""
    superlative = plan.superlative
    if superlative is None or superlative[1] is None or plan.query.measures:
        return plan
    cue = superlative[0]
    if "with" in [t.low for t in plan.shape.tokens[max(0, cue.start - 2) : cue.start]]:
        # 'in what year did the pilot with the lowest rank join': the date of the one thing
        # ranked first, not the year whose ranks add up to the least
        raise Decline(
            f"it asks when the thing with the {cue.words} {superlative[1].words} did it", [cue.words]
        )
    order = list(plan.query.order)
    for k, o in enumerate(order):
        if (
            isinstance(o.key, Ref)
            and not o.key.bucket
            and column_kind(ctx.lex, o.key.table, o.key.column) in NUMERIC
        ):
            measure = ranking_measure(o.key, o.words)
            order[k] = OrderKey(measure, o.desc, o.words)
            how = "averaged" if measure.func == "AVG" else "added up"
            plan = plan.noted(f"each {plan.buckets[0][0].arg}'s {o.key.table} rows {how}")
            plan = plan.but(superlative=(superlative[0], None))
    return plan.with_query(order=tuple(order))


def _bucket_ref(
    plan: Plan, ctx: Context, cue: Cue, subject: Mention | None, facts: list[str]
) -> tuple[Plan, Ref]:
    unit = cue.arg
    if subject is not None and subject.sense is not None and subject.sense.column:
        ref = Ref(subject.sense.table, subject.sense.column)
        kind = column_kind(ctx.lex, ref.table, ref.column)
        if kind in TEMPORAL:
            return plan, Ref(ref.table, ref.column, unit)
        if kind in NUMERIC and unit == "year":
            return plan, ref  # 'per year of publication' over a year number
        raise Decline(f"it could not group '{subject.words}' by {unit}", [cue.words, subject.words])
    fact = facts[0]
    own = unit_column(ctx.lex, fact, unit)
    if own is not None:
        return plan, own
    dates = own_dates(ctx.lex, fact) or parent_dates(ctx.lex, fact)
    if not dates:
        raise Decline(f"it found no date of {fact} to group by {unit}", [cue.words])
    plan, date = pick_date(plan, ctx, cue.words, dates)
    return plan, Ref(date.table, date.column, unit)


def calendar_order(plan: Plan, ctx: Context) -> Plan:
    """Order month and weekday names by the calendar, not alphabetically ('April' before 'August'
    only by accident): note the text columns the answer is ordered by that hold such names."""
    found = dict(plan.query.calendar)
    for o in plan.query.order:
        if isinstance(o.key, Ref) and not o.key.bucket and o.key in plan.query.groups:
            names = calendar_names(ctx.lex, o.key)
            if names:
                found[o.key] = names
    return plan.with_query(calendar=frozen_map(found))


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
