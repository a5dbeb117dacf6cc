"""The view in words: the CREATE TABLE the SQL writer reads, its grain, and the joins it already made.

The writer sees one table; these texts tell it what a row is, which rows repeat (so it counts
with COUNT(DISTINCT key) and does not SUM a repeated column), which columns are NULL for a
missing LEFT JOIN match, and which aliases are the same table in different roles.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from core.joins.view import View, grain_text


def view_ddl(view: View, samples: Sequence[Sequence[Any]] = ()) -> str:
    """The view as one table for the SQL writer: CREATE TABLE with column notes, sample rows, fan-out.

    `samples` are rows in `view.columns` order (see `sample_sql`).
    """
    lines = [f"CREATE TABLE {view.name} ("]
    for i, c in enumerate(view.columns):
        note = [f"{c.table}.{c.column}" if view.steps else ""]
        if c.primary_key:
            note.append(f"key of {c.alias if c.alias != c.table else c.table}")
        if c.description:
            note.append(c.description)
        text = "; ".join(n for n in note if n)
        comma = "," if i < len(view.columns) - 1 else ""
        lines.append(f"  {c.name} {c.type or 'TEXT'}{comma}" + (f"  -- {text}" if text else ""))
    lines.append(");")
    if view.steps:
        lines.append(f"-- Already joined (do not join again): {join_summary(view)}")
        lines.append("-- " + grain_text(view))
        left = sorted({s.alias for s in view.steps if s.kind == "left"})
        if left:
            lines.append(
                "-- LEFT JOINed, NULL when there is no matching row: "
                + ", ".join(f"{a}_*" for a in left)
                + ". Test membership with <alias>_<key> IS NOT NULL."
            )
        roles = _role_groups(view)
        for table, aliases in roles.items():
            lines.append(
                f"-- {', '.join(a + '_*' for a in aliases)} are the same table {table} in different roles: "
                "use the one the question means."
            )
        lines += [f"-- Pattern: {p}." for p in view.patterns]
        lines += [
            f"-- Two readings, equally good: {t}. If the question means the other one, join the base tables that way."
            for t in view.ties
        ]
    if samples:
        names = [c.name for c in view.columns]
        lines.append(f"/* {len(samples)} example rows:")
        lines.append(" | ".join(names))
        for row in samples:
            lines.append(" | ".join(_cell(v) for v in row))
        lines.append("*/")
    return "\n".join(lines)


def join_summary(view: View) -> str:
    """The joins already made, in order, so the writer does not join again: client → LEFT location."""
    parts = [view.root_table]
    for s in view.steps:
        target = s.table if s.alias == s.table else f"{s.table} as {s.alias}"
        parts.append(f"{'LEFT ' if s.kind == 'left' else ''}{target}")
    return " → ".join(parts)


def _role_groups(view: View) -> dict[str, list[str]]:
    """Tables joined more than once, one copy per role, with the aliases of their copies."""
    groups: dict[str, list[str]] = {}
    for s in view.steps:
        if s.role:
            groups.setdefault(s.table, []).append(s.alias)
    return {t: a for t, a in groups.items() if len(a) > 1}


def _cell(value: Any) -> str:
    """A sample value, cut short: example rows are for shape, not content."""
    text = "NULL" if value is None else str(value)
    return text if len(text) <= 40 else text[:37] + "..."


def sample_sql(view: View, dialect: str, limit: int = 3) -> str:
    """SELECT a few rows of the view (columns in `view.columns` order), for `view_ddl`."""
    return view.select(dialect).limit(limit).sql(dialect=dialect)
