"""What one row of the answer is: grouping, the columns shown, and the default order.

Two shapes. An *aggregate* (a count, a sum, a HAVING, or an entity ranked by a measure) groups
by the listed entity's name and by what the question grouped by, and orders by time for time
groups, else by the measure, largest first. A *list* shows the columns asked for, with the
listed entity's name in front so each row can be told apart. Grouping by something while
naming nothing to compute per group is declined: it has no honest reading.
"""

from __future__ import annotations

from dataclasses import replace

from core.keyword.columns import TEMPORAL, column_kind, is_key, is_numeric, label_columns, ranking_measure
from core.keyword.match import Mention
from core.keyword.plan import Measure, OrderKey, Ref
from core.keyword.reader import Decline, Reader
from core.keyword.shapes import singular_phrase


def shape_output(r: Reader, listed: list[Mention]) -> None:
    """Fill in the groups or the projection, and the order, of `r.plan`."""
    plan = r.plan
    explicit = list(dict.fromkeys(Ref(m.sense.table, m.sense.column or "") for m in r.explicit if m.sense))
    ranked_entity = any(isinstance(o.key, Measure) for o in plan.order) or _ranked_by_child(r)
    if plan.ratio is not None and (plan.measures or plan.having or ranked_entity):
        raise Decline("it asks for a ratio of totals or averages, which keyword mode does not compute")
    if plan.measures or plan.having or ranked_entity:
        _aggregate_rows(r, listed, explicit, ranked_entity)
    else:
        _list_rows(r, listed, explicit)


def _aggregate_rows(r: Reader, listed: list[Mention], explicit: list[Ref], ranked_entity: bool) -> None:
    """Group by the listed entity and the columns asked for."""
    plan = r.plan
    target = plan.target
    assert target is not None
    if (listed or (ranked_entity and not plan.measures and not r.buckets)) and not explicit:
        # ('which month had the most payments' ranks the months, not the payments)
        entity = listed[0].sense.table if listed and listed[0].sense else target
        if not any(m.func == "COUNT" and m.column is None and m.table == entity for m in plan.measures):
            labels = [Ref(entity, c) for c in label_columns(r.lex, entity)]
            plan.groups = list(dict.fromkeys([*labels, *plan.groups]))
            noun = singular_phrase(listed[0].words) if listed else entity
            plan.names.update({ref: noun for ref in labels})
    plan.groups = list(dict.fromkeys([*explicit, *plan.groups]))
    for o in list(plan.order):
        if isinstance(o.key, Measure) and o.key not in plan.measures:
            plan.measures.append(o.key)
            if explicit:
                plan.hidden.append(o.key)  # 'the latitude of the business with the highest rating'
    if plan.having and not plan.groups:
        if plan.measures and all(m.func == "COUNT" and m.column is None for m in plan.measures):
            # 'how many authors have more than 2 papers': count the qualifying groups
            counted = plan.measures[0].table
            plan.groups = [Ref(counted, c) for c in (r.lex.key_of(counted) or label_columns(r.lex, counted))]
            plan.count_groups = plan.measures[0].words or counted
            plan.measures = []
        else:
            plan.groups = [Ref(target, c) for c in label_columns(r.lex, target)]
    _ranked_child_measure(r)
    for o in plan.order:
        if isinstance(o.key, Ref) and o.key not in plan.groups:
            same = [g for g in plan.groups if g.table == o.key.table]
            if same and (is_key(r.lex, o.key) or o.key.column.lower().endswith("id")):
                # 'each paper, ordered by the paper ID': show and group by the id
                plan.groups = [o.key if g == same[0] else g for g in plan.groups if g not in same[1:]]
            else:
                plan.groups.append(o.key)
    if plan.groups and not plan.order and plan.measures:
        g = plan.groups[0]
        temporal = column_kind(r.lex, g.table, g.column) in TEMPORAL or any(
            w in g.column.lower() for w in ("year", "month", "date", "day", "week", "quarter")
        )
        if r.order_dir is not None or r.alpha:
            plan.order.append(OrderKey(g if r.alpha else plan.measures[0], bool(r.order_dir)))
        elif temporal:
            plan.order.append(OrderKey(g, False))
        else:
            plan.order.append(OrderKey(plan.measures[0], True))
    elif r.order_dir is not None and plan.order:
        plan.order = [replace(o, desc=r.order_dir) if not o.words else o for o in plan.order]
    if not plan.groups and plan.order and not plan.count_groups:
        plan.order = []  # one row: nothing to order


