"""View stage: the tables a question names → the view that joins them, as the writer's join recipe.

No LLM: the joins come from the database's relationship graph (core/graph/) under Lucy's
constraints (core/joins/). Tables and columns the database's settings deny are never joined
through or shown.

In LLM mode the view is a hint, not a cage (issue 13): the writer sees every base table and,
beside them, this view rendered as a ready CTE (`recipe_text`) with its grain and what repeats.
It may select from the view by name (core/expand.py puts the definition back), copy its joins,
or ignore it when the question needs rows the view does not keep (entities with no match, for
"no X" questions), key columns it leaves out, or another grain.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from core.catalog import Catalog
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.joins import View, grain_text, synthesize_view
from core.joins.identifiers import safe_name
from core.joins.steiner import KnownTrees
from core.link import question_trees

log = logging.getLogger(__name__)


def build_view(
    db: Database,
    tables: Sequence[str],
    columns: Mapping[str, Sequence[str]] | None = None,
    *,
    question: str = "",
    trees: KnownTrees | None = None,
) -> View:
    """`question`: its words pick the roles, types and parallel paths the patterns leave open.
    `trees`: the question's join trees found so far, reused for the same tables."""
    return synthesize_view(
        db.graph,
        tables,
        columns,
        deny_tables=db.config.deny_tables,
        deny_columns=db.config.deny_columns,
        question=question,
        trees=trees,
    )


def required(view: View, table: str) -> View:
    """The view with `table` joined as required. A pattern may LEFT JOIN it (a subtype of a typed
    fact: Shops under Tourist_Attractions), but when a question lists or counts that table's rows,
    a row without one is not one of them ('details of shops reached by walk' must not list an
    attraction that is no shop)."""
    steps = tuple(
        replace(s, kind="inner") if s.kind == "left" and s.table.lower() == table.lower() else s
        for s in view.steps
    )
    return view if steps == view.steps else replace(view, steps=steps)


def sample_rows(db: Database, view: View, n: int) -> list[tuple[Any, ...]]:
    """A few rows of the view for the prompt; a slow or failing sample never stops the question."""
    if n <= 0:
        return []
    sql = view.select().limit(n).sql(dialect=db.catalog.dialect)
    try:
        return execute(db, sql, Limits(row_cap=n, timeout_s=5)).rows
    except QueryError as exc:
        log.info("no sample rows for the view: %s", exc.message)
        return []


def recipe_view(db: Database, tables: Sequence[str], question: str, max_tables: int) -> View | None:
    """The join recipe for the tables the question names, when it tells the writer something the
    schema's keys do not: None when they need no join (one table), cannot be joined, take more
    than `max_tables` table copies (a recipe that large is more to read than to write), or are
    two tables on one many-to-one key the schema shows anyway."""
    if len(tables) < 2 or max_tables <= 0:
        return None
    # the tree the scope's join path found for these tables (core/link.py), not a second search
    trees = question_trees(db.graph.restricted(db.config.deny_tables, db.config.deny_columns), question)
    try:
        view = build_view(db, tables, question=question, trees=trees)
    except ValueError as exc:
        log.info("no join recipe for %s: %s", ", ".join(tables), exc)
        return None
    if view.single_table or len(view.aliases) > max_tables or view.dropped:
        return None
    return view if _tells_more(view) else None


def _tells_more(view: View) -> bool:
    """A connector the question did not name, a second copy of a table (roles), a pattern, a
    tie, a LEFT JOIN or repeated rows: reasoning the writer would otherwise redo."""
    named = {t.lower() for t in view.requested}
    return (
        len(view.steps) > 1
        or any(t.lower() not in named for t in view.tables)
        or len(set(view.tables)) < len(view.tables)
        or bool(view.patterns or view.ties or view.fans_out)
        or any(s.kind == "left" or s.where for s in view.steps)
    )


def recipe_text(view: View, catalog: Catalog, dialect: str) -> str:
    """The view as a CTE the writer can reuse by name or copy. Its SELECT list is said in words:
    the view's columns are named <table>_<column> (<alias>_<column> for a table in a role), and
    only the exceptions are listed — spelling out `a.x AS a_x` for every column would cost three
    times the tokens of the joins and say nothing more:

        -- grain: one row per payment — the joins add columns, not rows
        WITH client_payment_view AS (
          SELECT /* every column of each table as <table>_<column>; left out: payment_client_id */
          FROM payment
          JOIN client ON payment.client_id = client.id -- inferred join
        )
    """
    lines = [*(f"-- {n}" for n in _notes(view)), f"WITH {view.name} AS ("]
    lines.append(f"  SELECT /* {_columns_in_words(view, catalog)} */")
    lines.append("  " + view.from_expr(dialect).sql(dialect=dialect))
    inferred = {s.alias for s in view.steps if s.origin == "inferred"}
    joined = [s for s in view.steps if not s.within]
    for step, join in zip(joined, view.join_exprs(view.steps, dialect), strict=True):
        note = " -- inferred join" if step.alias in inferred else ""
        lines.append("  " + join.sql(dialect=dialect) + note)
    lines.append(")")
    return "\n".join(lines)


def _columns_in_words(view: View, catalog: Catalog) -> str:
    """The view's columns as the naming rule plus its exceptions."""
    expected: dict[str, tuple[str, str]] = {}
    for alias, table in view.aliases.items():
        t = catalog.table(table)
        for c in t.columns if t is not None else ():
            expected[safe_name(f"{alias}_{c.name}")] = (alias, c.name)
    actual = {c.name.lower(): c for c in view.columns}
    other = [c.name for c in view.columns if c.name.lower() not in expected]
    missing = [n for n in expected if n not in actual]
    if len(other) + len(missing) > len(view.columns) // 2:
        return ", ".join(c.name for c in view.columns)  # no rule to speak of: list them
    roles = [a for a, t in view.aliases.items() if a != safe_name(t)]
    text = "every column of each table as <table>_<column>"
    if roles:
        text += f" (tables in a role by their alias: {', '.join(roles)})"
    if missing:
        text += f"; left out: {', '.join(missing)}"
    if other:
        text += f"; also: {', '.join(other)}"
    return text


def _notes(view: View) -> list[str]:
    # the writer's guidance already says never to SUM a repeated value
    notes = [grain_text(view).removesuffix("; do not SUM a column of a table whose rows repeat")]
    left = sorted({s.alias for s in view.steps if s.kind == "left"})
    if left:
        notes.append(f"LEFT JOINed ({', '.join(left)}): their columns are NULL where no row matches")
    notes += [f"pattern: {p}" for p in view.patterns]
    notes += [f"two joins were equally good: {t}" for t in view.ties]
    return notes
