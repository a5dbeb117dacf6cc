"""Superlatives and 'top N': which column ranks the rows, and how many rows are kept.

'which X has the highest Y' ranks X by Y and keeps the first X (or ten, for a plural with no
number); 'what is the highest Y' asks for MAX(Y) instead, since nothing is named to list. An
adjective that names no column implies one ('the longest river' → length, 'the most recent' →
the table's one date), and only when exactly one column fits — otherwise keyword mode declines.
"""

from __future__ import annotations

from core.keyword.columns import NUMERIC, age_column, column_kind, date_subject, is_birth_date
from core.keyword.dates import own_dates, pick_date
from core.keyword.match import Mention
from core.keyword.plan import Context, Decline, Measure, OrderKey, Plan, Ref
from core.keyword.shapes import LATER_ADJ, PAID, TEMPORAL_ADJ, Cue, everything_at, is_plural

# Nouns an adjective implies when the question names no column ('longest river' → length).
IMPLIED = {
    "longest": ("length", "duration", "distance"),
    "shortest": ("length", "duration", "distance", "height"),
    "largest": ("size", "area", "population", "capacity", "amount"),
    "biggest": ("size", "area", "population", "capacity", "amount"),
    "smallest": ("size", "area", "population", "capacity", "amount"),
    "tallest": ("height", "altitude", "elevation"),
    "heaviest": ("weight",),
    "lightest": ("weight",),
    "fastest": ("speed",),
    "slowest": ("speed",),
    "cheapest": ("price", "cost", "fare"),
    "most expensive": ("price", "cost", "fare"),
    "least expensive": ("price", "cost", "fare"),
    "costliest": ("price", "cost"),
    "priciest": ("price", "cost"),
    "richest": ("income", "revenue", "wealth"),
    "busiest": ("traffic", "volume"),
    "highest rated": ("rating", "score", "stars"),
    "best rated": ("rating", "score", "stars"),
    "lowest rated": ("rating", "score", "stars"),
    **dict.fromkeys(PAID, ("salary", "wage", "pay", "income")),
    "best": ("rating", "score"),
    "worst": ("rating", "score"),
}


AGE_ADJ = {"youngest": False, "oldest": True}  # by an age column: oldest is the highest age


def implied_superlative(plan: Plan, ctx: Context) -> Plan:
    """'the longest rivers' names no column: the adjective implies one ('length')."""
    if (
        plan.superlative is None
        or plan.superlative[1] is not None
        or any(isinstance(o.key, Measure) for o in plan.query.order)
    ):
        return plan
    cue = plan.superlative[0]
    adj = cue.words.lower()
    if adj in TEMPORAL_ADJ:
        for m in plan.loose_columns:
            # 'which minister left office most recently': the column said right before it
            right_before = m.end == cue.start
            if (date_subject(ctx.lex, m) or right_before) and m.sense is not None and m.sense.column:
                # 'which datacenter opened most recently': the date the verb names
                key = OrderKey(Ref(m.sense.table, m.sense.column), adj in LATER_ADJ, f"{m.words} {cue.words}")
                plan = plan.but(loose_columns=tuple(x for x in plan.loose_columns if x.start != m.start))
                return plan.with_role(m, "order").adding(order=key)
    # the thing the adjective is said of ('which order had the latest shipment': the shipment),
    # else the first thing named
    entities = sorted(plan.entities, key=lambda e: (e[0].start < cue.end, e[0].start))
    tables = [m.sense.table for m, _ in entities if m.sense] or [f.ref.table for f in plan.query.filters]
    if not tables:
        raise Decline(f"it could not tell what '{cue.words}' ranks", [cue.words])
    table = tables[0]
    t = ctx.lex.table(table)
    assert t is not None
    column: str | None = None
    age = age_column(ctx.lex, table)
    if adj in AGE_ADJ and age is not None:  # 'the youngest captain': the lowest age, not the latest date
        column, desc = age.column, AGE_ADJ[adj]
    elif adj in TEMPORAL_ADJ:
        dates = own_dates(ctx.lex, table)  # several: the words pick one ('signed up'), or ask
        born = [d for d in dates if is_birth_date(d.column)]  # a date of birth ranks people by age
        if adj in AGE_ADJ and len(born) == 1:
            column = born[0].column  # 'the oldest employee': the earliest birth date, not hire date
        elif dates:
            plan, date = pick_date(plan, ctx, cue.words, dates)
            column = date.column
        desc = adj in LATER_ADJ
    else:
        desc = cue.arg == "desc"
        # the first of the things named that has the column ('the heaviest perpetrator's name':
        # the people row a perpetrator is, which has the weight)
        for noun, owner in ((n, o) for o in dict.fromkeys(tables) for n in IMPLIED.get(adj, ())):
            hits = [
                x for x in ctx.lex.schema(noun) if x.kind == "column" and x.table == owner and x.score >= 0.85
            ]
            if hits:
                table, column = owner, hits[0].column
                break
    if column is None:
        raise Decline(f"it could not tell which column '{cue.words}' ranks by", [cue.words])
    plan = plan.adding(order=OrderKey(Ref(table, column), desc, cue.words))
    return plan.noted(f"'{cue.words}' read as {'highest' if desc else 'lowest'} {table} {column}")


def _ends_with_its_table(plan: Plan, ctx: Context, mention: Mention) -> bool:
    """'the most recently formed organization': the column's phrase ends on the noun that names
    its own table, so the thing is asked for (ranked by the column), not the column's extreme."""
    if mention.sense is None or mention.sense.column is None or mention.end - mention.start < 2:
        return False
    head = plan.shape.tokens[mention.end - 1].low
    return any(
        s.kind == "table" and s.table == mention.sense.table and s.score >= 0.9 for s in ctx.lex.schema(head)
    )


