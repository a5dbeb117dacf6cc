"""Column rules: no reference may read a denied column, whatever name the query gives it.

A plain pass over every node, each column reference resolved to the real table columns it can
read (`core.guard.lineage`). Denied, with a reason that names the rule and never a data value:

- a reference that can read a denied column — selected, filtered, joined on, grouped, sorted,
  inside a function or a subquery, renamed by a column list (`AS x(a, b, c, t)`), behind an alias
  that differs only in case, or with a qualifier that names nothing in scope;
- `*` and `t.*` over a table with denied columns, a whole row of it (`SELECT c FROM customers c`,
  `row_to_json(c)`, `c.row_to_json`, `(c).*`), NATURAL JOIN over it, USING a denied column;
- the row type of a denied table or of a table with denied columns (`NULL::payroll`,
  `CAST(... AS customers)`): `jsonb_populate_record(NULL::payroll, '{}')` shows its columns.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlglot import exp

from core.guard.lineage import Lineage, Read, enclosing_selects
from core.guard.names import column_key
from core.guard.verdict import Deny


def denied_by_table(deny_columns: Iterable[str]) -> dict[str, set[str]]:
    """ "table.column" rules (a leading "schema." is ignored) → {table: {columns}}, lowercase."""
    denied: dict[str, set[str]] = {}
    for entry in deny_columns:
        parts = entry.lower().rsplit(".", 2)
        if len(parts) >= 2:
            denied.setdefault(parts[-2], set()).add(parts[-1])
    return denied


class ColumnRules:
    """Denies every reference that could reach a denied column; when a reference is unclear, denies."""

    def __init__(self, lineage: Lineage, deny_columns: Iterable[str]) -> None:
        self.lineage = lineage
        self.denied = denied_by_table(deny_columns)

    def check(self, root: exp.Expr) -> None:
        for node in root.walk():
            if isinstance(node, exp.Star):
                self._check_star(node)
            elif isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                for read in self.lineage.reads(node):
                    self._judge(read)
            elif isinstance(node, exp.Join):
                self._check_join(node)

    def _judge(self, read: Read) -> None:
        columns = self.denied.get(read.table)
        if not columns:
            return
        table = read.table
        if read.column is None:
            if read.how == "unknown":
                raise Deny(
                    f"uses {read.shown}, a renamed column of {table} that could be any of its columns,"
                    f" and {table} has columns you may not see"
                )
            if read.how == "function":
                raise Deny(
                    f"reads whole rows of {table} ({read.shown} is a function of the whole row in"
                    " PostgreSQL), which has columns you may not see"
                )
            raise Deny(f"reads whole rows of {table}, which has columns you may not see")
        if read.column in columns:
            renamed = f" (as {read.shown})" if read.how == "renamed" else ""
            raise Deny(f"uses column {table}.{read.column}{renamed}, which you may not see")

    def _check_star(self, star: exp.Star) -> None:
        parent = star.parent
        if isinstance(parent, exp.Column):  # t.*
            qualifier = parent.args.get("table")
            levels = enclosing_selects(parent)
            if isinstance(qualifier, exp.Identifier):
                named = self.lineage.named(qualifier, levels)
                tables = [s.table for s in named if s.table] if named else [qualifier.name.lower()]
            else:
                tables = [s.table for select in levels[:1] for s in self.lineage.sources(select) if s.table]
        elif isinstance(parent, exp.Select) and star.arg_key == "expressions":
            if isinstance(parent.parent, exp.Exists):
                return  # EXISTS (SELECT * ...) reads no column
            tables = [s.table for s in self.lineage.sources(parent) if s.table]
        else:  # COUNT(*) and friends read no column; (c).* is c's whole row, judged as a column
            return
        for table in tables:
            columns = self.denied.get(table)
            if columns:
                raise Deny(
                    f"selects * from {table}, which has columns you may not see"
                    f" ({', '.join(sorted(columns))}); name the columns instead"
                )

    def _check_join(self, join: exp.Join) -> None:
        levels = enclosing_selects(join)
        if str(join.args.get("method") or "").upper() == "NATURAL":
            for source in (s for select in levels for s in self.lineage.sources(select)):
                if self.denied.get(source.table):
                    raise Deny(f"uses NATURAL JOIN over {source.table}, which has columns you may not see")
        for ident in join.args.get("using") or []:
            if isinstance(ident, exp.Identifier):
                for read in self.lineage.unqualified(ident, column_key(ident.name), ident.name, levels):
                    self._judge(read)


def check_row_types(root: exp.Expr, deny_tables: frozenset[str], deny_columns: Iterable[str]) -> None:
    """A table's row type shows its column names (and, cast from text, builds rows of it)."""
    restricted = denied_by_table(deny_columns)
    for node in root.find_all(exp.DataType):
        if node.this != exp.DataType.Type.USERDEFINED:
            continue
        kind = node.args.get("kind")
        parts = [p.name.lower() for p in (kind.flatten() if isinstance(kind, exp.Dot) else [kind]) if p]
        if not parts:
            continue
        name = parts[-1]
        shown = ".".join(parts)
        if name in deny_tables or shown in deny_tables:
            raise Deny(f"uses the row type of {shown}, a table you may not query")
        if restricted.get(name):
            raise Deny(f"uses the row type of {shown}, which has columns you may not see")
