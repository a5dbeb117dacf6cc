"""Expand SQL that uses the join recipe's view back to base tables, in the database's dialect.

The SQL writer sees the base tables and, as a hint, the join recipe: a view it may select from
by name (core/view.py); the database never has that view. SQL over base tables only passes
through (parsed and printed in the dialect). The SQL shown to people should read as if a person
had written it, so when the view is used once in a plain SELECT
its joins are inlined — `client_name` becomes `client.name AS client_name` — and LEFT JOINs that
neither add rows nor feed a used column are left out. Anything more involved (the view used
twice, set operations, subqueries) gets the view as a CTE, pruned the same way. Either way the
result keeps the view's semantics exactly and is transpiled to the target dialect by sqlglot.
"""

from __future__ import annotations

import sqlglot
from sqlglot import exp

from core.joins import View, ViewColumn, column_expr


class ExpandError(ValueError):
    pass


def expand(sql: str, view: View | None, dialect: str) -> str:
    """`sql` is written over base tables and/or the table `view.name` (None: no view offered)."""
    tree = _parse(sql, dialect)
    if view is None or view.single_table:
        return tree.sql(dialect=dialect, pretty=True)
    refs = _view_refs(tree, view)
    if not refs:
        return tree.sql(dialect=dialect, pretty=True)
    inlined = _inline(tree, view, refs[0], dialect) if len(refs) == 1 else None
    result = inlined if inlined is not None else _with_cte(tree, view, dialect)
    return result.sql(dialect=dialect, pretty=True)


def _parse(sql: str, dialect: str) -> exp.Expr:
    try:
        statements = [s for s in sqlglot.parse(sql, read=dialect) if s is not None]
    except sqlglot.errors.SqlglotError as exc:
        raise ExpandError(f"could not parse the SQL: {exc}") from exc
    if len(statements) != 1:
        raise ExpandError(f"expected one SQL statement, got {len(statements)}")
    return statements[0]


def _view_refs(tree: exp.Expr, view: View) -> list[exp.Table]:
    """References to the view, unless the query defines its own CTE of that name."""
    name = view.name.lower()
    ctes = {c.alias_or_name.lower() for c in tree.find_all(exp.CTE)}
    if name in ctes:
        return []
    return [t for t in tree.find_all(exp.Table) if t.name.lower() == name and not t.args.get("db")]


# ---------------------------------------------------------------------------------------------
# inline


def _inline(tree: exp.Expr, view: View, ref: exp.Table, dialect: str) -> exp.Expr | None:
    """The view's joins in place of the view, for one plain SELECT ... FROM view; None if not plain."""
    select = ref.parent.parent if isinstance(ref.parent, exp.From) else None
    if select is not tree or not isinstance(select, exp.Select):
        return None
    if select.args.get("joins") or select.args.get("with_"):
        return None
    if any(s is not select for s in select.find_all(exp.Select)):
        return None
    select = select.copy()
    qualifiers = {ref.alias_or_name.lower(), view.name.lower()}
    by_name = {c.name.lower(): c for c in view.columns}
    outputs = {p.alias.lower(): p for p in select.expressions if p.alias}
    used: set[str] = set()

    projections: list[exp.Expr] = []
    for p in select.expressions:
        if _is_star(p):
            projections.extend(_base(c, view, dialect).as_(c.name) for c in view.columns)
            used |= {c.alias for c in view.columns}
        elif isinstance(p, exp.Column) and p.name.lower() in by_name:
            c = by_name[p.name.lower()]
            _check_qualifier(p, qualifiers, view)
            projections.append(_base(c, view, dialect).as_(c.name))
            used.add(c.alias)
        else:
            projections.append(p)
    select.set("expressions", projections)

    for col in list(select.find_all(exp.Column)):
        if isinstance(col.this, exp.Star) or _is_base(col):
            continue
        name = col.name.lower()
        if not col.table and name in outputs and not _is_view_column(outputs[name], name):
            continue  # ORDER BY an output alias
        target = by_name.get(name)
        if target is None:
            if not col.table and name in outputs:
                continue
            raise ExpandError(_unknown_column(col.name, view))
        _check_qualifier(col, qualifiers, view)
        col.replace(_base(target, view, dialect))
        used.add(target.alias)

    select.set("from_", view.from_expr(dialect))
    select.set("joins", view.join_exprs(view.needed_steps(used), dialect))
    return select


def _is_star(projection: exp.Expr) -> bool:
    """SELECT * or SELECT v.* (COUNT(*) is not one)."""
    return isinstance(projection, exp.Star) or (
        isinstance(projection, exp.Column) and isinstance(projection.this, exp.Star)
    )


def _base(c: ViewColumn, view: View, dialect: str) -> exp.Column:
    node = column_expr(view, c.alias, c.column, dialect)
    node.meta["askbase_base"] = True
    return node


def _is_base(col: exp.Column) -> bool:
    return bool(col.meta.get("askbase_base"))


def _is_view_column(projection: exp.Expr, name: str) -> bool:
    inner = projection.this if isinstance(projection, exp.Alias) else projection
    return isinstance(inner, exp.Column) and inner.name.lower() == name


def _check_qualifier(col: exp.Column, qualifiers: set[str], view: View) -> None:
    if col.table and col.table.lower() not in qualifiers:
        raise ExpandError(
            f"unknown table '{col.table}' in {col.sql()}: only {view.name} is in the FROM clause"
        )


def _unknown_column(name: str, view: View) -> str:
    names = ", ".join(c.name for c in view.columns[:60])
    return f"no such column: {name} (the recipe {view.name} has: {names})"


# ---------------------------------------------------------------------------------------------
# CTE


def _with_cte(tree: exp.Expr, view: View, dialect: str) -> exp.Expr:
    """WITH <view> AS (<its SELECT, pruned to the columns used>) <the query as written>."""
    if any(_is_star(p) for s in tree.find_all(exp.Select) for p in s.expressions):
        columns = None
    else:
        mentioned = {c.name.lower() for c in tree.find_all(exp.Column)}
        columns = [c.name for c in view.columns if c.name.lower() in mentioned] or [view.columns[0].name]
    body = view.select(dialect, columns=columns)
    cte = exp.CTE(this=body, alias=exp.TableAlias(this=exp.to_identifier(view.name)))
    tree = tree.copy()
    existing = tree.args.get("with_")
    if existing is not None:
        existing.set("expressions", [cte, *existing.expressions])
        return tree
    if not isinstance(tree, exp.Query):
        raise ExpandError("only queries can read the view")
    tree.set("with_", exp.With(expressions=[cte]))
    return tree