def _listed_beside(plan: Plan, cue: Cue) -> bool:
    """'the average age and the youngest age': the superlative is one more figure in a list of
    them ('and' or a comma before it), not the ranking of a thing ('the dorm with the largest
    capacity')."""
    tokens = plan.shape.tokens
    j = cue.start - 1
    while j >= 0 and tokens[j].low in ("the", "a", "an"):
        j -= 1
    return j >= 0 and tokens[j].low in ("and", ",") and all(m.column is not None for m in plan.query.measures)


def superlative(plan: Plan, ctx: Context) -> Plan:
    """'which X has the highest Y' ranks X (LIMIT 1 for one X); 'what is the highest Y' is MAX(Y)."""
    listed = plan.listed()
    if plan.superlative is None and plan.top is not None and not plan.query.order:
        plan = _top_by_itself(plan, ctx, plan.top[0])
    if plan.superlative is None:
        if plan.top is not None and plan.top[1] is None:
            cue = plan.top[0]
            limit = 1 if listed and not is_plural(listed[0].words) else 10
            return plan.with_query(limit=limit).noted(f"'{cue.words}' without a number: the first {limit}")
        if plan.top is not None:
            return plan.with_query(limit=plan.top[1])
        return plan
    cue, col_mention = plan.superlative
    if plan.top is not None and plan.top[1] is not None:
        return plan.with_query(limit=plan.top[1])
    # 'for each film, show its title and the highest price': per group, the highest is MAX;
    # 'who has the most followers' asks for someone, not the number
    who = bool(plan.shape.tokens) and plan.shape.tokens[0].low == "who"
    # 'all details of the airport with the most passengers' asks for the airport, every column
    wants_entity = (
        bool(listed)
        or (bool(plan.explicit) and not plan.query.groups)
        or who
        or bool(everything_at(plan.shape))
        or (col_mention is not None and _ends_with_its_table(plan, ctx, col_mention))
    )
    if (
        not wants_entity
        and col_mention is not None
        and (not plan.query.measures or _listed_beside(plan, cue))
    ):
        # 'what is the highest population' → MAX(population)
        key = plan.query.order[-1]
        assert isinstance(key.key, Ref)
        measure = Measure("MAX" if key.desc else "MIN", key.key.table, key.key.column, words=key.words)
        plan = plan.with_query(order=plan.query.order[:-1]).with_role(col_mention, "measure")
        return plan.adding(measures=measure)
    ranked_by = [o.key for o in plan.query.order if isinstance(o.key, Measure)]
    figures = {(x.func, x.table, x.column, x.distinct) for x in plan.query.measures}
    ranked = {(x.func, x.table, x.column, x.distinct) for x in ranked_by}
    if ranked and not listed and not plan.explicit and not plan.query.groups and figures - ranked:
        # 'the average access count of documents in the structure with the fewest documents':
        # a figure of the one group ranked first, which one query over all rows does not give
        raise Decline(
            f"it asks for a figure of the one thing '{cue.words}' picks, which keyword mode does not compute",
            [cue.words],
        )
    if plan.shape.after_order_cue(cue.start):
        # 'station names ordered by the highest dock count': says which way, not one row: every row
        return plan
    noun = listed[0].words if listed else (plan.explicit[0].words if plan.explicit else "")
    if plan.top is not None:
        return plan.with_query(limit=1 if not is_plural(noun) else 10)
    if not noun or not is_plural(noun) or not listed:
        return plan.with_query(limit=1)
    one = _one_ranked(plan, cue, listed[0])
    if one is not None:
        # 'the cities in the county with the most police officers': the rows of the one county
        # ranked first, which one ranked list of cities does not give
        raise Decline(
            f"it asks for the {listed[0].words} of the one {one.words} ranked first, which keyword mode "
            "does not compute",
            [one.words, cue.words],
        )
    return plan  # plural and no number: every row, ranked ('which states have the highest density')


def _top_by_itself(plan: Plan, ctx: Context, cue: Cue) -> Plan:
    """'the top 3 support rates' names nothing to rank by but the one number column it lists:
    rank by it. With anything else, the first rows would be any rows: declined."""
    refs = [Ref(m.sense.table, m.sense.column) for m in plan.explicit if m.sense and m.sense.column]
    if (
        len(refs) == 1
        and column_kind(ctx.lex, refs[0].table, refs[0].column) in NUMERIC
        and not plan.query.measures
    ):
        return plan.adding(order=OrderKey(refs[0], cue.arg == "desc", cue.words))
    if plan.query.measures or plan.query.groups:
        return plan  # 'the top 3 cities by number of …' is ranked by the count (shape_output)
    raise Decline(f"it could not tell what '{cue.words}' ranks by", [cue.words])


RANKED_BY = frozenset(["with", "that", "which", "has", "have", "had", "having", "the"])


def _one_ranked(plan: Plan, cue: Cue, listed: Mention) -> Mention | None:
    """The one thing of another table the superlative ranks: 'the county' in '… in the county
    with the most police officers'."""
    tokens = plan.shape.tokens
    for m, _ in plan.entities:
        if m.sense is None or listed.sense is None or m.sense.table == listed.sense.table:
            continue
        between = {t.low for t in tokens[m.end : cue.start]}
        if (
            m.end <= cue.start
            and between <= RANKED_BY
            and "the" in between
            and m.start > 0
            and tokens[m.start - 1].low == "the"
            and not is_plural(m.words)
        ):
            return m
    return None
