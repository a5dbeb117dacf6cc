"""Execute stage: run guarded SQL in a read-only transaction with a timeout, a row cap and byte caps.

Defence in depth under the guard: the session is already read-only (core/connect.py); here every
query also runs inside a read-only transaction that is always rolled back, with a statement
timeout enforced by the server (PostgreSQL `statement_timeout`, MariaDB `max_statement_time`,
MySQL `max_execution_time`) or by SQLite's progress handler. Rows are streamed and cut at the caps
so a huge result never sits whole in memory: every value is bounded while it is fetched, by the
database where it can (core/bounds.py: SQLite's length limit, a PostgreSQL wrapper that sends at
most `cell_cap` of any value, MySQL's max_allowed_packet), then cut here with a visible marker;
the result stops at `row_cap` rows and `byte_cap` bytes.

What the database itself refuses, whatever SQL reaches this module (docs/security.md):
- PostgreSQL runs the query through a server-side cursor (`DECLARE ... CURSOR FOR`), which accepts
  one SELECT/VALUES only: no second statement, no COPY, no data-modifying CTE, no SET.
- SQLite runs it under an authorizer that allows reading and functions only (no ATTACH, PRAGMA,
  VACUUM INTO, temp tables), and refuses the database's denied tables and columns.
- MySQL/MariaDB send one statement (no multi-statement flag); the session is set read-only again
  after every query, in case the query changed it.
- DuckDB (a file or a files:// folder) runs only what its own parser reads as one SELECT, on a
  connection with file access off and its configuration locked, interrupted by a timer at the
  timeout (core/warehouse/duckdb.py).
- Warehouses (Snowflake, BigQuery, Databricks, Trino, Redshift) are sent only what sqlglot reads
  as one query in their dialect, after the statements of core/warehouse/sessions.py: the timeout
  and who the query runs for (core/attribution.py); BigQuery prices the query with a dry run
  first and refuses it over `warehouse.max_bytes_billed` (core/warehouse/bigquery.py).
- File functions (pg_read_file, COPY TO PROGRAM, LOAD_FILE, INTO OUTFILE) are refused only by a
  least-privileged database account; `privilege_problems` warns once per database when the
  configured account is more than that.

Every result passes through here, so masked columns are masked here (core/masking.py), and a
connection dropped mid-query (a failover, a killed backend) is retried once on a fresh one.
"""

from __future__ import annotations

import csv
import logging
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar, cast

import sqlalchemy as sa

if TYPE_CHECKING:
    import psycopg
    from sqlalchemy.dialects.mysql.base import MySQLDialect

from core import attribution, bounds, identity
from core.access import DataRules, privilege_problems
from core.data_rules import mask_plan
from core.database import Database
from core.db_errors import driver_text, public_text
from core.masking import MaskPlan, mask_row, scrub_error
from core.warehouse import DUCKDB_BACKENDS, bigquery
from core.warehouse.duckdb import interrupt_after, one_select
from core.warehouse.sessions import SESSION_BACKENDS, before_query, only_a_query, tag_connection

log = logging.getLogger(__name__)

ErrorKind = Literal["timeout", "syntax", "readonly", "connection", "permission", "too_large", "other"]


@dataclass(frozen=True)
class Limits:
    row_cap: int = 5000
    byte_cap: int = 20_000_000  # bytes of one result; also the largest value SQLite may build
    timeout_s: float = 30.0
    cell_cap: int = 262_144  # bytes of one value shown; a longer one is cut with a marker

    @property
    def value_limit(self) -> int:
        """The largest value the database may build at all (SQLite refuses larger ones)."""
        return max(self.byte_cap, self.cell_cap, 1_000_000)


