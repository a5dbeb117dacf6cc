"""Read-only SQLAlchemy engines for the databases people ask about.

Read-only is enforced by the database session itself, not by the SQL we send:
SQLite opens the file with `mode=ro` and `PRAGMA query_only`; PostgreSQL sessions start with
`default_transaction_read_only`; MySQL/MariaDB sessions are `TRANSACTION READ ONLY`; DuckDB
files open `read_only` with file access off and a locked configuration, and `files:///dir`
reads exactly its own files (core/warehouse/duckdb.py); warehouses get their connect arguments
from core/warehouse/sessions.py (there, the account's grants are what makes it read-only). The
executor adds a read-only transaction and a statement timeout per query on top (see
core/execute.py).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.extras import require_driver
from core.settings import WarehouseSettings
from core.warehouse import EXTRAS
from core.warehouse.duckdb import duckdb_engine, files_engine
from core.warehouse.sessions import warehouse_engine

POOL_SIZE = 5
MAX_OVERFLOW = 5


def redact(url: str | sa.URL) -> str:
    """A URL safe to print: the password is never shown."""
    try:
        return make_url(str(url)).render_as_string(hide_password=True)
    except Exception:  # not a URL at all: show nothing of it
        return "<database url>"


def readonly_engine(url: str, settings: WarehouseSettings | None = None) -> sa.Engine:
    parsed = make_url(url)
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(parsed)
    if backend == "postgresql":
        if parsed.drivername == "postgresql":
            parsed = parsed.set(drivername="postgresql+psycopg")
        require_driver(parsed.drivername)  # psycopg is the `postgres` extra
        return sa.create_engine(
            parsed,
            pool_size=POOL_SIZE,
            max_overflow=MAX_OVERFLOW,
            pool_pre_ping=True,
            pool_recycle=1800,
            connect_args={"options": "-c default_transaction_read_only=on", "connect_timeout": 10},
        )
    if backend in ("mysql", "mariadb"):
        if parsed.drivername in ("mysql", "mariadb"):
            parsed = parsed.set(drivername=f"{backend}+pymysql")
        require_driver(parsed.drivername)  # pymysql is the `mysql` extra
        engine = sa.create_engine(
            parsed,
            pool_size=POOL_SIZE,
            max_overflow=MAX_OVERFLOW,
            pool_pre_ping=True,
            pool_recycle=1800,
            connect_args={"connect_timeout": 10},
        )

        @sa.event.listens_for(engine, "connect")
        def _readonly_session(dbapi_conn: Any, _record: object) -> None:  # pymysql's connection
            with dbapi_conn.cursor() as cur:
                cur.execute("SET SESSION TRANSACTION READ ONLY")

        return engine
    if backend == "duckdb":
        return duckdb_engine(parsed)
    if backend == "files":
        return files_engine(url)
    if backend in EXTRAS:
        return warehouse_engine(parsed, settings or WarehouseSettings())
    # Other dialects: the guard still applies; grant the configured user read-only rights.
    return sa.create_engine(parsed, pool_size=POOL_SIZE, max_overflow=MAX_OVERFLOW, pool_pre_ping=True)


def _sqlite_engine(url: sa.URL) -> sa.Engine:
    path = url.database
    if not path or path == ":memory:":
        raise ValueError("an in-memory SQLite database has nothing to ask about; give a file path")
    file = Path(path).expanduser().resolve()
    if not file.is_file():
        raise FileNotFoundError(f"SQLite file not found: {file}")

    def connect() -> sqlite3.Connection:
        conn = sqlite3.connect(f"{file.as_uri()}?mode=ro", uri=True, check_same_thread=False, timeout=10)
        conn.execute("PRAGMA query_only = ON")
        return conn

    # QueuePool explicitly: with an empty URL SQLAlchemy would pick the single-thread pool.
    return sa.create_engine(
        "sqlite+pysqlite://",
        creator=connect,
        poolclass=sa.pool.QueuePool,
        pool_size=POOL_SIZE,
        max_overflow=MAX_OVERFLOW,
    )
