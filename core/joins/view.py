"""The view: what the SQL writer sees as one table, and the SELECT over base tables that defines it.

A `View` is a root table plus `JoinStep`s (each joins one table instance, by alias, onto the ones
before it) and the `ViewColumn`s it exposes. `core.joins.synthesize` decides the steps;
`View.select` is the definition `core.expand` puts in place of the view in the writer's SQL.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlglot import exp

from core.joins.identifiers import identifier, table_expr


@dataclass(frozen=True)
class ViewColumn:
    """A column of the view and the base column it stands for."""

    name: str  # column name inside the view, e.g. client_name
    alias: str  # alias of the table instance it comes from
    table: str
    column: str
    type: str = ""
    kind: str = "other"
    description: str = ""
    primary_key: bool = False  # part of its table's primary key (COUNT(DISTINCT ...) over a fan-out)


@dataclass(frozen=True)
class JoinStep:
    """Join `table AS alias` onto the view built so far."""

    alias: str
    table: str
    kind: str  # "inner" | "left"
    on: tuple[tuple[str, str], ...]  # (existing_alias.column, alias.column)
    origin: str = "declared"  # declared | catalog | inferred
    reason: str = ""
    role: str | None = None
    schema: str | None = None
    parent: str = ""  # alias this step joins onto
    confidence: float = 1.0
    fans_out: bool = False  # repeats the rows joined so far (one-to-many)
    determines_parent: bool = False  # each row of this table matches at most one parent row
    why: str = ""  # why the table is in the view: requested, connector, bridge, role, lookup...
    where: tuple[tuple[str, str], ...] = ()  # (alias.column, value): a role filter inside the join
    within: str = ""  # alias of the copy this INNER join restricts (joined together, in parentheses)


@dataclass(frozen=True)
class View:
    """Several tables joined into one: the steps, the columns, the grain, and notes for the trace."""

    root_alias: str
    root_table: str
    steps: tuple[JoinStep, ...] = ()
    columns: tuple[ViewColumn, ...] = ()
    fans_out: bool = False
    name: str = "v"
    notes: tuple[str, ...] = field(default_factory=tuple)
    root_schema: str | None = None
    requested: tuple[str, ...] = ()
    grain: tuple[str, ...] = ()  # aliases whose keys identify a row
    cost: float = 0.0
    method: str = ""  # how the tree was found: exact / approximate / single table
    dropped: tuple[str, ...] = ()  # requested tables that could not be joined
    ties: tuple[str, ...] = ()  # equally good joins the view chose between (the recipe says so)
    patterns: tuple[str, ...] = ()  # enterprise patterns the view applied: role, typed fact, ...

    @property
    def tables(self) -> list[str]:
        return [self.root_table, *(s.table for s in self.steps)]

    @property
    def single_table(self) -> bool:
        return not self.steps

    @property
    def aliases(self) -> dict[str, str]:
        """alias → table."""
        return {self.root_alias: self.root_table, **{s.alias: s.table for s in self.steps}}

    def join_edges(self) -> set[frozenset[tuple[str, str]]]:
        """Join conditions as unordered (table, column) pairs, lower case (what the benchmark compares)."""
        tables = self.aliases
        out = set()
        for s in self.steps:
            for left, right in s.on:
                la, lc = left.split(".", 1)
                ra, rc = right.split(".", 1)
                out.add(frozenset(((tables[la].lower(), lc.lower()), (tables[ra].lower(), rc.lower()))))
        return out

    def join_filters(self) -> set[tuple[str, str, str]]:
        """Role filters inside joins as (table, column, value), lower case (what the benchmark compares)."""
        tables = self.aliases
        out = set()
        for s in self.steps:
            for left, value in s.where:
                alias, col = left.split(".", 1)
                out.add((tables[alias].lower(), col.lower(), value))
        return out

    def select(self, dialect: str | None = None, columns: Sequence[str] | None = None) -> exp.Select:
        """The SELECT that defines the view, over base tables.

        `columns` keeps only those view columns, and drops LEFT JOINs that neither add rows nor
        feed a kept column (a many-to-one LEFT JOIN never changes the row count).
        """
        keep = self.columns if columns is None else [c for c in self.columns if c.name in set(columns)]
        steps = self.needed_steps({c.alias for c in keep}) if columns is not None else list(self.steps)
        query = exp.select(
            *(
                column_expr(self, c.alias, c.column, dialect).as_(identifier(c.name, dialect, alias=True))
                for c in keep
            )
        )
        query.set("from_", self.from_expr(dialect))
        query.set("joins", self.join_exprs(steps, dialect))
        return query

    def from_expr(self, dialect: str | None = None) -> exp.From:
        return exp.From(this=table_expr(self.root_table, self.root_schema, self.root_alias, dialect))

    def join_exprs(self, steps: Sequence[JoinStep], dialect: str | None = None) -> list[exp.Join]:
        """The JOIN clauses of `steps`; a copy with steps `within` it is joined with them in
        parentheses: LEFT JOIN (claim_amount AS a JOIN loss_payment ON ...) ON a.claim_id = ..."""
        inside: dict[str, list[JoinStep]] = {}
        for step in steps:
            if step.within:
                inside.setdefault(step.within, []).append(step)
        joins = []
        for step in steps:
            if step.within:
                continue
            target: exp.Expr = table_expr(step.table, step.schema, step.alias, dialect)
            if step.alias in inside:
                target.set(
                    "joins",
                    [
                        self._join(s, table_expr(s.table, s.schema, s.alias, dialect), dialect)
                        for s in inside[step.alias]
                    ],
                )
                target = exp.Paren(this=target)
            joins.append(self._join(step, target, dialect))
        return joins

    def _join(self, step: JoinStep, target: exp.Expr, dialect: str | None) -> exp.Join:
        conditions: list[exp.Expr] = [
            exp.EQ(
                this=self._column(left, dialect),
                expression=self._column(right, dialect),
            )
            for left, right in step.on
        ]
        conditions += [
            exp.EQ(this=self._column(left, dialect), expression=exp.Literal.string(value))
            for left, value in step.where
        ]
        side = "LEFT" if step.kind == "left" else None
        return exp.Join(this=target, on=exp.and_(*conditions), side=side)

    def _column(self, ref: str, dialect: str | None) -> exp.Column:
        """A join step's `alias.column` as a column of this view."""
        alias, column = ref.split(".", 1)
        return column_expr(self, alias, column, dialect)

    def needed_steps(self, used_aliases: set[str]) -> list[JoinStep]:
        """Steps to keep when only `used_aliases` are read: every INNER or row-multiplying join,
        and LEFT joins on the way to a used alias."""
        children: dict[str, list[JoinStep]] = {}
        for s in self.steps:
            children.setdefault(s.parent, []).append(s)
        keep: set[str] = set()

        def visit(step: JoinStep) -> bool:
            needed = (step.kind != "left" and not step.within) or step.fans_out or step.alias in used_aliases
            for child in children.get(step.alias, []):
                needed = visit(child) or needed
            if needed:
                keep.add(step.alias)
            return needed

        for s in children.get(self.root_alias, []):
            visit(s)
        # a copy is kept with what restricts it: its subtype join belongs to it
        keep |= {s.alias for s in self.steps if s.within in keep}
        return [s for s in self.steps if s.alias in keep]

    def explain(self) -> list[str]:
        """What the trace shows: the tables, each join and why, the grain — for a person debugging."""
        if self.single_table:
            lines = [f"view = table {self.root_table} (no join needed)"]
            return [*lines, *self.notes]
        requested = {t.lower() for t in self.requested}
        added = sorted({s.table for s in self.steps if s.table.lower() not in requested} - {self.root_table})
        lines = [
            f"view {self.name}: {len(self.aliases)} table instances, cost {self.cost:g} ({self.method})",
            f"requested: {', '.join(self.requested)}" + (f"; added: {', '.join(added)}" if added else ""),
            f"FROM {self.root_table}"
            + (f" AS {self.root_alias}" if self.root_alias != self.root_table else ""),
        ]
        for s in self.steps:
            on = " AND ".join([*(f"{a} = {b}" for a, b in s.on), *(f"{a} = '{v}'" for a, v in s.where)])
            target = s.table + (f" AS {s.alias}" if s.alias != s.table else "")
            if s.within:
                target += f" (inside the join of {s.within})"
            why = "; ".join(
                x for x in (s.reason, s.why, "repeats rows (one-to-many)" if s.fans_out else "") if x
            )
            lines.append(f"{s.kind.upper()} JOIN {target} ON {on} — {why}")
        lines.append(grain_text(self))
        lines += [f"pattern: {p}" for p in self.patterns]
        lines += [f"tied: {t}" for t in self.ties]
        return [*lines, *self.notes]


