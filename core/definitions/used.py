"""Which definitions an answer's SQL actually used, so the answer can say so ("Using: loss ratio").

A definition counts as used when the SQL that ran
- names it like a table (it was expanded into a CTE), or
- contains its snippet: a metric's aggregate and filter (over its table), a filter's condition,
  a relationship's ON condition, or an entity's filter — compared as sqlglot trees with table
  qualifiers and identifier case set aside (the writer aliases tables as it likes), so
  `SUM(ca.amount)` is `SUM(amount)` over claim_amount;
- a ratio counts when both its parts do.

Nothing here trusts the writer's say-so: what is claimed must be in the SQL.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlglot
from sqlglot import exp

from core.definitions.model import Definition, ref_of


def used(
    sql: str, candidates: Sequence[Definition], expanded: Sequence[Definition], dialect: str
) -> tuple[Definition, ...]:
    """`expanded` (named like tables) and the `candidates` whose snippet is in `sql`."""
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError:
        return tuple(expanded)
    present = {_normal(node) for node in tree.walk() if isinstance(node, exp.Expr)}
    tables = {t.name.lower() for t in tree.find_all(exp.Table)}
    found: dict[str, Definition] = {d.ref: d for d in expanded}
    for d in candidates:
        parts = _snippets(d)
        over = d.table.lower() if d.kind in ("metric", "filter") else ""
        if (
            parts
            and d.ref not in found
            and (not over or over in tables)
            and all(_in(part, present, dialect) for part in parts)
        ):
            found[d.ref] = d
    for d in candidates:
        if d.ratio and {ref_of(d.numerator), ref_of(d.denominator)} <= set(found):
            found[d.ref] = d
    order = {d.ref: i for i, d in enumerate(candidates)}
    return tuple(sorted(found.values(), key=lambda d: order.get(d.ref, -1)))


def _snippets(d: Definition) -> list[str]:
    """What must all be in the SQL: a metric's aggregate and its filter, over its table."""
    if d.kind == "metric" and not d.ratio:
        return [d.sql, d.filter] if d.filter else [d.sql]
    if d.kind in ("filter", "relationship"):
        return [d.sql]
    if d.kind == "entity" and d.filter:
        return [d.filter]
    return []


def _in(snippet: str, present: set[str], dialect: str) -> bool:
    try:
        node = sqlglot.parse_one(snippet, read=dialect)
    except sqlglot.errors.SqlglotError:
        return False
    if _normal(node) in present:
        return True
    if isinstance(node, exp.And):  # a condition of several parts, written apart or reordered
        return all(_normal(part) in present for part in node.flatten())
    return False


def _normal(node: exp.Expr) -> str:
    copy = node.copy()
    for column in copy.find_all(exp.Column):
        column.set("table", None)
        column.set("db", None)
    for ident in copy.find_all(exp.Identifier):
        ident.set("this", ident.name.lower())
        ident.set("quoted", False)
    if isinstance(copy, exp.Paren):
        copy = copy.this
    return copy.sql()