@dataclass(frozen=True)
class ResultSet:
    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]
    truncated: bool = False  # more rows existed than the caps allowed
    ms: float = 0.0
    masked: tuple[str, ...] = ()  # columns shown masked (the database's mask_columns)
    cut_cells: int = 0  # values longer than the cell cap, shown cut with a marker

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
    """A database error with its kind; `message` is the database's text without hosts, ports or
    accounts (core/db_errors.py), safe to show a person and the LLM. The log has the full text."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


# What databases say when a value outgrows what they (or we) allow.
_TOO_LARGE = (
    "string or blob too big",
    "requested length too large",
    "invalid memory alloc request size",
    "out of memory",
)


def _classify(exc: BaseException, limits: Limits) -> QueryError:
    text = public_text(driver_text(exc))
    low = text.lower()
    if isinstance(exc, sa.exc.DBAPIError) and exc.connection_invalidated:
        return QueryError("connection", text)
    if any(k in low for k in _TOO_LARGE):
        return QueryError("too_large", bounds.too_big_message(limits.value_limit))
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
    if any(
        k in low
        for k in (
            "permission denied",
            "access denied",
            "command denied",
            "not authorized",
            "authorization denied",
            "prohibited",
        )
    ):
        return QueryError("permission", text)
    if isinstance(exc, sa.exc.OperationalError) and any(
        k in low for k in ("connection", "server closed", "lost connection", "gone away", "could not connect")
    ):
        return QueryError("connection", text)
    return QueryError("syntax" if "syntax" in low else "other", text)


# SQLite authorizer actions a query needs; everything else (writes, ATTACH, PRAGMA, transactions,
# temp objects, VACUUM INTO) is refused by SQLite itself before the statement runs.
SQLITE_ALLOWED = frozenset(
    {sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_FUNCTION, sqlite3.SQLITE_RECURSIVE}
)


def _sqlite_authorizer(
    rules: DataRules,
) -> Callable[[int, str | None, str | None, str | None, str | None], int]:
    def authorize(
        action: int, arg1: str | None, arg2: str | None, db: str | None, _trigger: str | None
    ) -> int:
        if action not in SQLITE_ALLOWED:
            return sqlite3.SQLITE_DENY
        denied = arg1 is not None and (
            rules.table_denied(arg1) or bool(arg2 and rules.column_denied(arg1, arg2))
        )
        if action == sqlite3.SQLITE_READ and denied:
            return sqlite3.SQLITE_DENY
        if action == sqlite3.SQLITE_FUNCTION and (arg2 or "").lower() == "load_extension":
            return sqlite3.SQLITE_DENY
        return sqlite3.SQLITE_OK

    return authorize


@contextmanager
def _readonly_transaction(db: Database, limits: Limits) -> Iterator[sa.Connection]:
    backend = db.backend
    timeout_s = limits.timeout_s
    with db.engine.connect() as conn, ExitStack() as stack:
        deadline = time.monotonic() + timeout_s
        raw = conn.connection.dbapi_connection
        mysql = backend in ("mysql", "mariadb")
        sqlite_length = None
        try:
            if backend == "sqlite":
                assert isinstance(raw, sqlite3.Connection)
                raw.set_progress_handler(lambda: 1 if time.monotonic() > deadline else 0, 10_000)
                raw.set_authorizer(_sqlite_authorizer(DataRules.of(db.config)))
                # SQLite builds no string or blob past this (core/bounds.py)
                sqlite_length = raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, limits.value_limit)
            elif backend == "postgresql":
                conn.exec_driver_sql("SET TRANSACTION READ ONLY")
                conn.exec_driver_sql(f"SET LOCAL statement_timeout = {max(1, int(timeout_s * 1000))}")
                identity.apply_postgres(conn)  # the asker's role and settings, for row-level security
            elif mysql:
                if cast("MySQLDialect", conn.dialect).is_mariadb:
                    conn.exec_driver_sql(f"SET SESSION max_statement_time = {max(0.001, timeout_s):.3f}")
                else:
                    conn.exec_driver_sql(f"SET SESSION max_execution_time = {max(1, int(timeout_s * 1000))}")
                conn.exec_driver_sql("START TRANSACTION READ ONLY")
            elif backend in DUCKDB_BACKENDS:  # no server-side timeout: a timer interrupts the query
                stack.enter_context(interrupt_after(raw, timeout_s))
            elif backend in SESSION_BACKENDS:  # the query's timeout and who it runs for
                who = _attribution(db)
                tag_connection(backend, raw, who)
                for statement in before_query(backend, timeout_s, who, db.name):
                    conn.exec_driver_sql(statement)
            yield conn
        finally:
            if backend == "sqlite" and isinstance(raw, sqlite3.Connection):
                raw.set_authorizer(None)
                raw.set_progress_handler(None, 0)
                if sqlite_length is not None:
                    raw.setlimit(sqlite3.SQLITE_LIMIT_LENGTH, sqlite_length)
            try:
                conn.rollback()
                if mysql and not conn.invalidated:
                    # SET SESSION survives a rollback in MySQL: undo whatever the query may have set
                    conn.exec_driver_sql("SET SESSION TRANSACTION READ ONLY")
            except sa.exc.DBAPIError:
                conn.invalidate()  # never hand a connection in an unknown state back to the pool


def _stream(
    db: Database,
    sql: str,
    limits: Limits,
    on_row: Callable[[tuple[Any, ...]], None],
    on_columns: Callable[[tuple[str, ...]], None] | None = None,
) -> tuple[tuple[str, ...], bool, int]:
    """Feed rows to `on_row` until the result or a cap ends; (columns, truncated, cells cut)."""
    used_bytes = 0
    count = 0
    cut = 0
    with _readonly_transaction(db, limits) as conn:
        types: list[int] | None = None
        names: tuple[str, ...] = ()
        run_sql, batch = sql, 1
        if db.backend in DUCKDB_BACKENDS:
            refused = one_select(conn.connection.dbapi_connection, sql)
            if refused is not None:
                raise QueryError("readonly", f"DuckDB refused it: {refused}")
        if db.backend in SESSION_BACKENDS or db.backend == "bigquery":
            refused = only_a_query(sql, db.catalog.dialect)
            if refused is not None:
                raise QueryError("readonly", f"Askbase refused it: {refused}")
        if db.backend == "bigquery":
            return _stream_bigquery(db, conn, sql, limits, on_row, on_columns)
        if db.backend == "postgresql":
            described = _describe_postgres(conn, sql)
            if described:
                names, types = tuple(n for n, _ in described), [t for _, t in described]
                run_sql, _ = bounds.postgres_bounded(sql, types, limits.cell_cap)
                batch = bounds.fetch_rows(bounds.postgres_widths(types, limits.cell_cap))
        result = conn.execution_options(stream_results=True, max_row_buffer=batch).exec_driver_sql(
            run_sql.replace("%", "%%") if conn.dialect.paramstyle in ("format", "pyformat") else run_sql
        )
        if not result.returns_rows:
            result.close()
            raise QueryError("other", "only a query that returns rows can run")
        columns = names if types is not None else tuple(result.keys())
        if types is None:  # every value may be as large as the database allows: a row at a time
            batch = bounds.fetch_rows([limits.value_limit] * max(1, len(columns)))
        if on_columns is not None:
            on_columns(columns)
        try:
            while True:
                fetched = result.fetchmany(batch)
                if not fetched:
                    return columns, False, cut
                for raw_row in fetched:
                    if count >= limits.row_cap:
                        return columns, True, cut
                    row, row_cut = _bounded(raw_row, types, limits.cell_cap)
                    cut += row_cut
                    used_bytes += sum(bounds.value_size(v) + 1 for v in row)
                    if used_bytes > limits.byte_cap and count > 0:
                        return columns, True, cut
                    on_row(row)
                    count += 1
        finally:
            result.close()


def _attribution(db: Database) -> attribution.Attribution:
    """Who the statement runs for, unless the database's settings say to name nobody."""
    return attribution.current() if db.config.warehouse.query_tag else attribution.Attribution("", "", "")


