"""Rows of the state database read back the same way by every store in it.

Times are stored in UTC, but SQLite hands them back without a zone and PostgreSQL in the session's
zone; `stored_utc` makes every one an aware UTC datetime, so records compare and print the same on
every database. A record is read with one statement on one connection (`first_row`, `all_rows`)
and turned into its frozen dataclass by the store's own reader.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any, TypeVar

import sqlalchemy as sa

T = TypeVar("T")


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def stored_utc(value: dt.datetime | None) -> dt.datetime | None:
    """A stored time as an aware UTC datetime (None stays None)."""
    if value is None:
        return None
    return value.replace(tzinfo=dt.UTC) if value.tzinfo is None else value.astimezone(dt.UTC)


def new_id(inserted: sa.CursorResult[Any]) -> int:
    """The integer primary key an INSERT just made."""
    key = inserted.inserted_primary_key
    assert key is not None
    return int(key[0])


def first_row(engine: sa.Engine, statement: sa.Select[Any], read: Callable[[Any], T]) -> T | None:
    """The first row `statement` finds, read into its record; None when there is none."""
    with engine.connect() as conn:
        row = conn.execute(statement).first()
    return read(row) if row is not None else None


def all_rows(engine: sa.Engine, statement: sa.Select[Any], read: Callable[[Any], T]) -> list[T]:
    """Every row `statement` finds, read into records."""
    with engine.connect() as conn:
        rows = conn.execute(statement).all()
    return [read(r) for r in rows]
