"""Keys: what the catalog declares unique, which columns can hold a key, and the edge an inferred key makes."""

from __future__ import annotations

from collections.abc import Sequence

from core.catalog import Table
from core.graph.multigraph import Edge

# Inferred edges below this confidence are not joined on.
MIN_CONFIDENCE = 0.5
# Column kinds a key can be stored as (never dates, booleans or binary).
INFERABLE_KINDS = frozenset({"integer", "number", "text", "other"})


def is_unique(table: Table, columns: Sequence[str]) -> bool:
    """Declared unique: the columns contain the primary key or a unique constraint."""
    cols = {c.lower() for c in columns}
    keys = [table.primary_key, *table.unique]
    return any(k and {c.lower() for c in k} <= cols for k in keys)


def single_keys(table: Table) -> list[str]:
    """Columns that are a key on their own (a one-column primary key or unique constraint)."""
    keys = [table.primary_key, *table.unique]
    return [k[0] for k in keys if len(k) == 1]


def kinds_compatible(a: str, b: str) -> bool:
    """Could these two columns hold the same key values? (SQLite's untyped columns could hold anything.)"""
    if a == b or "other" in (a, b):
        return True
    return {a, b} <= {"integer", "number"}


def inferred_edge(
    src: Table, column: str, ref: Table, ref_column: str, confidence: float, evidence: str
) -> Edge:
    """`src.column` → `ref.ref_column`, a key: many-to-one, or one-to-one when `column` is unique too."""
    return Edge(
        table=src.name,
        columns=(column,),
        ref_table=ref.name,
        ref_columns=(ref_column,),
        origin="inferred",
        confidence=round(confidence, 2),
        evidence=evidence,
        ref_unique=True,
        src_unique=is_unique(src, (column,)),
    )
