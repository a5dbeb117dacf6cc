"""Comparisons and presence tests: the WHERE and HAVING conditions that are not dates.

'rating above 4' compares the column before; 'more than 2 papers' counts what follows (HAVING);
'orders above 50' compares the one number an order has; 'paper ID 2' and '3 stops' pin the
column next to the number; 'with a final exam' asks that a column be filled in. Stored values
('active', 'Zürich') become filters in core/keyword/walk.py; several values of one column
are merged into IN here. Whatever number or column none of these rules can place is declined.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from core.keyword.columns import (
    CURRENCY_SIGNS,
    TEMPORAL,
    age_column,
    column_kind,
    date_subject,
    is_numeric,
    measure_column,
    money_column,
)
from core.keyword.match import Mention
from core.keyword.plan import Context, Decline, Filter, Having, Measure, Op, Plan, Ref
from core.keyword.shapes import Literal_


def compare(
    plan: Plan,
    ctx: Context,
    op: Op,
    value: float,
    words: str,
    last: Mention | None,
    nxt: Mention | None,
    paid: bool = False,
) -> Plan:
    """'rating above 4' (the column before), 'an average rating above 4' (that average),
    'more than 2 papers' (a count of what follows); `paid`: said after a verb of pay ('employees
    making more than 30k'), an amount of money like '$30,000'."""
    money = paid or any(c in words for c in CURRENCY_SIGNS)
    number = int(value) if float(value).is_integer() else value
    if (
        last is not None
        and last.sense is not None
        and (last.sense.column or "").lower().endswith("id")
        and not {"id", "ids", "number", "code"} & set(last.words.lower().split())
    ):
        last = None  # 'festivals that have at least two …' matched festival_id: no id is 'at least two'
    counted_next = nxt is not None and nxt.sense is not None and nxt.sense.kind == "table"
    said = _compared_column(ctx, last, counted_next, words, money)
    if said is None and (words.split()[0].lower() in ("older", "younger") or money):
        # an age or an amount of money whose column the question does not make plain: never a
        # count of what follows, nor whatever number is named next
        raise Decline(f"it could not tell which column '{words}' compares", [words])
    measured = next(
        (x for x in plan.query.measures if x.ref == said and x.func in ("AVG", "SUM", "MIN", "MAX")), None
    )
    if last is not None and measured is not None and plan.role(last).kind == "measure":
        # 'items with an average rating above 5', 'schools that received total endowments of at
        # most 10': the average or total is compared, not each row's number
        return plan.adding(having=Having(measured, op, number, f"{measured.words} {words}"))
    if (
        last is not None
        and last.sense is not None
        and last.sense.kind == "column"
        and said is not None
        and (is_numeric(ctx.lex, said) or column_kind(ctx.lex, said.table, said.column) in TEMPORAL)
    ):
        role = plan.role(last)
        if role.kind in ("", "projection", "subject") and not role.governed_by_list:
            plan = plan.with_role(last, "subject")
        return plan.adding(filters=Filter(said, op, number, f"{last.words} {words}"))
    if last is not None and last.sense is not None and last.sense.kind == "table" and said is not None:
        # 'orders above 50': the one number an order has
        plan = plan.adding(filters=Filter(said, op, number, f"{last.words} {words}"))
        return plan.noted(f"'{words}' read as {said.table} {said.column}")
    if nxt is not None and nxt.sense is not None:
        s = nxt.sense
        if s.kind == "table":
            # 'more than 2 papers': the number counts the thing that follows it
            having = Having(Measure("COUNT", s.table, words=nxt.words), op, number, f"{words} {nxt.words}")
            return plan.with_role(nxt, "having").adding(having=having)
        if s.kind == "value":
            # 'swimmers with more than one win': a count of the rows holding the value, which
            # still filters them (Result = 'Win')
            having = Having(Measure("COUNT", s.table, words=nxt.words), op, number, f"{words} {nxt.words}")
            return plan.adding(having=having)
        if s.kind == "column" and s.column and s.column.lower().endswith("id"):
            # 'at least 4 transactions' matched transaction_id: the number counts them
            measure = Measure("COUNT", s.table, s.column, True, nxt.words)
            return plan.with_role(nxt, "having").adding(
                having=Having(measure, op, number, f"{words} {nxt.words}")
            )
        if s.kind == "column" and s.column and is_numeric(ctx.lex, Ref(s.table, s.column)):
            f = Filter(Ref(s.table, s.column), op, number, f"{words} {nxt.words}")
            return plan.with_role(nxt, "subject").adding(filters=f)
    raise Decline(f"it could not tell what '{words}' applies to", [words])


def _compared_column(
    ctx: Context, last: Mention | None, counted_next: bool, words: str, money: bool
) -> Ref | None:
    """The column a comparison after `last` is about: the column named, or the one number of the
    table named ('orders above 50') unless the number counts the table after it; of people,
    'under 20' and 'over 65' are their age ('students under 20')."""
    if last is None or last.sense is None:
        return None
    if last.sense.kind == "column" and last.sense.column:
        return Ref(last.sense.table, last.sense.column)
    if last.sense.kind != "table":
        return None
    table, first = last.sense.table, words.split()[0].lower()
    if first in ("older", "younger"):
        return age_column(ctx.lex, table)  # 'pilots younger than 34 …': never a count of what follows
    if money:
        column = money_column(ctx.lex, table)  # 'wines over $100': the price, not the year
        return Ref(table, column) if column is not None else None
    if counted_next:
        return None
    column = measure_column(ctx.lex, table)
    if column is None and first in ("under", "over", "aged"):
        return age_column(ctx.lex, table)
    return Ref(table, column) if column is not None else None


def numeric_neighbour(
    plan: Plan, ctx: Context, lit: Literal_, last: Mention | None, nxt: Mention | None
) -> tuple[Mention, Ref] | None:
    """The column a bare number is a value of: named just before ('semester 1'), or a number
    column just after ('3 stops')."""
    if last is not None and plan.adjacent(last, lit) and last.sense is not None:
        s = last.sense
        if s.kind == "column" and s.column and plan.role(last).kind in ("", "projection", "loose"):
            return last, Ref(s.table, s.column)  # 'for zip code 94107': named with no cue before it
        key = ctx.lex.key_of(s.table)
        if (
            s.kind == "table"
            and last.end == lit.start
            and lit.kind == "number"
            and len(key) == 1
            and is_numeric(ctx.lex, Ref(s.table, key[0]))
        ):
            return last, Ref(s.table, key[0])  # 'the receipt date for document 3': its key
    if lit.kind == "number" and nxt is not None and nxt.sense is not None and plan.adjacent_after(lit, nxt):
        s = nxt.sense
        if s.kind == "column" and s.column and is_numeric(ctx.lex, Ref(s.table, s.column)):
            return nxt, Ref(s.table, s.column)
    return None


def place_loose_columns(plan: Plan, ctx: Context) -> Plan:
    """Columns named with no cue: the column of a neighbouring value ('city of Boston'), a
    column to show (list questions), or something keyword mode cannot place."""
    for m in plan.loose_columns:
        s = m.sense
        assert s is not None
        if plan.role(m).kind == "subject":
            continue  # 'in the year 2021': the date literal after it claimed it
        ref = Ref(s.table, s.column or "")
        q = plan.query
        ordered_only = ref not in replace(q, order=()).all_refs()
        if any(f.ref == ref for f in q.filters) or (ref in q.all_refs() and not ordered_only):
            plan = plan.with_role(m, "absorbed")  # 'city of Boston', or named twice ('range in miles')
            continue
        # a column also named to order by is still asked for here ('… and the themes of the
        # journals, ordered by theme'): the order does not show it
        if date_subject(ctx.lex, m):
            dated = _dates_it(plan, m)
            if dated is not None:
                plan = dated.with_role(m, "subject")
                continue
        joining = {k for c in plan.shape.cues if c.kind == "and" for k in range(c.start, c.end)}
        # 'along with the ids of …' lists, it does not say the thing is there
        tokens = plan.shape.tokens
        near = max(0, m.start - 3)
        near = max([near, *(k + 1 for k in range(near, m.start) if tokens[k].kind == "punct")])
        # ('for each club with coaches: club id, …': the 'with' before the colon is not this one's)
        before = {tokens[k].low for k in range(near, m.start) if k not in joining}
        lows = [t.low for t in tokens[max(0, m.start - 2) : m.start]]
        q = plan.query
        if lows in (["with", "their"], ["with", "its"]) or (
            lows in (["with", "the"], [",", "with"]) and (plan.explicit or q.measures)
        ):
            # 'all budget type codes with their descriptions', 'pilot names with the fleet series
            # of the aircraft they flew', 'the average amount per lot, with the lot id', 'the
            # number of items in each order, with order id': shown beside them, not a condition
            plan = plan.with_role(m, "projection").but(explicit=(*plan.explicit, m))
            continue
        if before & {"have", "has", "had", "having", "with"}:
            # 'courses with a final exam', 'students who have a minor': the thing is there
            boolean = column_kind(ctx.lex, ref.table, ref.column) == "boolean" or re.match(
                r"(has|is|can|was|did)_", ref.column.lower()
            )
            f = Filter(ref, "true" if boolean else "present", None, m.words)
            plan = plan.with_role(m, "filter").adding(filters=f)
            continue
        raise Decline(f"it could not tell how '{m.words}' affects the result", [m.words])
    return plan


def _dates_it(plan: Plan, m: Mention) -> Plan | None:
    """'commissioned in 2020', 'commissioned per year': a date column named by a verb is the
    date of the first date literal and of the first time bucket that have none named yet."""
    used = False
    if plan.pending_dates and plan.pending_dates[0][2] is None:
        lit, prep, _ = plan.pending_dates[0]
        plan = plan.but(pending_dates=((lit, prep, m), *plan.pending_dates[1:]))
        used = True
    if plan.buckets and plan.buckets[0][1] is None:
        plan = plan.but(buckets=((plan.buckets[0][0], m), *plan.buckets[1:]))
        used = True
    return plan if used else None


def require_both(plan: Plan, ctx: Context) -> Plan:
    """'Which storms affected both Afghanistan and Albania?': the rows with either value, and only
    the things that have them all — a HAVING on how many different values each one has. The
    listed thing is then a group (output.shape_output), as for any HAVING."""
    if not plan.both:
        return plan
    filters: list[Filter] = []
    having = list(plan.query.having)
    for ref in plan.both:
        eq = [f for f in plan.query.filters if f.ref == ref and f.op == "=" and isinstance(f.value, str)]
        values = tuple(dict.fromkeys(f.value for f in eq))
        if len(values) < 2:
            raise Decline("it could not tell which values 'both' asks for", ["both"])
        words = " and ".join(f.words for f in eq)
        filters.append(Filter(ref, "in", values, words))
        counted = Measure("COUNT", ref.table, ref.column, True, f"different {ref.column}")
        having.append(Having(counted, ">=", len(values), f"both {words}"))
    kept = [f for f in plan.query.filters if not (f.ref in plan.both and f.op == "=")]
    return plan.with_query(filters=(*kept, *filters), having=tuple(having))


def merge_filters(plan: Plan, ctx: Context) -> Plan:
    """Several values of one column joined by 'or': any of them ('grade A or C'). Joined by 'and'
    they could mean either or both ('clients in Berlin and Paris'), or two roles ('from Berlin to
    Paris'): keyword mode declines rather than pick one. Two ranges of one column in a question
    that says 'or' are declined too: the filters are ANDed, and 'before X or after Y' is not both."""
    merged: list[Filter] = []
    by_ref: dict[Ref, list[Filter]] = {}
    for f in plan.query.filters:
        by_ref.setdefault(f.ref, []).append(f)
    said_or = any(c.kind == "or" for c in plan.shape.cues)
    for ref, fs in by_ref.items():
        ranges = [f for f in fs if f.op in ("<", "<=", ">", ">=", "range")]
        if said_or and len(ranges) > 1:  # 'before 1989 or after 2007': a query of ANDs cannot say it
            words = " or ".join(f"'{f.words}'" for f in ranges)
            raise Decline(f"it cannot ask for rows that meet either {words}", [f.words for f in ranges])
        eq = [f for f in fs if f.op == "="]
        if len(eq) > 1 and all(isinstance(f.value, str) for f in eq):
            if not _joined_by_or(plan, ref):
                words = " and ".join(f"'{f.words}'" for f in eq)
                raise Decline(
                    f"it could not tell whether {words} means either of them or both", [f.words for f in eq]
                )
            if _and_after_or(plan, ref):
                raise Decline(
                    "it could not tell whether what follows 'and' holds for each of the values joined "
                    "by 'or' or only for the last",
                    [f.words for f in eq],
                )
            values = tuple(dict.fromkeys(f.value for f in eq))
            merged.append(Filter(ref, "in", values, " or ".join(f.words for f in eq)))
            merged.extend(f for f in fs if f.op != "=")
        else:
            merged.extend(fs)
    if said_or and _or_between(plan, merged):
        # 'records with an attendance above 100 or a ticket price below 10': ANDed, it is neither
        raise Decline("it cannot ask for rows that meet either of two conditions", [f.words for f in merged])
    return plan.with_query(filters=tuple(merged))


def _or_between(plan: Plan, filters: list[Filter]) -> bool:
    """An 'or' of the question stands between the words of two filters on different columns,
    with no word of another filter between them ('East Julianaside, Texas or Gleasonmouth,
    Arizona': Texas or Gleasonmouth, a state or a city)."""
    lows = [t.low.strip("'\"") for t in plan.shape.tokens]
    refs = {f.ref for f in filters}
    at: list[tuple[int, Ref]] = []
    for m in plan.matching.mentions:  # 'whose city area is greater than 10': where its column is named
        if m.sense is not None and Ref(m.sense.table, m.sense.column or "") in refs:
            at.append((m.start, Ref(m.sense.table, m.sense.column or "")))
    placed = {ref for _, ref in at}
    for f in filters:
        words = f.words.lower().split()
        for n in (len(words), 1) if f.ref not in placed else ():  # the words said, else the first
            i = next((i for i in range(len(lows) - n + 1) if words and lows[i : i + n] == words[:n]), None)
            if i is not None:
                at.append((i, f.ref))
                break
    at = sorted(set(at), key=lambda x: x[0])
    return any(
        a_ref != b_ref and any(c.kind == "or" and a < c.start < b for c in plan.shape.cues)
        for (a, a_ref), (b, b_ref) in itertools.pairwise(at)
    )


def _and_after_or(plan: Plan, ref: Ref) -> bool:
    """'in the AS division, or in the EN division and located in the NEB building': after the
    last value of `ref`, an 'and' leads to a filter of another column — the 'or' may join the
    first value to everything after it, not only to the second value."""
    spans = [
        m
        for m in plan.matching.mentions
        if m.sense is not None
        and m.sense.kind == "value"
        and (m.sense.table, m.sense.column) == (ref.table, ref.column)
    ]
    if not spans:
        return False
    last = max(m.end for m in spans)
    joint = next((c.start for c in plan.shape.cues if c.kind == "and" and c.start >= last), None)
    return joint is not None and any(
        m.start > joint
        and m.sense is not None
        and m.sense.kind == "value"
        and (m.sense.table, m.sense.column) != (ref.table, ref.column)
        for m in plan.matching.mentions
    )


def _joined_by_or(plan: Plan, ref: Ref) -> bool:
    """Every two neighbouring values of `ref` in the question have an 'or' between them."""
    spans = sorted(
        (m.start, m.end)
        for m in plan.matching.mentions
        if m.sense is not None
        and m.sense.kind == "value"
        and plan.role(m).kind == "filter"
        and (m.sense.table, m.sense.column) == (ref.table, ref.column)
    )
    tokens = plan.shape.tokens
    return len(spans) > 1 and all(
        any(t.low == "or" for t in tokens[a_end:b_start])
        for (_, a_end), (b_start, _) in itertools.pairwise(spans)
    )
