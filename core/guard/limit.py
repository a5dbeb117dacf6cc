"""The SQL that runs: regenerated from the checked tree, printed the way the database reads it, LIMIT applied.

MySQL's REGEXP is printed as the operator, since MariaDB has no REGEXP_LIKE function.

What runs must mean what was checked: where sqlglot cannot print a construct in the dialect it
would drop it with a warning (SQLite has no column lists on table aliases: `customers AS x(a, b)`
would run as `customers AS x`, and `x.a` would then be a real column `a`), so such a query is
denied instead.
"""

from __future__ import annotations

from sqlglot import exp
from sqlglot.errors import ErrorLevel, UnsupportedError
from sqlglot.generator import Generator

from core.guard.dialects import sqlglot_dialect
from core.guard.policy import is_dual
from core.guard.tree import unwrap
from core.guard.verdict import Deny


def limited_sql(root: exp.Expr, dialect: str, limit: int | None) -> str:
    """The checked tree as `dialect` SQL: comments dropped, LIMIT applied (see the rules in core.guard)."""
    query = unwrap(root)
    _fix_printing(query, dialect)
    if limit is not None:
        query = _apply_limit(query, limit)
    generator = sqlglot_dialect(dialect).generator(comments=False, unsupported_level=ErrorLevel.RAISE)
    if dialect == "mysql":
        _regexp_as_operator(query, generator)
    try:
        return generator.generate(query, copy=False)  # the tree is ours to spend
    except UnsupportedError as error:
        reason = str(error).strip().splitlines()[0].rstrip(".")[:120]
        raise Deny(f"uses SQL that {dialect} cannot run as written ({reason})") from None


def _fix_printing(query: exp.Expr, dialect: str) -> None:
    """The two places where sqlglot would print SQL the database reads differently."""
    if dialect == "mysql":
        for table in query.find_all(exp.Table):
            if is_dual(table, dialect):  # printed as `dual`, which MySQL reads as a table name
                table.set("this", exp.Var(this="DUAL"))
    elif dialect == "postgres":
        for node in list(query.find_all(exp.CurrentTime)):
            if not node.this:  # printed as CURRENT_TIME(), a syntax error in PostgreSQL
                node.replace(exp.Var(this="CURRENT_TIME"))


def _regexp_as_operator(query: exp.Expr, generator: Generator) -> None:
    """`a REGEXP b`, which MySQL and MariaDB both read (REGEXP_LIKE is MySQL 8 only).

    sqlglot prints REGEXP as REGEXP_LIKE for MySQL; its generator cannot be extended, so each
    node's operands are printed by it and the operator is put between them as raw text.
    """
    nodes = [n for n in query.find_all(exp.RegexpLike) if n.args.get("flag") is None]
    for node in reversed(nodes):  # innermost first: an operand may hold a REGEXP of its own
        text = f"{generator.generate(node.this, copy=False)} REGEXP {generator.generate(node.expression, copy=False)}"
        node.replace(
            exp.Var(this=f"({text})" if isinstance(node.parent, exp.Not | exp.Binary | exp.Unary) else text)
        )


def _apply_limit(query: exp.Expr, cap: int) -> exp.Expr:
    current = query.args.get("limit")
    if current is None:
        query.set("limit", exp.Limit(expression=exp.Literal.number(cap)))
        return query
    options = current.args.get("limit_options")
    if options is not None and (options.args.get("percent") or options.args.get("with_ties")):
        return _wrap(query, cap)  # a share of the rows, or ties: no row count to compare
    if isinstance(current, exp.Fetch):
        count = _int_value(current.args.get("count"))
        if current.args.get("count") is None or (count is not None and 0 <= count <= cap):
            return query
        if count is not None:
            current.set("count", exp.Literal.number(cap))
            return query
        return _wrap(query, cap)
    value = current.expression
    if isinstance(value, exp.Null) or (isinstance(value, exp.Var) and value.name.upper() == "ALL"):
        current.set("expression", exp.Literal.number(cap))
        return query
    count = _int_value(value)
    if count is None:
        return _wrap(query, cap)
    if count < 0 or count > cap:  # SQLite reads a negative LIMIT as "no limit"
        current.set("expression", exp.Literal.number(cap))
    return query


def _int_value(node: exp.Expr | None) -> int | None:
    negative = isinstance(node, exp.Neg)
    if isinstance(node, exp.Neg):
        node = node.this
    if isinstance(node, exp.Paren):
        return _int_value(node.this)
    if isinstance(node, exp.Literal) and not node.is_string:
        try:
            value = int(node.this)
        except ValueError:
            return None
        return -value if negative else value
    return None


def _wrap(query: exp.Expr, cap: int) -> exp.Expr:
    """A LIMIT we cannot evaluate keeps its meaning inside; the outer query is capped."""
    return (
        exp.select("*")
        .from_(exp.Subquery(this=query, alias=exp.TableAlias(this=exp.to_identifier("guarded"))))
        .limit(cap)
    )
