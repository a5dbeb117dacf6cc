"""Lineage of column references: which columns of which real tables each reference can read.

A reference is resolved the way the database resolves it, and where the guard cannot be sure, to
every column it could be:

- A qualifier (`x.col`) names a FROM item of the innermost enclosing SELECT that has it, compared
  by the database's rules for names (`core.guard.names`): with `c` and `"C"` both in scope, a
  PostgreSQL `c.tax_id` is the table aliased `c`; where a server setting decides (MySQL) every
  item the qualifier may name is taken. A qualifier that names nothing in scope could be any
  table of the statement.
- A column list renames a table's columns by position (`FROM customers AS x(a, b, c, t)`: `x.t`
  is the fourth column, `tax_id`); the columns after the list keep their names. Without the
  table's columns in order (`GuardPolicy.table_columns`) a renamed column could be any column.
- An unqualified name is a column of the FROM items of the innermost SELECT that has such a
  column; with the schema known that is exact, without it every FROM item in scope is taken.
- PostgreSQL also reads a name as a whole row: `SELECT c FROM customers c`, `row_to_json(c)`,
  `(c).tax_id`, and — its function notation — `c.f` for `f(c)` when `c` has no column `f`
  (`c.row_to_json`, `c.concat`). A whole row reads every column.
- Derived tables, CTEs and LATERAL subqueries read nothing by themselves: their own SELECTs are
  resolved where they stand, so a reference to their output needs no further following. Table
  functions (json_each, unnest) read only their arguments, which are references of their own.

`Lineage.reads` answers for one reference; `core.guard.columns` applies the rules to the answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from sqlglot import exp

from core.guard.allowlist import ROW_FUNCTIONS
from core.guard.names import column_key, may_be_same, same

How = Literal["column", "renamed", "unknown", "row", "function"]


@dataclass(frozen=True)
class Read:
    """One real table column (or a whole row) a reference can read."""

    table: str  # lowercase table name
    column: str | None  # lowercase column; None: every column (a whole row, an unknown position)
    how: How = "column"
    shown: str = ""  # the reference as written, for reasons


@dataclass(frozen=True)
class Source:
    """One FROM item of a SELECT, as a column reference sees it."""

    node: exp.Expr
    name: exp.Identifier | None  # the alias, or a table's own name
    table: str = ""  # lowercase name when the item is a real table
    renames: tuple[str, ...] = ()  # its column list, lowercase (`AS x(a, b)`)
    base: tuple[str, ...] | None = None  # a real table's columns in order, when the schema has it
    outputs: tuple[str, ...] | None = None  # a subquery's or CTE's column names; None: unknown

    def has(self, column: str) -> bool | None:
        """Does this item have a column of that name? None: cannot tell."""
        if self.table:
            if self.base is None:
                return None
            return column in self.renames or column in self.base[len(self.renames) :]
        if self.outputs is None:
            return None
        return column in self.outputs

    def read(self, column: str, shown: str) -> Read:
        """The real table column `column` names here (real tables only)."""
        if column in self.renames:
            position = self.renames.index(column)
            if self.base is not None and position < len(self.base):
                return Read(self.table, self.base[position], "renamed", shown)
            return Read(self.table, None, "unknown", shown)
        return Read(self.table, column, "column", shown)


class Lineage:
    """Resolves column references of one statement (see the module docstring for the rules)."""

    def __init__(
        self,
        real_tables: list[exp.Table],
        dialect: str,
        table_columns: Mapping[str, tuple[str, ...]],
    ) -> None:
        self.dialect = dialect
        self.real = {id(t) for t in real_tables}
        self.statement_tables = list(dict.fromkeys(t.name.lower() for t in real_tables))
        self.table_columns = table_columns
        self._sources: dict[int, list[Source]] = {}

    def reads(self, column: exp.Column) -> list[Read]:
        """Every real table column (or whole row) the reference `column` can read."""
        name = column_key(column.name)
        shown = ".".join(part for part in (column.table, column.name) if part)
        qualifier = column.args.get("table")
        levels = enclosing_selects(column)
        if isinstance(qualifier, exp.Identifier):
            named = self.named(qualifier, levels)
            if not named:  # names nothing in scope: it could be any table of the statement
                tables = {*self.statement_tables, qualifier.name.lower()}
                return [Read(t, name, "column", shown) for t in sorted(tables)]
            return [self._qualified(source, name, shown) for source in named if source.table]
        if not levels:  # e.g. ORDER BY of a UNION: any table of the statement
            return [Read(t, name, "column", shown) for t in self.statement_tables]
        return self.unqualified(column.this, name, shown, levels)

    def named(self, qualifier: exp.Identifier, levels: list[exp.Select]) -> list[Source]:
        """The FROM items `qualifier` may name: the innermost level that surely has it wins."""
        found: list[Source] = []
        for select in levels:
            matches = [
                s
                for s in self.sources(select)
                if s.name is not None and may_be_same(qualifier, s.name, self.dialect)
            ]
            found.extend(matches)
            if any(same(qualifier, s.name, self.dialect) for s in matches if s.name is not None):
                break
        return found

    def sources(self, select: exp.Select) -> list[Source]:
        """The FROM, JOIN and LATERAL items of one SELECT."""
        key = id(select)
        if key not in self._sources:
            items: list[exp.Expr] = []
            from_ = select.args.get("from_")
            if from_ is not None:
                items.append(from_.this)
            items.extend(join.this for join in select.args.get("joins") or [])
            items.extend(select.args.get("laterals") or [])
            self._sources[key] = [self._source(item) for item in items]
        return self._sources[key]

    def _qualified(self, source: Source, name: str, shown: str) -> Read:
        has = source.has(name)
        if self.dialect == "postgres" and (has is False or (has is None and name in ROW_FUNCTIONS)):
            return Read(source.table, None, "function", shown)  # c.f is f(c): the whole row
        return source.read(name, shown)

    def unqualified(self, ident: exp.Expr, name: str, shown: str, levels: list[exp.Select]) -> list[Read]:
        """What an unqualified name reads (a column here, or in PostgreSQL a whole row)."""
        reads = []
        for select in levels:
            sources = self.sources(select)
            found = False
            for source in sources:
                has = source.has(name)
                if has is False:
                    continue
                if source.table:
                    reads.append(source.read(name, shown))
                found = found or bool(has)
            if self.dialect == "postgres" and not found and isinstance(ident, exp.Identifier):
                for source in sources:  # no such column here: a whole-row reference, if it names an item
                    if source.name is not None and may_be_same(ident, source.name, self.dialect):
                        if source.table:
                            reads.append(Read(source.table, None, "row", shown))
                        found = found or same(ident, source.name, self.dialect)
            if found:
                break
        return reads

    def _source(self, item: exp.Expr) -> Source:
        alias = item.args.get("alias")
        alias_name = alias.this if isinstance(alias, exp.TableAlias) else None
        renames = tuple(
            column_key(c.name) for c in (alias.columns if isinstance(alias, exp.TableAlias) else [])
        )
        if isinstance(item, exp.Table) and isinstance(item.this, exp.Identifier):
            name = alias_name if isinstance(alias_name, exp.Identifier) else item.this
            if id(item) in self.real:
                table = item.name.lower()
                db = item.text("db").lower()
                base = self.table_columns.get(f"{db}.{table}") if db else None
                base = base if base is not None else self.table_columns.get(table)
                return Source(item, name, table=table, renames=renames, base=base)
            cte = visible_cte(item, self.dialect)  # not real: a CTE
            outputs = _outputs(cte.this, _renames(cte)) if cte is not None else None
            return Source(item, name, outputs=_renamed(outputs, renames))
        if isinstance(item, exp.Subquery) or (
            isinstance(item, exp.Lateral) and isinstance(item.this, exp.Subquery)
        ):
            body = item.this if isinstance(item, exp.Subquery) else item.this.this
            return Source(item, alias_name, outputs=_outputs(body, renames))
        return Source(item, alias_name)  # a table function, UNNEST, VALUES: columns unknown


def enclosing_selects(node: exp.Expr) -> list[exp.Select]:
    """The SELECTs whose FROM a column here can refer to, innermost first.

    Every enclosing SELECT, not only the ones SQL makes visible (a derived table cannot see the
    query around it): a name resolved in more places is checked against more rules, never fewer.
    """
    out = []
    parent = node.parent
    while parent is not None:
        if isinstance(parent, exp.Select):
            out.append(parent)
        parent = parent.parent
    return out


def visible_cte(table: exp.Table, dialect: str) -> exp.CTE | None:
    """The CTE `table` names where it stands (earlier CTEs only; itself if RECURSIVE), if any.

    A forward reference is a real table: that is what PostgreSQL does, and it is the conservative
    reading for access rules. Names are compared by `names.same`: a table that the database might
    read as a real one is one.
    """
    if table.args.get("db") or table.args.get("catalog") or not isinstance(table.this, exp.Identifier):
        return None
    ident = table.this
    node: exp.Expr | None = table
    while node is not None and node.parent is not None:
        parent = node.parent
        if isinstance(parent, exp.With):
            ctes = parent.expressions
            index = next((k for k, cte in enumerate(ctes) if cte is node), len(ctes))
            visible = ctes[: index + 1] if parent.args.get("recursive") else ctes[:index]
            found = _named_cte(visible, ident, dialect)
            if found is not None:
                return found
            node = parent.parent  # the query that owns this WITH: its other CTEs are not visible
            continue
        with_ = parent.args.get("with_") if isinstance(parent, exp.Query) else None
        if isinstance(with_, exp.With) and node is not with_:
            found = _named_cte(with_.expressions, ident, dialect)
            if found is not None:
                return found
        node = parent
    return None


def _named_cte(ctes: list[exp.CTE], ident: exp.Identifier, dialect: str) -> exp.CTE | None:
    for cte in reversed(ctes):
        alias = cte.args.get("alias")
        name = alias.this if isinstance(alias, exp.TableAlias) else None
        if isinstance(name, exp.Identifier) and same(ident, name, dialect):
            return cte
    return None


def _renames(cte: exp.CTE) -> tuple[str, ...]:
    alias = cte.args.get("alias")
    return tuple(column_key(c.name) for c in (alias.columns if isinstance(alias, exp.TableAlias) else []))


def _outputs(body: exp.Expr, renames: tuple[str, ...]) -> tuple[str, ...] | None:
    """A query's column names after a column list; None when a `*` makes them unknown."""
    query = body
    while isinstance(query, exp.Subquery):
        query = query.this
    while isinstance(query, exp.SetOperation):
        query = query.this  # the first branch names the columns
        while isinstance(query, exp.Subquery):
            query = query.this
    if not isinstance(query, exp.Select):
        return renames or None
    if any(isinstance(e, exp.Star) or isinstance(e.this, exp.Star) for e in query.expressions):
        return None
    return _renamed(tuple(column_key(e.output_name) for e in query.expressions), renames)


def _renamed(names: tuple[str, ...] | None, renames: tuple[str, ...]) -> tuple[str, ...] | None:
    if names is None:
        return None
    return renames + names[len(renames) :]
