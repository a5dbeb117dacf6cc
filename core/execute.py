"""Execute stage: run guarded SQL in a read-only transaction with a timeout, a row cap and a byte cap.

Defence in depth under the guard: the session is already read-only (core/connect.py); here every
query also runs inside a read-only transaction that is always rolled back, with a statement
timeout enforced by the server (PostgreSQL `statement_timeout`, MariaDB `max_statement_time`,
MySQL `max_execution_time`) or by SQLite's progress handler. Rows are streamed and cut at the caps
so a huge result never sits whole in memory.
"""

from __future__ import annotations

import csv
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import sqlalchemy as sa

from core.database import Database

log = logging.getLogger(__name__)

ErrorKind = Literal["timeout", "syntax", "readonly", "connection", "permission", "other"]
FETCH_BATCH = 500


@dataclass(frozen=True)
class Limits:
    row_cap: int = 5000
    byte_cap: int = 20_000_000
    timeout_s: float = 30.0


@dataclass(frozen=True)
class ResultSet:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    truncated: bool = False  # more rows existed than the caps allowed
    ms: float = 0.0

    @property
    def row_count(self) -> int:
        return len(self.rows)

    @property
    def empty(self) -> bool:
        return not self.rows

    @property
    def vacuous(self) -> bool:
        """No rows, or one row of only NULLs and zeros: what a wrong filter under COUNT/SUM gives."""
        if not self.rows:
            return True
        return len(self.rows) == 1 and all(
            v is None or (isinstance(v, int | float) and v == 0) for v in self.rows[0]
        )


class QueryError(Exception):
    """A database error with its kind; `message` is the database's text, safe to show the LLM."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def _classify(exc: BaseException) -> QueryError:
    orig = getattr(exc, "orig", None) or exc
    text = " ".join(str(orig).split())[:800]
    low = text.lower()
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return QueryError("connection", text)
    if any(
        k in low
        for k in (
            "statement timeout",
            "canceling statement",
            "max_statement_time",
            "interrupted",
            "maximum statement execution time",
            "query execution was interrupted",
        )
    ):
        return QueryError("timeout", text)
    if any(k in low for k in ("read-only", "read only", "readonly", "query_only")):
        return QueryError("readonly", text)
    if any(k in low for k in ("permission denied", "access denied", "not authorized")):
        return QueryError("permission", text)
    if isinstance(exc, sa.exc.OperationalError) and any(
        k in low for k in ("connection", "server closed", "lost connection", "gone away", "could not connect")
    ):
        return QueryError("connection", text)
    return QueryError("syntax" if "syntax" in low else "other", text)


@contextmanager
def _readonly_transaction(db: Database, timeout_s: float) -> Iterator[sa.Connection]:
    backend = db.backend
    with db.engine.connect() as conn:
        deadline = time.monotonic() + timeout_s
        raw = conn.connection.dbapi_connection
        try:
            if backend == "sqlite":
                assert isinstance(raw, sqlite3.Connection)
                raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
            elif backend == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
            elif backend in ("mysql", "mariadb"):
                if conn.dialect.is_mariadb:  # type: ignore[attr-defined]
                    conn.exec_driver_sql(f"SET SESSION max_statement_time = {max(0.001, timeout_s):.3f}")
                else:
                    conn.exec_driver_sql(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
                conn.exec_driver_sql("START TRANSACTION READ ONLY")
            yield conn
        finally:
            try:
                conn.rollback()
            finally:
                if backend == "sqlite" and isinstance(raw, sqlite3.Connection):
                    raw.set_progress_handler(None, 0)


def _stream(
    db: Database,
    sql: str,
    limits: Limits,
    on_row: Callable[[tuple[Any, ...]], None],
    on_columns: Callable[[tuple[str, ...]], None] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Feed rows to `on_row` until the result or a cap ends; (columns, truncated)."""
    used_bytes = 0
    count = 0
    with _readonly_transaction(db, limits.timeout_s) as conn:
        result = conn.execution_options(stream_results=True, max_row_buffer=FETCH_BATCH).exec_driver_sql(
            sql.replace("%", "%%") if db.backend in ("postgresql", "mysql", "mariadb") else sql
        )
        columns = tuple(result.keys())
        if on_columns is not None:
            on_columns(columns)
        try:
            while True:
                batch = result.fetchmany(FETCH_BATCH)
                if not batch:
                    return columns, False
                for row in batch:
                    if count >= limits.row_cap:
                        return columns, True
                    used_bytes += sum(len(str(v)) + 1 for v in row)
                    if used_bytes > limits.byte_cap and count > 0:
                        return columns, True
                    on_row(tuple(row))
                    count += 1
        finally:
            result.close()


def execute(db: Database, sql: str, limits: Limits = Limits()) -> ResultSet:
    start = time.perf_counter()
    rows: list[tuple[Any, ...]] = []
    try:
        columns, truncated = _stream(db, sql, limits, rows.append)
    except sa.exc.DBAPIError as exc:
        raise _classify(exc) from exc
    except sqlite3.Error as exc:
        raise _classify(exc) from exc
    return ResultSet(columns, rows, truncated, round((time.perf_counter() - start) * 1000, 3))


def export_csv(db: Database, sql: str, path: Path, limits: Limits) -> tuple[int, bool]:
    """Stream a (possibly larger) result straight to a CSV file; (rows written, truncated)."""
    count = 0
    with path.open("w", newline="") as f:
        writer = csv.writer(f)

        def write(row: tuple[Any, ...]) -> None:
            nonlocal count
            writer.writerow(row)
            count += 1

        try:
            _, truncated = _stream(db, sql, limits, write, on_columns=writer.writerow)
        except sa.exc.DBAPIError as exc:
            raise _classify(exc) from exc
        except sqlite3.Error as exc:
            raise _classify(exc) from exc
    return count, truncated
