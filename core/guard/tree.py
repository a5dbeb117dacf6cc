"""Checking the parsed tree: a query, and nothing in it that writes, locks, leaks or never stops.

Every node must be on the allowlist (`core.guard.allowlist`), every function known to be side-effect
free, every table an ordinary one of this database; a recursive CTE needs something that can stop it.
"""

from __future__ import annotations

import re

from sqlglot import exp

from core.guard.allowlist import (
    ALLOWED_FUNCTIONS,
    ALLOWED_NODES,
    DANGEROUS_FUNCTIONS,
    DANGEROUS_PREFIXES,
    DENIED_FUNCTION_CLASSES,
    DIALECT_DANGEROUS_FUNCTIONS,
    FILE_FORMAT_SCHEMAS,
    POSTGRES_SESSION_WORDS,
    REASON_BY_CLASS,
    SYSTEM_SCHEMAS,
    SYSTEM_TABLE_PREFIXES,
    SYSTEM_TABLE_PREFIXES_BY_DIALECT,
    SYSTEM_TABLES,
)
from core.guard.dialects import SCHEMA_DIALECTS
from core.guard.verdict import Deny


def check_tree(root: exp.Expr, dialect: str) -> list[exp.Table]:
    """Deny anything that is not read-only; return the table references met on the way."""
    query = root
    while isinstance(query, exp.Subquery) and not query.alias:
        query = query.this
    if not isinstance(query, (exp.Select, exp.SetOperation)):
        raise Deny(_statement_reason(root))
    tables: list[exp.Table] = []
    for node in root.walk():
        kind = type(node)
        if isinstance(node, exp.Func):
            _check_function(node, dialect)
        elif kind not in ALLOWED_NODES:
            raise Deny(_node_reason(node))
        elif type(node) is exp.Table:
            _check_table(node, dialect)
            tables.append(node)
        elif kind is exp.Dot and isinstance(node.expression, exp.Func):
            raise Deny(f"calls a schema-qualified function ({node.sql(dialect)[:80]})")
        elif kind is exp.Parameter and dialect == "mysql":
            raise Deny("reads or writes user variables (@...)")
        elif kind is exp.Parameter and dialect == "bigquery":  # @@project_id, @@session_id ...
            raise Deny("reads system variables or query parameters (@...)")
        elif type(node) is exp.Column and dialect in _SESSION_WORD_DIALECTS and _is_session_keyword(node):
            raise Deny(f"reads server or session information ({node.name.upper()})")
        elif type(node) is exp.With and node.args.get("recursive"):
            _check_recursion(node)
        elif kind is exp.Select and not node.expressions:
            raise Deny("selects no columns")
    return tables


# Dialects that read `user`, `current_role`... without parentheses as the session's functions.
_SESSION_WORD_DIALECTS = frozenset({"postgres", "redshift", "duckdb", "trino", "snowflake", "databricks"})

# A DuckDB table name that looks like a path or URL is read as a file (a "replacement scan").
_PATH_LIKE = re.compile(r"[./\\:*?\[\]{}~]")


def unwrap(node: exp.Expr) -> exp.Expr:
    """`((SELECT ...))` → `SELECT ...`, keeping any LIMIT/ORDER BY written on the parentheses."""
    while isinstance(node, exp.Subquery) and not any(v for k, v in node.args.items() if k != "this"):
        node = node.this
    return node


def _is_session_keyword(column: exp.Column) -> bool:
    ident = column.this
    return (
        isinstance(ident, exp.Identifier)
        and not ident.quoted
        and not column.table
        and ident.name.lower() in POSTGRES_SESSION_WORDS
    )


def _statement_reason(root: exp.Expr) -> str:
    """Why a statement that is not a query is denied, e.g. "writes data (DELETE)"."""
    if isinstance(root, exp.Values):
        return "is not a SELECT query (VALUES)"
    known = _known_reason(root)
    if known:
        return known
    try:
        first = root.sql().split(" ", 1)[0]
    except ValueError:  # a node sqlglot parses but cannot print in the default dialect (UNDROP)
        first = type(root).__name__
    return f"is not a SELECT query ({first.upper()[:30]})"


def _node_reason(node: exp.Expr) -> str:
    return _known_reason(node) or f"uses SQL the guard does not accept ({type(node).__name__})"


def _known_reason(node: exp.Expr) -> str | None:
    for cls in type(node).__mro__:
        if cls is exp.Command:  # what sqlglot could not parse beyond its first keyword
            return f"is not a query ({str(node.this).upper()})"
        if cls in REASON_BY_CLASS:
            return REASON_BY_CLASS[cls]
    return None


