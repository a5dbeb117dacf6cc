"""Opening the state database: one engine, its schema brought to head before first use.

The engine also carries what the database may keep of an answer (`state.preview_bytes`,
core/previews.py): every store that writes answer data reads it with `preview_bytes(engine)`, so no
caller can forget the bound or pass another one.
"""

from __future__ import annotations

import sqlite3
import weakref
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import make_url
from tenacity import retry, retry_if_exception, stop_after_delay, wait_random

from core.extras import require_driver
from core.previews import PREVIEW_BYTES
from core.state.migrate import upgrade

_preview_bytes: weakref.WeakKeyDictionary[sa.Engine, int] = weakref.WeakKeyDictionary()


def state_engine(url: str) -> sa.Engine:
    """Engine for the state database, schema untouched (SQLite in WAL mode, waiting on locks)."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        require_driver(parsed.drivername)  # a PostgreSQL or MySQL state database: its driver is an extra
        return sa.create_engine(url, pool_pre_ping=True)
    if parsed.database not in (None, "", ":memory:"):
        Path(parsed.database).parent.mkdir(parents=True, exist_ok=True)
    engine = sa.create_engine(url, connect_args={"timeout": 30})

    @sa.event.listens_for(engine, "connect")
    def _pragmas(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.execute("PRAGMA busy_timeout=30000")
        _into_wal(dbapi_conn)
        dbapi_conn.execute("PRAGMA foreign_keys=ON")

    return engine


def _locked(exc: BaseException) -> bool:
    return isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)


@retry(
    retry=retry_if_exception(_locked), stop=stop_after_delay(30), wait=wait_random(0.01, 0.1), reraise=True
)
def _into_wal(dbapi_conn: Any) -> None:
    """Switching a new database into WAL mode takes its exclusive lock, and SQLite may refuse that
    at once instead of waiting out busy_timeout (when waiting could deadlock with another
    connection's switch): processes starting together on a new state database then failed with
    "database is locked" (seen once under CI load). The switch is tried again for as long as the
    busy timeout would have waited."""
    dbapi_conn.execute("PRAGMA journal_mode=WAL")


def open_state(url: str, *, preview_bytes: int | None = None) -> sa.Engine:
    """The state database, created or upgraded to this release's schema first (core/state/migrate.py).

    Everything that opens the state goes through here, so `serve`, `worker`, the console and a
    one-off `ask` all find the schema they expect, whichever of them starts first.
    """
    engine = state_engine(url)
    upgrade(engine)
    if preview_bytes is not None:
        _preview_bytes[engine] = preview_bytes
    return engine


def preview_bytes(engine: sa.Engine) -> int:
    """Bytes of one answer's data a store of this state database keeps (more is kept as a preview)."""
    return _preview_bytes.get(engine, PREVIEW_BYTES)
