"""The table the question is about, and the tables its view must join.

The target decides what a row of the answer stands for and whose dates 'in 2025' restricts: the
entity the question lists or ranks ('which clients …'), else the table it counts, else any
entity it names, a column it asks to see, what it measures, orders or filters — in that order,
because the earlier ones say more directly what the person wants back.
"""

from __future__ import annotations

from core.keyword.match import Lexicon, Mention
from core.keyword.plan import Measure, OrderKey, Plan, Ref
from core.keyword.reader import Decline, Reader


def choose_target(r: Reader, listed: list[Mention]) -> str:
    plan = r.plan
    entity_tables = [m.sense.table for m, _ in r.entities if m.sense]
    target: str | None = None
    if listed:
        target = listed[0].sense.table if listed[0].sense else None
    elif any(m.func == "COUNT" and m.column is None for m in plan.measures):
        target = next(m.table for m in plan.measures if m.func == "COUNT" and m.column is None)
    elif entity_tables:
        target = entity_tables[0]
    elif r.explicit:
        target = r.explicit[0].sense.table if r.explicit[0].sense else None
    elif plan.measures:
        target = plan.measures[0].table
    elif plan.order and isinstance(plan.order[0].key, Ref):
        target = plan.order[0].key.table
    elif plan.order and isinstance(plan.order[0].key, Measure):
        target = plan.order[0].key.table  # 'which month had the most payments'
    elif plan.ratio is not None:
        target = plan.ratio[0].table
    elif plan.filters:
        target = plan.filters[0].ref.table
    if target is None:
        raise Decline("none of its words named a table or a column")
    return target


def joined_tables(r: Reader) -> list[str]:
    """Every table the plan touches, the target first (the view joins them, core/view.py)."""
    plan = r.plan
    entity_tables = [m.sense.table for m, _ in r.entities if m.sense and r.role(m).kind == "entity"]
    local_keys(plan, r.lex, entity_tables)
    tables = [plan.target or "", *entity_tables]
    tables += [ref.table for ref in plan.all_refs()]
    tables += [h.measure.table for h in plan.having] + [m.table for m in plan.measures]
    tables += [o.key.table for o in plan.order if isinstance(o.key, Measure)]
    return list(dict.fromkeys(tables))


def local_keys(plan: Plan, lex: Lexicon, entity_tables: list[str]) -> None:
    """Read a column where another needed table already holds it: 'lakes per state' groups by
    lake.state_name rather than joining state for state.state_name (the join's own key)."""
    needed = {t.lower() for t in entity_tables}
    needed |= {m.table.lower() for m in plan.measures} | {h.measure.table.lower() for h in plan.having}
    needed |= {f.ref.table.lower() for f in plan.filters}
    needed |= {o.key.table.lower() for o in plan.order if isinstance(o.key, Measure)}
    if plan.target:
        needed.add(plan.target.lower())  # the view always holds it
    edges = [e for e in lex.db.graph.edges if len(e.columns) == 1 and not e.is_self]

    def local(ref: Ref) -> Ref:
        if ref.table.lower() in needed:
            return ref
        for e in edges:
            ends = [
                ((e.table, e.columns[0]), (e.ref_table, e.ref_columns[0])),
                ((e.ref_table, e.ref_columns[0]), (e.table, e.columns[0])),
            ]
            for (ta, ca), (tb, cb) in ends:
                if (
                    ta.lower() == ref.table.lower()
                    and ca.lower() == ref.column.lower()
                    and tb.lower() in needed
                ):
                    return Ref(tb, cb)
        return ref

    plan.groups = list(dict.fromkeys(local(ref) for ref in plan.groups))
    plan.projection = list(dict.fromkeys(local(ref) for ref in plan.projection))
    plan.order = [
        OrderKey(local(o.key), o.desc, o.words) if isinstance(o.key, Ref) else o for o in plan.order
    ]
