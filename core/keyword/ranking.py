"""Superlatives and 'top N': which column ranks the rows, and how many rows are kept.

'which X has the highest Y' ranks X by Y and keeps the first X (or ten, for a plural with no
number); 'what is the highest Y' asks for MAX(Y) instead, since nothing is named to list. An
adjective that names no column implies one ('the longest river' → length, 'the most recent' →
the table's one date), and only when exactly one column fits — otherwise keyword mode declines.
"""

from __future__ import annotations

from core.keyword.date_columns import own_dates, pick_date
from core.keyword.match import Mention
from core.keyword.plan import Measure, OrderKey, Ref
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import is_plural

# Nouns an adjective implies when the question names no column ('longest river' → length).
IMPLIED = {
    "longest": ("length", "duration", "distance"),
    "shortest": ("length", "duration", "distance"),
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
    "best": ("rating", "score"),
    "worst": ("rating", "score"),
}
TEMPORAL_ADJ = frozenset(
    ["latest", "newest", "earliest", "oldest", "most recent", "most recently", "least recent", "youngest"]
)
LATER_ADJ = frozenset(["latest", "newest", "most recent", "most recently", "youngest"])  # latest date first


def implied_superlative(r: Reader) -> None:
    """'the longest rivers' names no column: the adjective implies one ('length')."""
    if (
        r.superlative is None
        or r.superlative[1] is not None
        or any(isinstance(o.key, Measure) for o in r.plan.order)
    ):
        return
    cue = r.superlative[0]
    adj = cue.words.lower()
    if adj in TEMPORAL_ADJ:
        for m in list(r.loose_columns):
            if r.date_subject(m) and m.sense is not None and m.sense.column:
                # 'which datacenter opened most recently': the date the verb names
                r.loose_columns.remove(m)
                r.role(m).kind = "order"
                key = OrderKey(Ref(m.sense.table, m.sense.column), adj in LATER_ADJ, f"{m.words} {cue.words}")
                r.plan.order.append(key)
                return
    tables = [m.sense.table for m, _ in r.entities if m.sense] or [f.ref.table for f in r.plan.filters]
    if not tables:
        raise Decline(f"it could not tell what '{cue.words}' ranks", [cue.words])
    table = tables[0]
    t = r.lex.table(table)
    assert t is not None
    column: str | None = None
    if adj in TEMPORAL_ADJ:
        dates = own_dates(r.lex, table)  # several: the words pick one ('signed up'), or ask
        column = pick_date(r, cue.words, dates).column if dates else None
        desc = adj in LATER_ADJ
    else:
        desc = cue.arg == "desc"
        for noun in IMPLIED.get(adj, ()):
            hits = [
                x for x in r.lex.schema(noun) if x.kind == "column" and x.table == table and x.score >= 0.85
            ]
            if hits:
                column = hits[0].column
                break
    if column is None:
        raise Decline(f"it could not tell which column '{cue.words}' ranks by", [cue.words])
    r.plan.order.append(OrderKey(Ref(table, column), desc, cue.words))
    r.plan.notes.append(f"'{cue.words}' read as {'highest' if desc else 'lowest'} {table} {column}")


def superlative(r: Reader, listed: list[Mention]) -> None:
    """'which X has the highest Y' ranks X (LIMIT 1 for one X); 'what is the highest Y' is MAX(Y)."""
    plan = r.plan
    if r.superlative is None:
        if r.top is not None and r.top[1] is None:
            cue = r.top[0]
            plan.limit = 1 if listed and not is_plural(listed[0].words) else 10
            plan.notes.append(f"'{cue.words}' without a number: the first {plan.limit}")
        elif r.top is not None:
            plan.limit = r.top[1]
        return
    cue, col_mention = r.superlative
    if r.top is not None and r.top[1] is not None:
        plan.limit = r.top[1]
        return
    wants_entity = bool(listed) or bool(r.explicit)
    if not wants_entity and col_mention is not None and not plan.measures:
        # 'what is the highest population' → MAX(population)
        key = plan.order.pop()
        assert isinstance(key.key, Ref)
        r.role(col_mention).kind = "measure"
        plan.measures.append(
            Measure("MAX" if key.desc else "MIN", key.key.table, key.key.column, words=key.words)
        )
        return
    noun = listed[0].words if listed else (r.explicit[0].words if r.explicit else "")
    if r.top is not None:
        plan.limit = 1 if not is_plural(noun) else 10
    elif not noun or not is_plural(noun) or not listed:
        plan.limit = 1
    # plural and no number: every row, ranked ('which states have the highest density')
