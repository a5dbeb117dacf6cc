"""Tables and the access policy: which real tables a query reads, and whether the asker may.

CTE names hide a table only where SQL scoping (and the database's rules for names) says they do;
a denied column is denied wherever a reference could reach it (`core.guard.columns`); a masked
column may be shown or counted and used nowhere else (`core.guard.masks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from sqlglot import exp

from core.guard.columns import ColumnRules, check_row_types
from core.guard.lineage import Lineage, visible_cte
from core.guard.masks import MaskRules
from core.guard.verdict import Deny


@dataclass(frozen=True)
class GuardPolicy:
    """What the asker may read (from the database's access rules) and the row cap."""

    limit: int | None = 1000  # LIMIT added when missing; a larger LIMIT is lowered to it
    deny_tables: frozenset[str] = frozenset()  # lowercase "table" or "schema.table"
    deny_columns: frozenset[str] = frozenset()  # lowercase "table.column"
    mask_columns: frozenset[str] = (
        frozenset()
    )  # lowercase "table.column": shown masked or counted, nothing else
    allowed_tables: frozenset[str] | None = None  # when set, every referenced table must be in it
    value_cap: int | None = 20_000_000  # the largest value a size argument may build (core.guard.sizes)
    # lowercase "table" → its columns in order, from the catalog: which column `AS x(a, b)` renames
    table_columns: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


def real_tables(tables: list[exp.Table], dialect: str) -> list[exp.Table]:
    """Tables read from the database, in the order they are written; CTE references are not tables."""
    real = [
        t
        for t in tables
        if isinstance(t.this, exp.Identifier) and visible_cte(t, dialect) is None and not is_dual(t, dialect)
    ]
    return sorted(real, key=lambda t: t.this.meta.get("start", 0))


def table_keys(tables: list[exp.Table]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(_table_key(t) for t in tables))


def is_dual(table: exp.Table, dialect: str) -> bool:
    """MySQL's `FROM DUAL` names no table."""
    ident = table.this
    return (
        dialect == "mysql"
        and isinstance(ident, exp.Identifier)
        and not ident.quoted
        and ident.name.lower() == "dual"
        and not table.args.get("db")
    )


def _table_key(table: exp.Table) -> str:
    db = table.text("db").lower()
    return f"{db}.{table.name.lower()}" if db else table.name.lower()


def _table_names(table: exp.Table) -> set[str]:
    return {table.name.lower(), _table_key(table)}


def check_policy(root: exp.Expr, real_tables: list[exp.Table], policy: GuardPolicy, dialect: str) -> None:
    for table in real_tables:
        names = _table_names(table)
        if names & policy.deny_tables:
            raise Deny(f"reads table {_table_key(table)}, which you may not query")
        if policy.allowed_tables is not None and not names & policy.allowed_tables:
            raise Deny(f"reads table {_table_key(table)}, which is not among the tables you may query")
    if policy.deny_tables or policy.deny_columns:
        check_row_types(root, policy.deny_tables, policy.deny_columns)
    if policy.deny_columns or policy.mask_columns:
        lineage = Lineage(real_tables, dialect, policy.table_columns)
        if policy.deny_columns:
            ColumnRules(lineage, policy.deny_columns).check(root)
        if policy.mask_columns:
            MaskRules(lineage, policy.mask_columns, dialect).check(root)
