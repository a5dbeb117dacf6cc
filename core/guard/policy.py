"""Tables and the access policy: which real tables a query reads, and whether the asker may.

CTE names hide a table only where SQL scoping says they do; a denied column is denied wherever a
reference could reach it (`_ColumnRules`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlglot import exp

from core.guard.verdict import Deny


@dataclass(frozen=True)
class GuardPolicy:
    """What the asker may read (from the database's access rules) and the row cap."""

    limit: int | None = 1000  # LIMIT added when missing; a larger LIMIT is lowered to it
    deny_tables: frozenset[str] = frozenset()  # lowercase "table" or "schema.table"
    deny_columns: frozenset[str] = frozenset()  # lowercase "table.column"
    allowed_tables: frozenset[str] | None = None  # when set, every referenced table must be in it


def real_tables(tables: list[exp.Table], dialect: str) -> list[exp.Table]:
    """Tables read from the database, in the order they are written; CTE references are not tables."""
    real = [
        t
        for t in tables
        if isinstance(t.this, exp.Identifier) and not _is_cte_ref(t) and not is_dual(t, dialect)
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


def _is_cte_ref(table: exp.Table) -> bool:
    """True when `table` names a CTE visible where it stands (earlier CTEs only; itself if RECURSIVE).

    A forward reference is treated as a real table: that is what PostgreSQL does, and it is the
    conservative reading for access rules.
    """
    if table.args.get("db") or table.args.get("catalog"):
        return False
    name = table.name.lower()
    node: exp.Expression | None = table
    while node is not None and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.With):
            ctes = parent.expressions
            index = next((k for k, cte in enumerate(ctes) if cte is node), len(ctes))
            visible = ctes[: index + 1] if parent.args.get("recursive") else ctes[:index]
            if any(cte.alias_or_name.lower() == name for cte in visible):
                return True
            node = parent.parent  # the query that owns this WITH: its other CTEs are not visible
            continue
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if (
            isinstance(with_, exp.With)
            and node is not with_
            and any(cte.alias_or_name.lower() == name for cte in with_.expressions)
        ):
            return True
        node = parent
    return False


def _table_key(table: exp.Table) -> str:
    db = table.text("db").lower()
    return f"{db}.{table.name.lower()}" if db else table.name.lower()


def _table_names(table: exp.Table) -> set[str]:
    return {table.name.lower(), _table_key(table)}


def check_policy(root: exp.Expression, real_tables: list[exp.Table], policy: GuardPolicy) -> None:
    for table in real_tables:
        names = _table_names(table)
        if names & policy.deny_tables:
            raise Deny(f"reads table {_table_key(table)}, which you may not query")
        if policy.allowed_tables is not None and not names & policy.allowed_tables:
            raise Deny(f"reads table {_table_key(table)}, which is not among the tables you may query")
    if policy.deny_columns:
        _ColumnRules(real_tables, policy.deny_columns).check(root)


class _ColumnRules:
    """Denies every reference that could reach a denied column; when a reference is unclear, denies.

    Columns are resolved the way the database would: a qualifier names a FROM item of the nearest
    enclosing SELECT that has it; an unqualified name could come from any real table in scope.
    Derived tables and CTEs need no resolution: their own SELECTs are checked where they stand.
    """

    def __init__(self, real_tables: list[exp.Table], deny_columns: Iterable[str]) -> None:
        self.real = {id(t) for t in real_tables}
        self.statement_tables = {t.name.lower() for t in real_tables}
        self.denied: dict[str, set[str]] = {}
        for entry in deny_columns:  # "table.column" (a leading "schema." is ignored)
            parts = entry.lower().rsplit(".", 2)
            if len(parts) >= 2:
                self.denied.setdefault(parts[-2], set()).add(parts[-1])

    def check(self, root: exp.Expression) -> None:
        for node in root.walk():
            if isinstance(node, exp.Star):
                self._check_star(node)
            elif isinstance(node, exp.Column) and not isinstance(node.this, exp.Star):
                self._check_column(node.name.lower(), node.table.lower(), _enclosing_selects(node))
            elif isinstance(node, exp.Join):
                self._check_join(node)

    def restricted(self, source: exp.Expression) -> set[str]:
        """Denied columns of a FROM item; none unless it is a real table."""
        if isinstance(source, exp.Table) and id(source) in self.real:
            return self.denied.get(source.name.lower(), set())
        return set()

    def _check_column(self, column: str, qualifier: str, scopes: list[exp.Select]) -> None:
        if qualifier:
            source = _resolve(qualifier, scopes)
            if source is not None:
                if column in self.restricted(source):
                    raise self._deny(source.name.lower(), column)
                return
            # a qualifier that names nothing in scope: it could still be any table of the statement
        sources = [item for scope in scopes for item in _sources(scope).items()]
        if qualifier or not scopes:  # e.g. ORDER BY of a UNION sees every table of the statement
            for table in sorted(self.statement_tables | {qualifier} - {""}):
                if column in self.denied.get(table, ()):
                    raise self._deny(table, column)
        for alias, source in sources:
            if column in self.restricted(source):
                raise self._deny(source.name.lower(), column)
            if alias == column and self.restricted(source):  # PostgreSQL: `SELECT t FROM t` = whole rows
                raise Deny(f"reads whole rows of {source.name.lower()}, which has columns you may not see")

    def _check_star(self, star: exp.Star) -> None:
        parent = star.parent
        if isinstance(parent, exp.Column):  # t.*
            qualifier = parent.table.lower()
            source = _resolve(qualifier, _enclosing_selects(parent))
            exposed = (
                [(qualifier, self.denied.get(qualifier, set()))]
                if source is None
                else [(source.name.lower(), self.restricted(source))]
            )
        elif isinstance(parent, exp.Select) and star.arg_key == "expressions":
            exposed = [(s.name.lower(), self.restricted(s)) for s in _sources(parent).values()]
        else:  # COUNT(*) and friends read no column
            return
        for table, columns in exposed:
            if columns:
                raise Deny(
                    f"selects * from {table}, which has columns you may not see"
                    f" ({', '.join(sorted(columns))}); name the columns instead"
                )

    def _check_join(self, join: exp.Join) -> None:
        sources = [s for scope in _enclosing_selects(join) for s in _sources(scope).values()]
        if str(join.args.get("method") or "").upper() == "NATURAL":
            for source in sources:
                if self.restricted(source):
                    name = source.name.lower()
                    raise Deny(f"uses NATURAL JOIN over {name}, which has columns you may not see")
        for ident in join.args.get("using") or []:
            self._check_column(ident.name.lower(), "", _enclosing_selects(join))

    @staticmethod
    def _deny(table: str, column: str) -> Deny:
        return Deny(f"uses column {table}.{column}, which you may not see")


def _enclosing_selects(node: exp.Expression) -> list[exp.Select]:
    """The SELECTs whose FROM a column here can refer to, innermost first."""
    out = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            out.append(parent)
        parent = parent.parent
    return out


def _sources(select: exp.Select) -> dict[str, exp.Expression]:
    """alias (lowercase) → FROM/JOIN item of one SELECT."""
    items: list[exp.Expression] = []
    from_ = select.args.get("from_")
    if from_ is not None:
        items.append(from_.this)
    items.extend(join.this for join in select.args.get("joins") or [])
    items.extend(select.args.get("laterals") or [])
    return {item.alias_or_name.lower(): item for item in items}


def _resolve(qualifier: str, scopes: list[exp.Select]) -> exp.Expression | None:
    for scope in scopes:
        source = _sources(scope).get(qualifier)
        if source is not None:
            return source
    return None
