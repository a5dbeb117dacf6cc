"""Masked columns: which columns of a result show a masked column's values, and how they are shown.

Why at the executor, over the SQL that actually runs: every result — LLM answers, keyword mode,
schedules, CSV exports, the sample rows shown to the LLM — passes through core/execute.py, so one
analysis there covers them all, whoever wrote the SQL.

Why lineage rather than column names: `SELECT LOWER(e) AS contact FROM (SELECT email AS e ...)`
shows e-mail addresses under another name. We qualify the query with sqlglot against the catalog
and follow every output column back through aliases, CTEs, derived tables, subqueries, set
operations and functions to the base columns it is computed from. A column list renames a table's
columns by position (`FROM client AS x(a, b, m)`: `x.m` is the third column, from the catalog's
order); a whole row (`SELECT c FROM client c`, `row_to_json(c)`, PostgreSQL's `c.row_to_json`)
shows every column. Names are compared the way the dialect does (qualify normalizes them); two
aliases it cannot tell apart make qualify fail, which masks everything.

What counts as showing a value: anything computed from it (CONCAT, LOWER, CAST, MIN/MAX,
GROUP_CONCAT, window functions like FIRST_VALUE ...) — except COUNT (a number of rows) and
predicates (=, LIKE, IN, IS NULL, EXISTS, AND/OR/NOT and CASE/IF conditions), which say no more
than filtering on the column does; filtering is allowed. When the analysis is unsure (the query
does not parse or qualify, a column cannot be resolved, a table function, a recursive CTE over a
masked table, a column count that differs from the result), it masks: fail closed.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sqlglot
from sqlglot import exp
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, build_scope

if TYPE_CHECKING:
    from core.catalog import Catalog

log = logging.getLogger(__name__)

EMAIL = re.compile(r"^\s*([^@\s])[^@\s]*@([^@\s]+\.[^@\s]+)\s*$")
HIDDEN = "***"


@dataclass(frozen=True)
class MaskPlan:
    """Which output columns to mask. `everything`: the analysis was unsure, mask every column."""

    columns: tuple[bool, ...] = ()
    everything: bool = False
    reason: str = ""  # why everything is masked (logged, never shown with data)

    def for_result(self, width: int) -> tuple[bool, ...]:
        if self.everything or (self.columns and len(self.columns) != width):
            return (True,) * width
        return self.columns or (False,) * width

    @property
    def any(self) -> bool:
        return self.everything or any(self.columns)


NOTHING = MaskPlan()


def mask_value(value: Any) -> Any:
    """`ops@acme.de` → `o***@acme.de`; other text → its first character and `***`; numbers, dates
    and anything else → `***`. NULL stays NULL (that a value is missing shows nothing of it)."""
    if value is None:
        return None
    if isinstance(value, str):
        if not value.strip():
            return value
        email = EMAIL.match(value)
        if email:
            return f"{email.group(1)}{HIDDEN}@{email.group(2)}"
        return value.strip()[0] + HIDDEN
    return HIDDEN


def mask_row(row: Sequence[Any], masks: Sequence[bool]) -> tuple[Any, ...]:
    return tuple(mask_value(v) if m else v for v, m in zip(row, masks, strict=False))


def plan_masks(
    sql: str,
    dialect: str,
    mask_columns: Collection[str],
    schema: Catalog | Mapping[str, Collection[str]],
) -> MaskPlan:
    """Per output column of `sql`: does it show values of a `mask_columns` ("table.column") column?

    `schema` is the catalog, or {table: [columns]} (tests, tools without a catalog).
    """
    masked = {_split(key) for key in mask_columns}
    if not masked:
        return NOTHING
    try:
        tree = sqlglot.parse_one(sql, read=dialect)
    except sqlglot.errors.SqlglotError as exc:
        return MaskPlan(everything=True, reason=f"unparsable ({type(exc).__name__})")
    if not isinstance(tree, exp.Query):
        return MaskPlan(everything=True, reason=f"not a query ({type(tree).__name__})")
    masked_tables = {t.rsplit(".", 1)[-1] for t, _ in masked}
    if not _mentions(tree, masked_tables):
        return NOTHING
    tables = _schema(schema, {t.name.lower() for t in tree.find_all(exp.Table)})
    try:
        qualified = qualify(
            tree.copy(),
            schema=dict[str, object](tables),  # qualify types its schema as dict[str, object]
            dialect=dialect,
            validate_qualify_columns=False,
        )
        root = build_scope(qualified)
    except Exception as exc:  # sqlglot's optimizer raises several types; any means "unsure"
        return MaskPlan(everything=True, reason=f"could not qualify ({type(exc).__name__}: {exc})"[:300])
    if root is None:
        return MaskPlan(everything=True, reason="no scope")
    columns = {name.lower(): tuple(c.lower() for c in cols) for name, cols in tables.items()}
    outputs = _Lineage(root, masked, masked_tables, columns, dialect).outputs(root)
    if outputs is None:
        return MaskPlan(everything=True, reason="recursive root")
    return MaskPlan(columns=tuple(outputs))


def _split(key: str) -> tuple[str, str]:
    table, _, column = key.strip().lower().rpartition(".")
    return table, column


def _mentions(tree: exp.Expr, masked_tables: set[str]) -> bool:
    """Does the query name a masked table, as a table or inside a string (regclass casts and the
    functions that run SQL from a string take names as text)?"""
    for node in tree.walk():
        if isinstance(node, exp.Table) and node.name.lower() in masked_tables:
            return True
        if isinstance(node, exp.Literal) and node.is_string:
            text = node.this.lower()
            if any(t in text for t in masked_tables):
                return True
    return False


def _schema(schema: Catalog | Mapping[str, Collection[str]], wanted: set[str]) -> dict[str, dict[str, str]]:
    """{table: {column: type}} for the tables the query names (qualify needs no more)."""
    if isinstance(schema, Mapping):
        pairs = [(t, cols) for t, cols in schema.items()]
    else:
        pairs = [(t.name, [c.name for c in t.columns]) for t in schema.tables]
    return {t: {c: "TEXT" for c in cols} for t, cols in pairs if t.lower() in wanted}


class _Lineage:
    """Taint of each output column of each scope, from masked base columns upwards."""

    def __init__(
        self,
        root: Scope,
        masked: set[tuple[str, str]],
        masked_tables: set[str],
        columns: Mapping[str, tuple[str, ...]],
        dialect: str,
    ) -> None:
        self.masked = masked
        self.masked_tables = masked_tables
        self.columns = columns  # each table's columns in order: what a column list renames
        self.dialect = dialect
        self.scopes = {id(s.expression): s for s in root.traverse()}
        self.memo: dict[int, list[bool]] = {}
        self.busy: set[int] = set()

    def outputs(self, scope: Scope) -> list[bool] | None:
        """Per output column, or None while the scope is being analysed (a recursive CTE)."""
        key = id(scope)
        if key in self.memo:
            return self.memo[key]
        if key in self.busy:
            return None
        self.busy.add(key)
        try:
            node = scope.expression
            if self.recursive(scope):
                # sqlglot resolves the self-reference to the anchor only; a later round may move a
                # masked value into any column, so every column is masked if a masked table is used
                result = [self.touches_masked(scope)] * self.width(scope)
            elif isinstance(node, exp.SetOperation) and scope.set_operation_scopes:
                found = [self.outputs(s) for s in scope.set_operation_scopes]
                # a branch we cannot follow: each of its columns is masked if a masked table is used
                touched = self.touches_masked(scope) if any(b is None for b in found) else False
                branches = [b if b is not None else [touched] * self.width(scope) for b in found]
                width = max(len(b) for b in branches)
                result = [any(b[i] if i < len(b) else True for b in branches) for i in range(width)]
            elif isinstance(node, exp.Select):
                result = [self.tainted(p, scope) for p in node.expressions]
            else:  # VALUES, table functions and anything new: unsure
                result = [True] * max(1, self.width(scope))
        finally:
            self.busy.discard(key)
        self.memo[key] = result
        return result

    @staticmethod
    def recursive(scope: Scope) -> bool:
        cte = scope.expression.parent
        if not isinstance(cte, exp.CTE):
            return False
        name = cte.alias_or_name.lower()
        return any(t.name.lower() == name and not t.db for t in scope.expression.find_all(exp.Table))

    def width(self, scope: Scope) -> int:
        node = scope.expression
        return len(node.named_selects) if isinstance(node, exp.Query) else 1

    def names(self, scope: Scope) -> list[str]:
        node = scope.expression
        return [n.lower() for n in node.named_selects] if isinstance(node, exp.Query) else []

    def touches_masked(self, scope: Scope) -> bool:
        return _mentions(scope.expression, self.masked_tables)

    def tainted(self, node: exp.Expr, scope: Scope) -> bool:
        if isinstance(node, exp.Column):
            return self.column(node, scope)
        if isinstance(node, exp.TableColumn):  # a whole row (qualify's reading of `c` in `row_to_json(c)`)
            return self.whole_row(node.name, scope)
        if isinstance(node, exp.Star):
            return True  # a star qualify could not expand: its columns are unknown
        if isinstance(node, exp.Count | exp.Predicate | exp.Connector | exp.Not):
            return False
        if isinstance(node, exp.Query):
            sub = self.scope_of(node)
            if sub is None:
                return True
            outs = self.outputs(sub)
            return self.touches_masked(sub) if outs is None else any(outs)
        if isinstance(node, exp.Window):
            return self.tainted(node.this, scope)
        if isinstance(node, exp.If):
            return any(self.tainted(x, scope) for x in (node.args.get("true"), node.args.get("false")) if x)
        if isinstance(node, exp.Case):
            parts = [i.args.get("true") for i in node.args.get("ifs") or []] + [node.args.get("default")]
            return any(self.tainted(x, scope) for x in parts if x is not None)
        if isinstance(node, exp.Anonymous | exp.Cast) and self.names_masked_table(node):
            return True  # query_to_xml('SELECT email ...'), 'client'::regclass: SQL or a table as text
        return any(self.tainted(child, scope) for child in node.iter_expressions())

    def names_masked_table(self, node: exp.Expr) -> bool:
        return any(
            isinstance(arg, exp.Literal)
            and arg.is_string
            and any(t in arg.this.lower() for t in self.masked_tables)
            for arg in node.iter_expressions()
        )

    def scope_of(self, node: exp.Expr) -> Scope | None:
        while isinstance(node, exp.Subquery | exp.Paren) and isinstance(node.this, exp.Expression):
            found = self.scopes.get(id(node))
            if found is not None:
                return found
            node = node.this
        return self.scopes.get(id(node))

    def source(self, name: str, scope: Scope) -> exp.Expr | Scope | None:
        """The FROM item `name` refers to, from the innermost scope that has it."""
        current: Scope | None = scope
        while current is not None:
            found = current.sources.get(name)
            if found is not None:
                return found
            current = current.parent
        return None

    def whole_row(self, name: str, scope: Scope) -> bool:
        source = self.source(name, scope)
        if isinstance(source, Scope):
            outs = self.outputs(source)
            return self.touches_masked(source) if outs is None else any(outs)
        if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
            return source.name.lower() in self.masked_tables
        return True

    def base_column(self, table: exp.Table, name: str) -> str | None:
        """The table's own name for the column the query calls `name`; None: unknown.

        A column list (`FROM client AS x(a, b, m)`) renames the table's columns by position; in
        PostgreSQL a name that is not a column is a function of the whole row (`c.row_to_json`).
        """
        alias = table.args.get("alias")
        renames = [c.name.lower() for c in alias.columns] if isinstance(alias, exp.TableAlias) else []
        base = self.columns.get(table.name.lower())
        if name in renames:
            position = renames.index(name)
            return base[position] if base is not None and position < len(base) else None
        if base is not None and name not in base[len(renames) :] and self.dialect == "postgres":
            return None
        return name

    def column(self, column: exp.Column, scope: Scope) -> bool:
        qualifier = column.table
        if not qualifier:
            return True  # unresolved after qualify: unsure
        source = self.source(qualifier, scope)
        if source is None:
            return True
        if isinstance(source, Scope):
            outs = self.outputs(source)
            if outs is None:
                return self.touches_masked(source)
            if isinstance(column.this, exp.Star):
                return any(outs)
            names = self.names(source)
            name = column.name.lower()
            return outs[names.index(name)] if name in names and names.index(name) < len(outs) else True
        if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
            table, schema = source.name.lower(), source.db.lower()
            if isinstance(column.this, exp.Star):
                return table in self.masked_tables
            base = self.base_column(source, column.name.lower())
            if base is None:  # a renamed column we cannot place, or a whole row
                return table in self.masked_tables
            return (table, base) in self.masked or (f"{schema}.{table}", base) in self.masked
        return True  # a table function or another source we do not model


def scrub_error(message: str, sql: str) -> str:
    """A database error without data values: quoted text and e-mail addresses that are not in the
    SQL came from the data (`invalid input syntax for type integer: "ops@acme.de"`)."""
    known = sql.lower()

    def quoted(match: re.Match[str]) -> str:
        inner = match.group(2)
        return match.group(0) if inner.lower() in known else f"{match.group(1)}…{match.group(1)}"

    text = re.sub(r"(['\"])(.*?)\1", quoted, message)
    return re.sub(
        r"[^@\s'\"]+@[^@\s'\"]+\.[A-Za-z]{2,}",
        lambda m: m.group(0) if m.group(0).lower() in known else "…",
        text,
    )