def _list_rows(r: Reader, listed: list[Mention], explicit: list[Ref]) -> None:
    """The asked-for columns, else the entity's name ('the cities ... and their population': the
    listed entity's name comes first)."""
    plan = r.plan
    target = plan.target
    assert target is not None
    if plan.ratio is not None:
        # 'for each course id' names the rows of the ratio, one per row of its table
        if any(g.table != plan.ratio[0].table for g in plan.groups):
            raise Decline("it asks for a ratio per group, which keyword mode does not compute")
        explicit = list(dict.fromkeys([*explicit, *plan.groups]))
        plan.groups = []
    if plan.groups:
        raise Decline("it groups by something but names nothing to count or compute per group")
    labels = [Ref(target, c) for c in label_columns(r.lex, target)]
    plan.entity_rows = not explicit
    identifying = {c.lower() for c in label_columns(r.lex, target)} | {
        k.lower() for k in r.lex.key_of(target)
    }
    if (
        explicit
        and listed
        and not any(
            ref.table == target and (ref.column.lower() in identifying or ref.column.lower().endswith("id"))
            for ref in explicit
        )
    ):
        explicit = [*labels, *explicit]
    plan.projection = explicit or labels
    if plan.ratio is not None and not explicit:
        plan.projection = []  # 'the ratio of X to Y': the ratio is the answer
    if plan.order and not explicit and (listed or r.top):
        for o in plan.order:
            if isinstance(o.key, Ref) and o.key not in plan.projection:
                plan.projection.append(o.key)
    if r.shape.tokens and r.shape.tokens[0].low == "when":
        # 'when did the latest payment happen': the answer is the date
        dates = [ref for ref in plan.all_refs() if column_kind(r.lex, ref.table, ref.column) in TEMPORAL]
        if not dates:
            raise Decline("it could not tell which date 'when' asks for", ["when"])
        plan.projection += [d for d in dict.fromkeys(dates) if d not in plan.projection]
    if r.alpha and not plan.order:
        plan.order = [OrderKey(plan.projection[0], False)]
    elif r.order_dir is not None and plan.order:
        plan.order = [replace(o, desc=r.order_dir) for o in plan.order]
    elif r.order_dir is not None and not plan.order:
        raise Decline("it could not tell what to order by", [])


def _ranked_by_child(r: Reader) -> bool:
    """Ranking an entity by a column of another table ('clients by cpu hours') aggregates it."""
    if not r.plan.order or r.plan.target is None:
        return False
    key = r.plan.order[0].key
    return isinstance(key, Ref) and key.table != r.plan.target and bool(r.top or r.superlative)


def _ranked_child_measure(r: Reader) -> None:
    """'top clients by cpu hours': each client's usage rows added up (averaged for rates)."""
    plan = r.plan
    for k, o in enumerate(plan.order):
        if (
            isinstance(o.key, Ref)
            and o.key.table != plan.target
            and plan.groups
            and not any(g.table == o.key.table for g in plan.groups)
        ):
            if not is_numeric(r.lex, o.key):
                continue
            measure = ranking_measure(o.key, o.words)
            plan.order[k] = OrderKey(measure, o.desc, o.words)
            if measure not in plan.measures:
                plan.measures.append(measure)
                if r.explicit:
                    plan.hidden.append(measure)
            plan.notes.append(
                f"each {plan.target}'s {o.key.table} rows {'averaged' if measure.func == 'AVG' else 'added up'}"
            )
