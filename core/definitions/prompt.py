"""The definitions a question needs, as the SQL writer reads them: named, ready SQL it may use.

One line of meaning per definition, then its SQL. Entities and metrics at a grain can be
selected from by name like tables (they are expanded before the query runs, core/definitions/
expand.py), so the writer does not have to copy a role-table join correctly three times; the
rest are snippets to copy: a metric's aggregate over its table, a filter's condition, a
relationship's join. Instructions are rules in words, listed last.
"""

from __future__ import annotations

from collections.abc import Sequence

from core.definitions.expand import definition_sql
from core.definitions.model import Definition

HEADER = (
    "\n### Business definitions\n"
    "What these words mean here, decided by the people who own the data. When the question uses"
    " one, follow its definition rather than your own reading. Names in `backticks` can be"
    " selected from like tables; they are expanded before the query runs.\n"
)


def definitions_text(definitions: Sequence[Definition]) -> str:
    if not definitions:
        return ""
    ordered = sorted(
        definitions, key=lambda d: ["entity", "metric", "filter", "relationship", "instruction"].index(d.kind)
    )
    lines = [_line(d) for d in ordered]
    return HEADER + "\n".join(lines) + "\n"


def _line(d: Definition) -> str:
    said = _said(d)
    about = f": {d.description.strip()}" if d.description else ""
    unit = f" Unit: {d.unit}." if d.unit else ""
    if d.kind == "entity":
        return f"- {said} — entity `{d.ref}`{about}\n  `{d.ref}` = {_one_line(definition_sql(d))}"
    if d.kind == "metric" and d.ratio:
        return (
            f"- {said} — metric{about}\n  = `{d.numerator}` / `{d.denominator}` over the same rows:"
            f" compute each as defined, then CAST(numerator AS REAL) / NULLIF(denominator, 0).{unit}"
        )
    if d.kind == "metric":
        where = f" WHERE {d.filter}" if d.filter else ""
        text = f"- {said} — metric{about}\n  = {d.sql} FROM {d.table}{where}.{unit}"
        if d.grain:
            text += f"\n  Per {', '.join(d.grain)}: `{d.ref}` ({', '.join(d.grain)}, {d.ref})."
        return text
    if d.kind == "filter":
        return f"- {said} — condition on {d.table}{about}\n  {d.sql}"
    if d.kind == "relationship":
        via = f" (through {', '.join(d.via)})" if d.via else ""
        return f"- {said} — how {d.table} joins {d.to}{via}{about}\n  JOIN {d.to} ON {d.sql}"
    return f"- Rule: {d.text.strip()}"


def _said(d: Definition) -> str:
    return " / ".join(f'"{w}"' for w in d.words[:4])


def _one_line(sql: str) -> str:
    return " ".join(sql.split())