def column_expr(view: View, alias: str, column: str, dialect: str | None) -> exp.Column:
    """`alias.column` of a table instance of the view, quoted only where the dialect needs it."""
    table = view.aliases.get(alias, alias)
    qualifier = identifier(table, dialect) if alias == table else identifier(alias, dialect, alias=True)
    return exp.Column(this=identifier(column, dialect), table=qualifier)


def grain_text(view: View) -> str:
    """One line on what a row of the view is, which rows repeat, and how to count them."""
    aliases = view.aliases

    def label(a: str) -> str:
        return aliases[a] if a == aliases[a] else f"{a} ({aliases[a]})"

    if not view.fans_out:
        return f"grain: one row per {view.root_table}" + (
            " — the joins add columns, not rows" if view.steps else ""
        )
    repeating = [a for a in aliases if not (len(view.grain) == 1 and a == view.grain[0])]
    counts = []
    for a in repeating:
        keys = [c.name for c in view.columns if c.alias == a and c.primary_key]
        if len(keys) == 1:
            counts.append(f"COUNT(DISTINCT {keys[0]})")
    text = (
        f"grain: one row per {' × '.join(label(a) for a in view.grain)} — "
        f"rows of {', '.join(label(a) for a in repeating[:6])}{' ...' if len(repeating) > 6 else ''} repeat"
    )
    if counts:
        text += f"; count them with {', '.join(counts[:6])}"
    return text + "; do not SUM a column of a table whose rows repeat"
