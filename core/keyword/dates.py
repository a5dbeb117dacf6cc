"""Dates in the question become ranges on a date column: 'in 2025', 'before March 2024', 'last 30 days'.

Two decisions matter. Which column: the one the question names next to the date, else the one
a time bucket groups by ('per month in 2025'), else the date of the fact the question counts or
aggregates. 'Total payment amount per month in 2025' is about the date of the payments whose
amounts are added up — not a date of another table the question happens to touch (usage.month).
So the tables are tried in this order: the fact tables (what is counted, summed or ranked by),
then the target, then the other tables named. A table without a date of its own takes the date
of the row it belongs to (a payment line's date is its payment's paid_on), following many-to-one
foreign keys a hop or two. When one table offers several dates, the question's other words pick
one ('signed up' → signup_date), a clarification answered earlier picks one, or the person is
asked — never a guess.

Which range: the [start, end) of a year, quarter, month, day or period, computed here in Python
against the question's `today` (calendar arithmetic by dateutil) and written into the SQL as ISO
date literals, so the same SQL text works on every dialect and a test can pin `today`. A year
kept in a number column is compared as a number.
"""

from __future__ import annotations

import calendar
import datetime as dt
import itertools

from dateutil.relativedelta import relativedelta

from core.keyword.columns import NUMERIC, TEMPORAL, column_kind, date_subject, parent_levels
from core.keyword.match import Lexicon, Mention
from core.keyword.plan import AmbiguousDate, Context, Decline, Filter, Measure, Op, Plan, Ref
from core.keyword.shapes import TEMPORAL_ADJ, Cue, Literal_, said_after
from core.values import fold, similarity

PARENT_HOPS = 2  # how far a table without a date looks for the date of the row it belongs to

# ---------------------------------------------------------------------------------------------
# ranges


def period(today: dt.date, lit: Literal_) -> tuple[dt.date | None, dt.date | None]:
    """[lo, hi) of a year, quarter, month, day or period literal; (None, None) for a month or
    quarter of any year; hi is None for a rolling window ('the last 30 days': from 30 days ago on)."""
    if lit.kind == "year":
        return dt.date(lit.value, 1, 1), dt.date(lit.value + 1, 1, 1)
    if lit.kind == "month":
        year, month = lit.value
        if year is None:
            return None, None
        start = dt.date(year, month, 1)
        return start, start + relativedelta(months=1)
    if lit.kind == "quarter":
        year, q = lit.value
        if year is None:
            return None, None
        start = dt.date(year, 3 * q - 2, 1)
        return start, start + relativedelta(months=3)
    if lit.kind == "date":
        return lit.value, lit.value + dt.timedelta(days=1)
    unit, offset, length = lit.value
    if length == 0:
        return shift(today, unit, offset), None
    lo = shift(unit_start(today, unit), unit, offset)
    return lo, shift(lo, unit, length)


def shift(d: dt.date, unit: str, n: int) -> dt.date:
    """`d` moved by n calendar units (the day kept, or the month's last when it has fewer)."""
    step = {
        "day": relativedelta(days=n),
        "week": relativedelta(weeks=n),
        "month": relativedelta(months=n),
        "quarter": relativedelta(months=3 * n),
    }.get(unit, relativedelta(years=n))
    return d + step


