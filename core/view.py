"""View stage: the tables a question needs → one view that joins them (see core/joins/), and a
few of its rows for the prompt.

No LLM: the joins come from the database's relationship graph (core/graph/) under Lucy's
constraints. Tables and columns the database's settings deny are never joined through or shown.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from core.database import Database
from core.execute import Limits, QueryError, execute
from core.joins import View, synthesize_view

log = logging.getLogger(__name__)


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