def _function_name(node: exp.Func) -> str:
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        this = node.this
        return (this.name if isinstance(this, exp.Expression) else str(this)).lower()
    return node.sql_name().lower()


def _check_function(node: exp.Func, dialect: str) -> None:
    name = _function_name(node)
    dangerous = DANGEROUS_FUNCTIONS.get(name) or DIALECT_DANGEROUS_FUNCTIONS.get(dialect, {}).get(name)
    if dangerous:  # also catches a future sqlglot that models, say, SLEEP
        raise Deny(f"calls {name}(), which {dangerous}")
    for prefix, reason in DANGEROUS_PREFIXES:
        if name.startswith(prefix):
            raise Deny(f"calls {name}(), which {reason}")
    if isinstance(node, (exp.Anonymous, exp.AnonymousAggFunc)):
        if name not in ALLOWED_FUNCTIONS:
            if name.startswith("pg_"):
                raise Deny(f"calls {name}(), a PostgreSQL system function")
            raise Deny(f"calls {name}(), which is not on the list of allowed functions")
        return
    denied = DENIED_FUNCTION_CLASSES.get(type(node).__name__)
    if denied:
        raise Deny(f"calls {name}, which {denied}")


def _check_table(table: exp.Table, dialect: str) -> None:
    if not isinstance(table.this, (exp.Identifier, exp.Func)):
        raise Deny(f"uses a table reference the guard does not accept ({table.sql(dialect)[:80]})")
    name, db, catalog = table.name.lower(), table.text("db").lower(), table.text("catalog").lower()
    shown = ".".join(part for part in (catalog, db, name) if part)
    if isinstance(table.this, exp.Func):  # a table function: checked as a function, unqualified
        if db or catalog:
            raise Deny(f"calls a schema-qualified function ({table.sql(dialect)[:80]})")
        return
    if catalog:
        raise Deny(f"reads another database ({shown})")
    if dialect == "duckdb" and _PATH_LIKE.search(name):
        raise Deny(f"reads a file or URL ({shown})")
    if "*" in name or (dialect == "trino" and "$" in name):  # BigQuery wildcards, Trino metadata tables
        raise Deny(f"reads tables by pattern or hidden metadata ({shown})")
    if dialect == "bigquery" and (
        "information_schema" in name or (name.startswith("__") and name.endswith("__"))
    ):
        # sqlglot reads `ds.INFORMATION_SCHEMA.TABLES` as the table "INFORMATION_SCHEMA.TABLES"
        raise Deny(f"reads a system catalog ({shown})")
    if dialect == "databricks" and db in FILE_FORMAT_SCHEMAS:
        raise Deny(f"reads files by path ({shown})")
    if (
        db in SYSTEM_SCHEMAS
        or db.startswith(("pg_temp", "pg_toast"))
        or name.startswith(SYSTEM_TABLE_PREFIXES + SYSTEM_TABLE_PREFIXES_BY_DIALECT.get(dialect, ()))
        or name in SYSTEM_TABLES
    ):
        raise Deny(f"reads a system catalog ({shown})")
    if db and dialect not in SCHEMA_DIALECTS and dialect != "sqlite":
        raise Deny(f"reads another database ({shown})")
    if db and dialect == "sqlite" and db != "main":
        raise Deny(f"reads an attached database ({shown})")


def _check_recursion(with_: exp.With) -> None:
    """A recursive step with nothing that can stop it runs until the timeout."""
    for cte in with_.expressions:
        body = cte.this
        if not isinstance(body, exp.Union):
            continue
        name = cte.alias_or_name.lower()
        steps = _union_branches(body)[1:]
        for step in steps:
            refers = any(t.name.lower() == name and not t.args.get("db") for t in step.find_all(exp.Table))
            if not refers or not isinstance(step, exp.Select):
                continue
            joins = step.args.get("joins") or []
            joined_on = any(_mentions_column(j.args.get("on")) or j.args.get("using") for j in joins)
            where = _mentions_column(step.args.get("where"))
            if not (where or joined_on or step.args.get("limit") or body.args.get("limit")):
                raise Deny(f"has a recursive WITH ({name}) whose recursive step can never stop")


def _mentions_column(condition: exp.Expr | None) -> bool:
    """`WHERE true` or `ON 1 = 1` stops nothing; a condition on a column might."""
    return condition is not None and condition.find(exp.Column) is not None


def _union_branches(node: exp.Expr) -> list[exp.Expr]:
    if isinstance(node, exp.Union) and not node.args.get("limit"):
        return _union_branches(node.this) + _union_branches(node.expression)
    return [unwrap(node)]
