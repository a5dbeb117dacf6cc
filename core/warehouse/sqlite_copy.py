"""A copy of a SQLite file's tables in any database SQLAlchemy writes to: PostgreSQL, MariaDB, Snowflake.

The server counterpart of core/warehouse/duckdb.py `copy_sqlite` (which writes a DuckDB file
through DuckDB's own API): the same tables, rows and keys, in the engine's own types. The engine
tests run the demo on each server this way (tests/servers.py), and tests whose own SQLite data
must be on a server too.

Decisions:
- A column gets the type DuckDB's copy would give it (`duckdb_type`: the declared type where every
  value fits it, else text), written in the engine's dialect: INTEGER (BIGINT when a value needs
  it), DOUBLE, BOOLEAN, DATE, TIMESTAMP, binary, text. On MySQL/MariaDB text is VARCHAR as long as
  the longest value needs (a TEXT column can be no key there); a DATE or DATETIME column whose
  values do not all read as one is kept as text, as in DuckDB's copy.
- Primary keys, UNIQUE constraints and foreign keys are kept; a table whose data breaks one is
  created again with fewer (foreign keys first, then unique keys, then the primary key), as in
  DuckDB's copy.
- On engines that keep unquoted names in upper case (Snowflake), tables and columns are named in
  upper case, as a Snowflake schema created without quotes would be: no name reads differently
  for being a reserved word there.
- Tables are created in foreign-key order and filled in batches of `BATCH` rows; the caller owns
  the engine (and the database it points at).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable, Sequence
from datetime import date, datetime
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.warehouse.duckdb import duckdb_type, open_sqlite, quote, sqlite_tables

log = logging.getLogger(__name__)

BATCH = 2_000
# How rows reach a created table: (connection, table, rows in the table's column order).
Loader = Callable[[sa.Connection, sa.Table, list[tuple[Any, ...]]], None]
INT32 = 2**31 - 1
MYSQL_VARCHAR_MAX = 2_000  # longer text is TEXT on MySQL/MariaDB (and can then be no key)


def insert_rows(conn: sa.Connection, table: sa.Table, rows: list[tuple[Any, ...]]) -> None:
    """INSERT statements of `BATCH` rows each (the driver's executemany)."""
    names = [c.name for c in table.columns]
    for start in range(0, len(rows), BATCH):
        conn.execute(
            table.insert(), [dict(zip(names, row, strict=True)) for row in rows[start : start + BATCH]]
        )


def copy_sqlite_into(
    source: Path, engine: sa.Engine, schema: str | None = None, load: Loader = insert_rows
) -> list[str]:
    """Copy every table of the SQLite file `source` into `engine` (in `schema`); the tables' names.

    `load` puts a table's rows in (an engine with a faster way in than INSERT statements)."""
    src = open_sqlite(source)
    try:
        names = sqlite_tables(src)
        upper = bool(engine.dialect.requires_name_normalize)
        metadata = sa.MetaData(schema=schema)
        with engine.connect() as conn:
            for name in names:
                _copy_table(src, conn, metadata, name, names, upper, load)
        return names
    finally:
        src.close()


def _copy_table(
    src: sqlite3.Connection,
    conn: sa.Connection,
    metadata: sa.MetaData,
    name: str,
    names: list[str],
    upper: bool,
    load: Loader,
) -> None:
    def named(text: str) -> str:
        return text.upper() if upper else text

    info = list(src.execute(f"PRAGMA table_info({quote(name)})"))
    rows = src.execute(f"SELECT * FROM {quote(name)}").fetchall()
    columns: list[tuple[str, sa.types.TypeEngine[Any], bool]] = []
    converters = []
    for i, c in enumerate(info):
        values = [r[i] for r in rows]
        type_, convert = column_type(c[2] or "", values, conn.dialect.name)
        columns.append((named(c[1]), type_, bool(c[3])))
        converters.append(convert)
    data = [tuple(convert(v) for convert, v in zip(converters, row, strict=True)) for row in rows]
    pk, unique, foreign = _keys(src, name, info, names, named, metadata.schema)
    for attempt in ([*pk, *unique, *foreign], [*pk, *unique], pk, []):
        table = sa.Table(
            named(name),
            metadata,
            *(sa.Column(n, t, nullable=not notnull, autoincrement=False) for n, t, notnull in columns),
            *attempt,
        )
        try:
            with conn.begin():
                table.create(conn)
                load(conn, table, data)
            return
        except sa.exc.DBAPIError as exc:  # a key the data breaks
            log.info("copying %s: %s; trying with fewer keys", name, str(exc).splitlines()[0][:200])
            metadata.remove(table)
            with conn.begin():  # MySQL/MariaDB have committed the CREATE TABLE
                table.drop(conn, checkfirst=True)
    raise RuntimeError(f"could not copy table {name} into {conn.dialect.name}")


def _keys(
    src: sqlite3.Connection,
    name: str,
    info: list[Any],
    names: list[str],
    named: Any,
    schema: str | None,
) -> tuple[list[sa.Constraint], list[sa.Constraint], list[sa.Constraint]]:
    """The table's primary key (from its `PRAGMA table_info` rows), unique constraints and foreign
    keys (to tables that are copied too)."""
    pk_columns = [named(c[1]) for c in sorted(info, key=lambda c: c[5]) if c[5]]
    pk: list[sa.Constraint] = [sa.PrimaryKeyConstraint(*pk_columns)] if pk_columns else []
    unique: list[sa.Constraint] = []
    for index in src.execute(f"PRAGMA index_list({quote(name)})").fetchall():
        if index[3] == "u":  # a UNIQUE constraint (not an index created apart, not the primary key)
            cols = [named(r[2]) for r in src.execute(f"PRAGMA index_info({quote(index[1])})")]
            if cols and None not in cols:
                unique.append(sa.UniqueConstraint(*cols))
    fks: dict[int, list[tuple[str, str, str | None]]] = {}
    for fk in src.execute(f"PRAGMA foreign_key_list({quote(name)})"):
        fks.setdefault(fk[0], []).append((fk[3], fk[2], fk[4]))
    lower = {n.lower(): n for n in names}
    foreign: list[sa.Constraint] = []
    prefix = f"{schema}." if schema else ""
    for parts in fks.values():
        ref = lower.get(parts[0][1].lower())
        if ref is None or any(p[2] is None for p in parts):
            continue
        foreign.append(
            sa.ForeignKeyConstraint(
                [named(p[0]) for p in parts], [f"{prefix}{named(ref)}.{named(p[2])}" for p in parts]
            )
        )
    return pk, unique, foreign


def _same(value: Any) -> Any:
    return value


def _text(value: Any) -> Any:
    return value if value is None or isinstance(value, str) else str(value)


def _date(value: Any) -> Any:
    return None if value is None else date.fromisoformat(value)


def _datetime(value: Any) -> Any:
    return None if value is None else datetime.fromisoformat(value)


def _bool(value: Any) -> Any:
    return None if value is None else bool(value)


def _float(value: Any) -> Any:
    return None if value is None else float(value)


def _reads_as(parse: Any, values: Sequence[Any]) -> bool:
    try:
        for v in values:
            if v is not None:
                parse(v)
    except (TypeError, ValueError):
        return False
    return True


def column_type(declared: str, values: Sequence[Any], dialect: str) -> tuple[sa.types.TypeEngine[Any], Any]:
    """The SQLAlchemy type of a SQLite column in a copy on `dialect`, and how a value is converted."""
    kind = duckdb_type(declared, values)
    if kind == "BIGINT":
        small = "INT" in declared.upper() and all(v is None or -INT32 <= v <= INT32 for v in values)
        return (sa.Integer() if small else sa.BigInteger()), _same
    if kind == "DOUBLE":
        return sa.Double(), _float
    if kind == "BOOLEAN":
        return sa.Boolean(), _bool
    if kind == "BLOB":
        return sa.LargeBinary(), _same
    if kind == "DATE" and _reads_as(date.fromisoformat, values):
        return sa.Date(), _date
    if kind == "TIMESTAMP" and _reads_as(datetime.fromisoformat, values):
        return sa.DateTime(), _datetime
    if dialect in ("mysql", "mariadb"):
        longest = max((len(_text(v)) for v in values if v is not None), default=0)
        if longest <= MYSQL_VARCHAR_MAX:
            return sa.String(max(32, 1 << (longest - 1).bit_length())), _text
    return sa.Text(), _text
