"""Profiling: small samples of column values, read once per table, under a time budget.

Inference asks two things of the data: which values a column holds (`sample`) and whether a key
candidate's values are unique and contain another column's (`key_values`, `contains`). It never
reads whole tables, gives each statement a few seconds, and stops when the budget is spent
(`complete` turns False and the graph says so in its stats).
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from decimal import Decimal
from typing import Any

import sqlalchemy as sa

from core.catalog import Catalog, Column, Table
from core.graph.keys import INFERABLE_KINDS

log = logging.getLogger(__name__)

# Profiling budget: rows read per table for candidate columns, values kept per key column.
SAMPLE_ROWS = 2000
SAMPLE_VALUES = 200
KEY_VALUES = 5000
PROFILE_BUDGET_S = 10.0
PROFILE_MAX_TABLES = 2000


class Profiler:
    """Reads small samples of column values, once per table, under a time budget."""

    def __init__(self, catalog: Catalog, engine: sa.Engine, budget_s: float) -> None:
        self.catalog = catalog
        self.engine = engine
        self.deadline = time.perf_counter() + budget_s
        self.complete = True
        self.tables_read = 0
        self._samples: dict[str, dict[str, set[str]] | None] = {}
        self.rows_sampled: dict[str, int] = {}  # rows read by `sample`, per table (lower-case name)
        self._keys: dict[tuple[str, str], tuple[set[str], bool, bool] | None] = {}

    @contextmanager
    def _connect(self) -> Iterator[sa.Connection]:
        """A connection whose statements give up after a few seconds: profiling must stay cheap."""
        with self.engine.connect() as conn:
            timeout = {
                "postgresql": "SET statement_timeout = 5000",
                "mysql": "SET SESSION max_execution_time = 5000",
                "mariadb": "SET SESSION max_statement_time = 5",
            }.get("mariadb" if getattr(conn.dialect, "is_mariadb", False) else conn.dialect.name)
            if timeout:
                try:
                    conn.execute(sa.text(timeout))
                except sa.exc.SQLAlchemyError:
                    conn.rollback()
            yield conn

    def _out_of_time(self) -> bool:
        if time.perf_counter() > self.deadline or self.tables_read >= PROFILE_MAX_TABLES:
            self.complete = False
            return True
        return False

    def sample(self, table: Table) -> dict[str, set[str]] | None:
        """Distinct values (as text) of each column among the first SAMPLE_ROWS rows."""
        low = table.name.lower()
        if low in self._samples:
            return self._samples[low]
        if self._out_of_time():
            return None
        cols = [c.name for c in table.columns if c.kind in INFERABLE_KINDS]
        result: dict[str, set[str]] | None = None
        if cols:
            query: sa.Select[*tuple[Any, ...]] = sa.select(*(sa.column(c) for c in cols)).select_from(
                sa.table(table.name, schema=table.schema)
            )
            try:
                with self._connect() as conn:
                    rows = conn.execute(query.limit(SAMPLE_ROWS)).all()
                self.tables_read += 1
                self.rows_sampled[low] = len(rows)
                result = {c: set() for c in cols}
                for row in rows:
                    for c, v in zip(cols, row, strict=True):
                        values = result[c]
                        if v is not None and len(values) < SAMPLE_VALUES:
                            values.add(_norm_value(v))
            except sa.exc.SQLAlchemyError as exc:
                log.info("profiling skipped %s: %s", table.name, exc)
        self._samples[low] = result
        return result

    def key_values(self, table: Table, column: str) -> tuple[set[str], bool, bool] | None:
        """(values, complete, unique) of a key candidate, reading at most KEY_VALUES rows."""
        k = (table.name.lower(), column.lower())
        if k in self._keys:
            return self._keys[k]
        if self._out_of_time():
            return None
        query: sa.Select[Any] = sa.select(sa.column(column)).select_from(
            sa.table(table.name, schema=table.schema)
        )
        result = None
        try:
            with self._connect() as conn:
                rows = conn.execute(query.limit(KEY_VALUES + 1)).all()
            self.tables_read += 1
            values = [_norm_value(r[0]) for r in rows if r[0] is not None]
            complete = len(rows) <= KEY_VALUES
            distinct = set(values)
            result = (distinct, complete, len(distinct) == len(values))
        except sa.exc.SQLAlchemyError as exc:
            log.info("profiling skipped %s.%s: %s", table.name, column, exc)
        self._keys[k] = result
        return result

    def pairs(self, table: Table, key: str, label: str, limit: int = SAMPLE_VALUES) -> list[tuple[str, str]]:
        """(key, label) of up to `limit` rows: what each code of a small code table stands for."""
        if self._out_of_time():
            return []
        query: sa.Select[Any, Any] = (
            sa.select(sa.column(key), sa.column(label))
            .select_from(sa.table(table.name, schema=table.schema))
            .limit(limit)
        )
        try:
            with self._connect() as conn:
                rows = conn.execute(query).all()
        except sa.exc.SQLAlchemyError as exc:
            log.info("profiling skipped %s: %s", table.name, exc)
            return []
        return [(_norm_value(k), _norm_value(v)) for k, v in rows if k is not None and v is not None]

    def contains(self, table: Table, column: str, values: Iterable[str]) -> float | None:
        """Fraction of `values` found in table.column (exactly, for big tables via an IN query)."""
        vals = list(values)
        if not vals:
            return None
        keys = self.key_values(table, column)
        if keys is None:
            return None
        distinct, complete, _ = keys
        hits = sum(v in distinct for v in vals)
        if complete or hits == len(vals):
            return hits / len(vals)
        if self._out_of_time():
            return None
        col: sa.ColumnClause[Any] = sa.column(column)
        kind = (table.column(column) or Column(column, "")).kind
        # compare in the column's own type, so an index on the key can answer
        if kind in ("integer", "number") and all(re.fullmatch(r"-?\d+", v) for v in vals):
            condition = col.in_([int(v) for v in vals])
        elif kind == "text":
            condition = col.in_(vals)
        else:
            condition = sa.cast(col, sa.String).in_(vals)
        query = (
            sa.select(sa.func.count(sa.distinct(col)))
            .select_from(sa.table(table.name, schema=table.schema))
            .where(condition)
        )
        try:
            with self._connect() as conn:
                found = conn.execute(query).scalar() or 0
            return min(1.0, found / len(vals))
        except sa.exc.SQLAlchemyError:
            return hits / len(vals)


def _norm_value(v: Any) -> str:
    kind = type(v)
    if kind is int:
        return str(v)
    if kind is str:
        return str(v).strip()
    if isinstance(v, bool):
        return str(int(v))
    if isinstance(v, float | Decimal) and v == int(v):
        return str(int(v))
    if isinstance(v, bytes):
        return v.hex()
    return str(v).strip()
