"""Which text columns to index, and which values may never be indexed or matched at all (`Access`).

Ids, e-mails, URLs, dates kept as text and long free text are left out: nobody types them as a
filter, and e-mails are private. What is kept is decided per column from its name, its keys and a
small sample of its values (`plan_columns`).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from core.catalog import Column, Table
from core.values.progress import Progress, ProgressFn, no_progress
from core.values.source import Source

log = logging.getLogger(__name__)

PLAN_SAMPLE = 500  # rows sampled per column to decide whether to index it
FULL_READ_MAX_ROWS = 5_000_000  # bigger tables are indexed from a sample of their rows


@dataclass(frozen=True)
class ColumnChoice:
    table: str
    column: str
    index: bool
    reason: str  # text | enum-like | id | e-mail | url | long text | date | empty | denied
    sample_rows: bool = False  # table too large: read a sample of rows

    @property
    def key(self) -> str:
        return f"{self.table}.{self.column}"


@dataclass(frozen=True)
class Access:
    """What may never enter the index or a match: denied tables and denied or masked columns."""

    tables: frozenset[str] = frozenset()
    columns: frozenset[str] = frozenset()

    @classmethod
    def of(cls, db: Source) -> Access:
        cfg = db.config
        return cls(
            tables=frozenset(t.lower() for t in cfg.deny_tables),
            columns=frozenset(c.lower() for c in [*cfg.deny_columns, *cfg.mask_columns]),
        )

    def allows(self, table: str, column: str | None = None) -> bool:
        if table.lower() in self.tables:
            return False
        return column is None or f"{table}.{column}".lower() not in self.columns


NO_RULES = Access()


_ID_NAME = re.compile(r"(^|_)(id|uuid|guid|pk|fk|key|hash|token|secret|password|passwd|salt)$", re.I)
_CAMEL_ID = re.compile(r"[a-z](Id|ID|Uuid|UUID|Key)$")
EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[a-z]{2,}$", re.I)
URL = re.compile(r"^(https?|ftp)://|^www\.", re.I)
_MACHINE_ID = re.compile(
    r"^(\{?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\}?|[0-9a-f]{16,})$", re.I
)
_DIGITS = re.compile(r"^\d+$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2})?(\.\d+)?)?")


def looks_like_id_name(name: str) -> bool:
    """customer_id, CustomerId, api_key, password_hash: a name for values nobody types."""
    return bool(_ID_NAME.search(name) or _CAMEL_ID.search(name))


def _looks_like(sample: list[str], pattern: re.Pattern[str]) -> float:
    return sum(1 for s in sample if pattern.search(s)) / len(sample)


def plan_columns(db: Source, progress: ProgressFn | None = None) -> list[ColumnChoice]:
    """Decide per text column whether to index it, from its name, keys and a small sample of values.

    Ids, e-mails, URLs, dates kept as text and long free text are left out; enum-like columns and
    names, codes, places and titles are kept, foreign keys included when they hold such values
    (questions filter on instructor.dept_name as often as on department.dept_name). Tables larger
    than FULL_READ_MAX_ROWS (by the engine's statistics) are read from a sample of rows.
    """
    progress = progress or no_progress
    catalog = db.catalog
    access = Access.of(db)
    texts = [(t, c) for t in catalog.tables for c in t.columns if c.kind == "text"]
    choices: list[ColumnChoice] = []
    with db.engine.connect() as conn:
        for i, (table, col) in enumerate(texts):
            progress(Progress("plan", i, len(texts), f"{table.name}.{col.name}"))
            choices.append(_choose(conn, table, col, access))
    progress(Progress("plan", len(texts), len(texts), f"{sum(c.index for c in choices)} columns to index"))
    return choices


def _choose(conn: sa.Connection, table: Table, col: Column, access: Access) -> ColumnChoice:
    def choice(index: bool, reason: str) -> ColumnChoice:
        big = (table.row_estimate or 0) > FULL_READ_MAX_ROWS
        return ColumnChoice(table.name, col.name, index, reason, sample_rows=big and index)

    if not access.allows(table.name, col.name):
        return choice(False, "denied")
    id_named = looks_like_id_name(col.name)
    query: sa.Select[tuple[Any]] = (
        sa.select(sa.column(col.name))
        .select_from(sa.table(table.name, schema=table.schema))
        .where(sa.column(col.name).is_not(None))
        .limit(PLAN_SAMPLE)
    )
    try:
        sample = [str(v) for v in conn.execute(query).scalars() if not isinstance(v, bytes | memoryview)]
    except sa.exc.DBAPIError as exc:
        conn.rollback()
        log.warning("cannot sample %s.%s: %s", table.name, col.name, exc)
        return choice(False, "unreadable")
    sample = [s for s in sample if s.strip()]
    if not sample:
        return choice(False, "empty")
    if _looks_like(sample, EMAIL) > 0.5:
        return choice(False, "e-mail")
    if _looks_like(sample, URL) > 0.5:
        return choice(False, "url")
    if _looks_like(sample, _DATE) > 0.8:
        return choice(False, "date")
    if _looks_like(sample, _MACHINE_ID) > 0.8:
        return choice(False, "id")  # UUIDs, hashes
    if _looks_like(sample, _DIGITS) > 0.8 and (id_named or col.primary_key):
        return choice(False, "id")  # numbers kept as text in a key; zip codes and phone numbers stay
    distinct = len(set(sample))
    enum_like = distinct <= 50 and distinct <= 0.2 * len(sample) + 2
    avg_len = sum(len(s) for s in sample) / len(sample)
    avg_words = sum(len(s.split()) for s in sample) / len(sample)
    if (avg_len > 60 or avg_words > 8) and not enum_like:
        return choice(False, "long text")
    if id_named and not enum_like and avg_len > 24:
        return choice(False, "id")
    return choice(True, "enum-like" if enum_like else "text")