def _stream_bigquery(
    db: Database,
    conn: sa.Connection,
    sql: str,
    limits: Limits,
    on_row: Callable[[tuple[Any, ...]], None],
    on_columns: Callable[[tuple[str, ...]], None] | None,
) -> tuple[tuple[str, ...], bool, int]:
    """BigQuery: a dry run first (refused over the cap, saying the estimate), then one job with
    `maximum_bytes_billed`, labels and a timeout (core/warehouse/bigquery.py)."""
    cap = db.config.warehouse.max_bytes_billed
    try:
        columns, rows = bigquery.run(
            conn.connection.dbapi_connection,
            sql,
            cap=cap,
            timeout_s=limits.timeout_s,
            labels=_attribution(db).labels(),
            page_size=bounds.fetch_rows([limits.value_limit]),
            default_dataset=bigquery.default_dataset(conn.dialect),
        )
    except bigquery.OverCap as over:
        raise QueryError("too_large", over.message) from None
    if on_columns is not None:
        on_columns(columns)
    used_bytes = cut = 0
    for count, raw_row in enumerate(rows):
        if count >= limits.row_cap:
            return columns, True, cut
        row, row_cut = _bounded(raw_row, None, limits.cell_cap)
        cut += row_cut
        used_bytes += sum(bounds.value_size(v) + 1 for v in row)
        if used_bytes > limits.byte_cap and count > 0:
            return columns, True, cut
        on_row(row)
    return columns, False, cut


def _describe_postgres(conn: sa.Connection, sql: str) -> list[tuple[str, int]]:
    """The query's column names and type oids, from a cursor that is declared but never fetched.

    DECLARE plans the query without running it (PostgreSQL describes the portal), so a query that
    is not a single SELECT fails here exactly as it would when run.
    """
    # PostgreSQL is reached through psycopg (`postgresql+psycopg://…` URLs, see README)
    raw = cast("psycopg.Connection[Any]", conn.connection.dbapi_connection)
    driver = conn.dialect.loaded_dbapi
    cursor = raw.cursor(name="askbase_describe")
    try:
        cursor.execute(sql)
        return [(d.name, d.type_code) for d in cursor.description or []]
    except driver.Error as exc:
        # as SQLAlchemy would have raised it, so the error is classified and retried the same way
        raise sa.exc.DBAPIError.instance(sql, None, exc, driver.Error) from exc
    finally:
        cursor.close()


