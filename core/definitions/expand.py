"""Entities and metrics named like tables in a query become CTEs, before the guard sees it.

Why CTEs: the query keeps its meaning exactly and reads as written — `FROM agent a` stays, and
`WITH agent AS (SELECT ...)` above it says what an agent is. The guard then checks the whole
statement, definitions included, like any other SQL: a definition grants no access.

Rules:
- a table reference named like a definition (`ref`) is that definition, unless a real table
  has the name (the database wins), the query defines a CTE of that name, or it is qualified
  (`sales.agent` is a real table somewhere);
- an entity is its `sql`, or `SELECT * FROM table WHERE filter`;
- a metric at a grain is `SELECT grain, <sql> AS ref FROM table WHERE filter GROUP BY grain`;
- definitions that use other definitions come first, each once; a cycle is an error.
"""

from __future__ import annotations

from collections.abc import Collection

import sqlglot
from sqlglot import exp

from core.definitions.model import Definition, Definitions


class ExpansionError(ValueError):
    pass


def definition_sql(d: Definition) -> str:
    """The SELECT a definition named like a table stands for."""
    if d.kind == "entity":
        if d.sql:
            return d.sql.strip().rstrip(";")
        where = f" WHERE {d.filter}" if d.filter else ""
        return f"SELECT * FROM {d.table}{where}"
    if d.kind == "metric" and d.grain and not d.ratio:
        grain = ", ".join(d.grain)
        where = f" WHERE {d.filter}" if d.filter else ""
        return f"SELECT {grain}, {d.sql} AS {d.ref} FROM {d.table}{where} GROUP BY {grain}"
    raise ExpansionError(f"the {d.kind} '{d.name}' cannot be selected from like a table")


def shown_sql(d: Definition) -> str:
    """What a definition stands for, as SQL a person reads (Details under an answer, a proposal)."""
    if d.named_like_table:
        return definition_sql(d)
    if d.kind == "instruction":
        return d.text
    if d.ratio:
        return f"{d.numerator} / {d.denominator}"
    where = f" WHERE {d.filter}" if d.filter else ""
    if d.kind == "metric":
        return f"SELECT {d.sql} AS {d.ref} FROM {d.table}{where}"
    if d.kind == "filter":
        return f"SELECT * FROM {d.table} WHERE {d.sql}"
    if d.kind == "entity":
        return f"SELECT * FROM {d.table}{where}"
    return f"{d.table} JOIN {d.to} ON {d.sql}"


def table_refs(tree: exp.Expr, definitions: Definitions, real_tables: Collection[str]) -> list[Definition]:
    """The definitions `tree` names like tables, in the order they first appear."""
    real = {t.lower() for t in real_tables}
    own_ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    found: dict[str, Definition] = {}
    for table in tree.find_all(exp.Table):
        name = table.name.lower()
        if table.args.get("db") or name in real or name in own_ctes or name in found:
            continue
        d = definitions.by_ref(name)
        if d is not None and d.named_like_table:
            found[name] = d
    return list(found.values())


def expand(
    sql: str, definitions: Definitions, real_tables: Collection[str], dialect: str
) -> tuple[str, tuple[Definition, ...]]:
    """`sql` with the definitions it names like tables as CTEs, and those definitions (in order)."""
    if not definitions:
        return sql, ()
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        raise ExpansionError(f"could not parse the SQL: {exc}") from exc
    named = table_refs(tree, definitions, real_tables)
    if not named:
        return sql, ()
    ordered = _with_dependencies(named, definitions, real_tables, dialect)
    ctes = []
    for d in ordered:
        body = sqlglot.parse_one(definition_sql(d), read=dialect)
        ctes.append(exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(d.ref))))
    held = tree.args.get("with_")
    if isinstance(held, exp.With):
        held.set("expressions", [*ctes, *held.expressions])
    else:
        tree.set("with_", exp.With(expressions=ctes))
    return tree.sql(dialect=dialect, pretty=True), tuple(ordered)


def _with_dependencies(
    named: list[Definition], definitions: Definitions, real_tables: Collection[str], dialect: str
) -> list[Definition]:
    """Each definition after the ones its own SQL names like tables."""
    ordered: list[Definition] = []
    busy: set[str] = set()

    def visit(d: Definition) -> None:
        if any(o.ref == d.ref for o in ordered):
            return
        if d.ref in busy:
            raise ExpansionError(f"the definition '{d.name}' uses itself")
        busy.add(d.ref)
        inner = sqlglot.parse_one(definition_sql(d), read=dialect)
        for other in table_refs(inner, definitions, real_tables):
            if other.ref != d.ref:
                visit(other)
        busy.discard(d.ref)
        ordered.append(d)

    for d in named:
        visit(d)
    return ordered
