"""View stage: the tables a question needs → one view that joins them (see core/joins/).

No LLM: the joins come from the database's relationship graph (core/graph/) under Lucy's
constraints. Tables and columns the database's settings deny are never joined through or shown.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from core.database import Database
from core.joins import View, synthesize_view


def build_view(
    db: Database,
    tables: Sequence[str],
    columns: Mapping[str, Sequence[str]] | None = None,
    *,
    question: str = "",
) -> View:
    """`question`: its words pick the roles, types and parallel paths the patterns leave open."""
    return synthesize_view(
        db.graph,
        tables,
        columns,
        deny_tables=db.config.deny_tables,
        deny_columns=db.config.deny_columns,
        question=question,
    )