def _bounded(row: Sequence[Any], types: list[int] | None, cap: int) -> tuple[tuple[Any, ...], int]:
    """The row with every value at most `cap` long (PostgreSQL's cut on the server, others here)."""
    if types is not None:
        return bounds.postgres_row(row, types, cap)
    values, cut = [], 0
    for value in row:
        value, was_cut = bounds.cut_value(value, cap)
        values.append(value)
        cut += was_cut
    return tuple(values), cut


T = TypeVar("T")


def _run(db: Database, sql: str, limits: Limits, attempt: Callable[[], T]) -> T:
    """Run `attempt`; once more on a fresh connection if the first one dropped; errors classified.

    Only a dropped connection is retried: the query is read-only, so running it again is safe, and
    a timeout or an error in the SQL would only happen again.
    """
    for round_no in (1, 2):
        try:
            result = attempt()
            _check_account_once(db)  # after a success: a database that is down costs no extra wait
            return result
        except (sa.exc.DBAPIError, sqlite3.Error) as exc:
            error = _classify(exc, limits)
            if error.kind == "connection" and round_no == 1:
                log.warning(
                    "database %s: connection lost mid-query (%s); retrying once", db.name, driver_text(exc)
                )
                continue
            level = logging.INFO if error.kind in ("syntax", "other", "too_large") else logging.WARNING
            log.log(level, "database %s: the query failed (%s): %s", db.name, error.kind, driver_text(exc))
            raise _scrubbed(db, error, sql) from exc
        except QueryError as error:
            raise _scrubbed(db, error, sql) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _scrubbed(db: Database, error: QueryError, sql: str) -> QueryError:
    """Where columns are denied or masked, an error message must not carry data values."""
    if DataRules.of(db.config).any:
        return QueryError(error.kind, scrub_error(error.message, sql))
    return error


def _check_account_once(db: Database) -> None:
    """Warn once per database when its account may do more than read (see core/access.py)."""
    if db.backend not in ("postgresql", "mysql", "mariadb") or db.__dict__.get("_account_checked"):
        return
    db.__dict__["_account_checked"] = True
    for problem in privilege_problems(db.engine):
        log.warning("database %s: %s; give Askbase a read-only account (docs/security.md)", db.name, problem)


class _Masker:
    """Masks the result's masked columns row by row (the plan is made before the query runs)."""

    def __init__(self, plan: MaskPlan) -> None:
        self.plan = plan
        self.masks: tuple[bool, ...] = ()
        self.names: tuple[str, ...] = ()

    def columns(self, columns: tuple[str, ...]) -> None:
        self.masks = self.plan.for_result(len(columns))
        self.names = tuple(c for c, m in zip(columns, self.masks, strict=True) if m)
        if self.plan.everything:
            log.info("masking every column: %s", self.plan.reason)

    def row(self, row: tuple[Any, ...]) -> tuple[Any, ...]:
        return mask_row(row, self.masks) if self.names else row


def execute(db: Database, sql: str, limits: Limits = Limits()) -> ResultSet:
    start = time.perf_counter()
    masker = _Masker(mask_plan(db, sql))

    def attempt() -> tuple[tuple[str, ...], list[tuple[Any, ...]], bool, int]:
        rows: list[tuple[Any, ...]] = []
        streamed = _stream(db, sql, limits, lambda r: rows.append(masker.row(r)), masker.columns)
        return streamed[0], rows, streamed[1], streamed[2]

    columns, rows, truncated, cut = _run(db, sql, limits, attempt)
    ms = round((time.perf_counter() - start) * 1000, 3)
    return ResultSet(columns, rows, truncated, ms, masked=masker.names, cut_cells=cut)


def export_csv(db: Database, sql: str, path: Path, limits: Limits) -> tuple[int, bool]:
    """Stream a (possibly larger) result straight to a CSV file; (rows written, truncated)."""
    masker = _Masker(mask_plan(db, sql))

    def attempt() -> tuple[int, bool]:
        count = 0
        with path.open("w", newline="") as f:  # a retry starts the file again
            writer = csv.writer(f)

            def write(row: tuple[Any, ...]) -> None:
                nonlocal count
                writer.writerow(masker.row(row))
                count += 1

            def header(columns: tuple[str, ...]) -> None:
                masker.columns(columns)
                writer.writerow(columns)

            _, truncated, _ = _stream(db, sql, limits, write, on_columns=header)
        return count, truncated

    return _run(db, sql, limits, attempt)