def unit_start(d: dt.date, unit: str) -> dt.date:
    if unit == "week":
        return d - dt.timedelta(days=d.weekday())
    if unit == "month":
        return d.replace(day=1)
    if unit == "quarter":
        return dt.date(d.year, 3 * ((d.month - 1) // 3) + 1, 1)
    if unit == "year":
        return dt.date(d.year, 1, 1)
    return d


# ---------------------------------------------------------------------------------------------
# which date column


def fact_tables(plan: Plan) -> list[str]:
    """The tables whose rows are counted, aggregated or rank the answer, in the question's order."""
    q = plan.query
    tables = [m.table for m in q.measures]
    tables += [o.key.table for o in q.order if isinstance(o.key, Measure)]
    tables += [
        o.key.table for o in q.order if isinstance(o.key, Ref) and o.key.table != q.target and plan.top
    ]
    tables += [h.measure.table for h in q.having]
    return list(dict.fromkeys(tables))


def candidate_tables(plan: Plan) -> list[str]:
    """Where a date is looked for: fact tables, the target, then the other tables named."""
    tables = [*fact_tables(plan), plan.query.target or ""]
    tables += [m.sense.table for m, _ in plan.entities if m.sense]
    tables += [f.ref.table for f in plan.query.filters]
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
    for level in itertools.islice(parent_levels(lex, table), PARENT_HOPS):
        dates = [d for t in level for d in own_dates(lex, t)]
        if dates:
            return dates if len(dates) == 1 else []
    return []


def pick_date(plan: Plan, ctx: Context, words: str, refs: list[Ref]) -> tuple[Plan, Ref]:
    """One of several candidate dates: the person's earlier choice, the only one, the one the
    question's words name — or ask (AmbiguousDate). A word that names a date ('graduate') must
    name the one picked. The plan comes back with a note when the words picked it."""
    chosen = chosen_column(ctx, words, refs)
    if chosen is None and len(refs) == 1:
        chosen = refs[0]
    if chosen is None:
        chosen = hinted_date(plan, ctx, refs)
        if chosen is not None:
            plan = plan.noted(f"the date is {chosen.table} {chosen.column.replace('_', ' ')}")
    if chosen is None:
        raise AmbiguousDate(words, refs)
    if plan.date_hints and not any(names_date(h, chosen) for h in plan.date_hints):
        raise Decline(f"it could not tell which date '{plan.date_hints[0]}' is about", plan.date_hints)
    return plan, chosen


def names_date(word: str, ref: Ref) -> bool:
    """'graduate' names predicted_graduation_semester, 'delivery' delivered_at: a word of the
    column's name and the word share their first five letters or more."""
    word = fold(word)
    parts = fold(ref.column.replace("_", " ")).split()
    return len(word) >= 5 and any(len(part) >= 5 and part[:5] == word[:5] for part in parts)


def date_hint(plan: Plan, ctx: Context, word: str) -> bool:
    """An unmatched word of a question that speaks of a date ('in 2024', 'per month') and that
    names a date column of a table the question names: a hint to the date, not an unknown word."""
    shape = plan.shape
    has_date = any(lit.kind in ("year", "month", "quarter", "date", "period") for lit in shape.literals)
    if not has_date and not any(c.kind == "bucket" for c in shape.cues):
        return False
    tables = {m.sense.table for m in plan.matching.mentions if m.sense}
    dates = [d for t in tables for d in own_dates(ctx.lex, t) + parent_dates(ctx.lex, t)]
    return any(names_date(word, d) for d in dates)


def about_dates(plan: Plan) -> bool:
    """The question has a date, a period, a time bucket or a 'latest'/'earliest'."""
    shape = plan.shape
    return (
        any(lit.kind not in ("quoted", "number") for lit in shape.literals)
        or any(c.kind == "bucket" for c in shape.cues)
        or any(c.kind == "super" and c.words.lower() in TEMPORAL_ADJ for c in shape.cues)
    )


def date_verb(plan: Plan, ctx: Context, i: int) -> bool:
    """'signed up in 2024', 'opened per year', 'signed up most recently': a verb in a question about
    a date that names a date column of a table the question names (it says which date, no more)."""
    if not about_dates(plan):
        return False
    shape = plan.shape
    tables = {m.sense.table for m in plan.matching.mentions if m.sense}
    dates = [d for t in tables for d in own_dates(ctx.lex, t) + parent_dates(ctx.lex, t)]
    word = shape.tokens[i].low
    nxt = shape.tokens[i + 1].low if i + 1 < len(shape.tokens) else ""
    for d in dates:
        column = fold(d.column.replace("_", " "))
        if names_date(word, d) or max(similarity(fold(p), column) for p in (word, f"{word} {nxt}")) >= 0.6:
            return True
    return False


def chosen_column(ctx: Context, words: str, refs: list[Ref]) -> Ref | None:
    """The column the person picked for these words in an earlier clarification."""
    for reading in ctx.readings:
        if reading.column and fold(reading.words) == fold(words):
            for ref in refs:
                if (ref.table, ref.column) == (reading.table, reading.column):
                    return ref
    return None


def hinted_date(plan: Plan, ctx: Context, refs: list[Ref]) -> Ref | None:
    """'signed up in 2024' → signup_date: the question's other words name one of the dates."""
    toks = plan.shape.tokens
    unmatched = plan.matching.unmatched
    loose = list(unmatched) + [
        i for i, role in enumerate(plan.shape.role) if role == "content" and i not in unmatched
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
            for x in ctx.lex.schema(p):
                if x.kind == "column" and x.table == ref.table and x.column == ref.column:
                    best = max(best, x.score)
        scores[ref] = best
    ranked = sorted(scores.items(), key=lambda kv: -kv[1])
    if ranked and ranked[0][1] >= 0.6 and (len(ranked) == 1 or ranked[0][1] - ranked[1][1] >= 0.2):
        return ranked[0][0]
    return None


# ---------------------------------------------------------------------------------------------
# date literals → filters


def date_literal(
    plan: Plan, ctx: Context, lit: Literal_, pending: list[Cue], last: Mention | None
) -> tuple[Plan, list[Cue]]:
    """Keep a date literal, its preposition and the date column just before it (if any) until the
    whole question is read; returns the plan and the cues still pending."""
    prep = next((c for c in reversed(pending) if c.kind in ("date_prep", "between")), None)
    subject = last if last is not None and date_subject(ctx.lex, last) and plan.adjacent(last, lit) else None
    how = (
        ("between" if prep.kind == "between" else prep.arg)
        if prep
        else ("in" if lit.kind != "period" else "")
    )
    plan = plan.but(
        used_literals=plan.used_literals | {lit.start},
        pending_dates=(*plan.pending_dates, (lit, how, subject)),
    )
    if subject is not None:
        plan = plan.with_role(subject, "subject")
    return plan, [c for c in pending if c.kind not in ("date_prep", "between")]


def date_filters(plan: Plan, ctx: Context) -> Plan:
    """Turn the pending dates into filters, now that the target and measures are known."""
    dates = list(plan.pending_dates)
    while dates:
        lit, prep, subject = dates.pop(0)
        plan, ref = date_column(plan, ctx, lit, subject)
        if prep == "between":
            if not dates or dates[0][0].kind != lit.kind:
                raise Decline(f"it could not read the range starting at '{lit.words}'", [lit.words])
            end = dates.pop(0)[0]
            plan = plan.with_query(filters=(*plan.query.filters, *_between(ctx, lit, end, ref)))
            continue
        plan = plan.with_query(filters=(*plan.query.filters, *_date_filters(plan, ctx, lit, prep, ref)))
    return plan


def _between(ctx: Context, first: Literal_, last: Literal_, ref: Ref) -> list[Filter]:
    words = f"between {first.words} and {last.words}"
    if column_kind(ctx.lex, ref.table, ref.column) in NUMERIC:
        if first.kind != "year":
            raise Decline(f"it could not compare '{words}' with the number column {ref.column}", [words])
        return [Filter(ref, ">=", first.value, words), Filter(ref, "<=", last.value, words)]
    lo, _ = period(ctx.today, first)
    _, hi = period(ctx.today, last)
    if lo is None or hi is None:
        raise Decline(f"it could not read the range '{words}'", [words])
    return [Filter(ref, "range", (lo, hi), words)]


def date_column(plan: Plan, ctx: Context, lit: Literal_, subject: Mention | None) -> tuple[Plan, Ref]:
    """The column a date literal restricts: the one named next to it, the one a time bucket groups
    by, else a date of the candidate tables, in their order."""
    if subject is not None and subject.sense is not None and subject.sense.column:
        return plan, Ref(subject.sense.table, subject.sense.column)
    if plan.time_column is not None:
        return plan, plan.time_column  # 'per month in 2025': the months of the same date
    lex = ctx.lex
    for table in candidate_tables(plan):
        t = lex.table(table)
        if t is None:
            continue
        if lit.kind == "year":
            years = [
                c.name
                for c in t.columns
                if c.kind in NUMERIC and c.name.lower() in ("year", f"{table.lower()}_year", "yr")
            ]
            if len(years) == 1:
                return plan, Ref(table, years[0])
        dates = own_dates(lex, table)
        if dates:
            return pick_date(plan, ctx, lit.words, dates)
        if lit.kind in ("year", "month"):
            years = [c.name for c in t.columns if c.kind in NUMERIC and "year" in c.name.lower()]
            if len(years) == 1:
                return plan, Ref(table, years[0])
        parents = parent_dates(lex, table)
        if parents:
            return pick_date(plan, ctx, lit.words, parents)
    raise Decline(f"it found no date to compare with '{lit.words}'", [lit.words])


def _date_filters(plan: Plan, ctx: Context, lit: Literal_, prep: str, ref: Ref) -> list[Filter]:
    kind = column_kind(ctx.lex, ref.table, ref.column)
    words = lit.words if not prep or prep == "in" else f"{prep} {lit.words}"
    if kind in NUMERIC:  # a year column
        if lit.kind not in ("year", "month") or (lit.kind == "month" and lit.value[0] is None):
            raise Decline(
                f"it could not compare '{lit.words}' with the number column {ref.column}", [lit.words]
            )
        year = lit.value if lit.kind == "year" else lit.value[0]
        out = [Filter(ref, year_comparison(plan, lit, prep), year, words)]
        if lit.kind == "month":
            if prep not in ("in", ""):
                raise Decline(f"it could not compare '{words}' with month names", [lit.words])
            month_col = _month_text_column(ctx.lex, ref.table)
            if month_col is None:
                raise Decline(f"it found no month to compare with '{lit.words}'", [lit.words])
            out.append(Filter(month_col, "=", calendar.month_name[lit.value[1]], words))
        return out
    lo, hi = period(ctx.today, lit)
    if lo is None and hi is None and lit.kind == "quarter":
        raise Decline(f"it could not tell which year '{lit.words}' is in", [lit.words])
    if lo is None and hi is None:  # a month of any year
        return [Filter(ref, "month", lit.value[1], words)]
    if prep == "before":
        return [Filter(ref, "range", (None, hi if _or_after(plan, lit) else lo), words)]
    if prep == "after" and lit.kind != "period":
        start = hi if plan.shape.tokens[lit.start - 1].low == "after" else lo
        return [Filter(ref, "range", (start, None), words)]
    return [Filter(ref, "range", (lo, hi), words)]


def year_comparison(plan: Plan, lit: Literal_, prep: str) -> Op:
    """How a year (or a number of a year column) compares after its preposition: 'before 1850'
    and 'after 1850' leave the year out, 'until 1850' and 'since 1850' take it in."""
    word = plan.shape.tokens[lit.start - 1].low if lit.start > 0 else ""
    if prep == "before":
        return "<=" if word in ("until", "till", "to") or _or_after(plan, lit) else "<"
    tokens = plan.shape.tokens
    ranged = lit.end < len(tokens) and tokens[lit.end].low in ("to", "until", "till", "through", "-")
    if prep == "after" and word == "from" and not ranged and not _or_after(plan, lit):
        return "="  # 'wines from 2008': of that year (not 'from 2008 to 2010')
    if prep == "after":
        return ">" if word == "after" and not _or_after(plan, lit) else ">="
    return "="


def _or_after(plan: Plan, lit: Literal_) -> bool:
    """'2011 or later', '2011 or earlier', '1990 onwards': the year itself is in (not 'before
    1890 and also …')."""
    return said_after(plan.shape, lit.end) is not None


def _month_text_column(lex: Lexicon, table: str) -> Ref | None:
    """A text column of `table` that stores month names ('April'), found in the value index."""
    for s in lex.values("April"):
        if s.table == table and s.kind == "value":
            return Ref(s.table, s.column or "")
    return None
