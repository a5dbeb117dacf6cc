"""Every value bounded: no cell of a result may be larger than `cell_cap`, whatever the SQL computes.

Why here and not only by counting bytes of fetched rows: a driver hands over a row only once it
holds all of it, so one cell of 900 MB (`printf('%.*c', 900000000, 'x')`, `repeat('x', 5e8)`)
used to arrive whole before any cap could look at it. Each database is bounded where it can be:

- SQLite runs inside this process: `SQLITE_LIMIT_LENGTH` (set by core/execute.py for each query)
  makes SQLite itself refuse to build any string or blob longer than the result's byte cap, in
  the result or on the way (a huge intermediate in `length(printf(...))` too): its printf gives
  NULL, concatenation and group_concat fail the query, with `too_big_message` for the person —
  SQLite cannot hand over a part of a value it was not allowed to build.
- PostgreSQL computes the value on the server; `postgres_bounded` wraps the query so the server
  sends at most `cell_cap` characters of any variable-length value (text, bytea, json, arrays,
  rows ...) and the size of what it held back. Columns keep their types and positions: the value
  column is NULL when cut and a preview column, appended at the end, carries `size:prefix`.
- MySQL/MariaDB build no string longer than the server's `max_allowed_packet` (16 MB by default
  in MariaDB, 64 MB in MySQL 8; `REPEAT('x', 900000000)` is NULL); rows are streamed one at a
  time, so what arrives is at most that per value.

Whatever arrives longer than `cell_cap` is cut here (`cut_value`), with a visible marker that
says how large the value was; binary data is replaced by the marker. Fetch sizes follow from the
caps (`fetch_rows`), so a batch of rows is bounded too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

FETCH_MEMORY = 64_000_000  # bytes one fetched batch of rows may hold at most
MAX_FETCH_ROWS = 500
FIXED_WIDTH = 64  # bytes a value of a fixed-size type takes at most, about

# PostgreSQL type oids whose values are small and fixed in size: sent as they are.
_PG_FIXED = frozenset(
    {
        16,  # bool
        18,  # char
        20,  # int8
        21,  # int2
        23,  # int4
        26,  # oid
        700,  # float4
        701,  # float8
        790,  # money
        1082,  # date
        1083,  # time
        1114,  # timestamp
        1184,  # timestamptz
        1186,  # interval
        1266,  # timetz
        1700,  # numeric (at most 131,072 + 16,383 digits)
        2950,  # uuid
        869,  # inet
        650,  # cidr
        829,  # macaddr
        774,  # macaddr8
        600,  # point
    }
)
_PG_BYTEA = 17
_PG_TEXT = frozenset({25, 1043, 1042, 19, _PG_BYTEA})  # text, varchar, bpchar, name, bytea: octet_length


def marker(size: int | None, cap: int) -> str:
    """What follows the first `cap` characters of a value that was cut."""
    held = f"{size:,} bytes" if size is not None else "more"
    return f" … [cut: the value holds {held}; a cell shows at most {cap:,}]"


def binary_marker(size: int, cap: int) -> str:
    """What stands in for binary data that was too large (a part of it shows nothing useful)."""
    return f"[binary data of {size:,} bytes; a cell shows at most {cap:,}]"


def cut_value(value: Any, cap: int) -> tuple[Any, bool]:
    """`value`, or its first `cap` characters and a marker when it is longer; (value, was it cut)."""
    if isinstance(value, str):
        if len(value) <= cap:
            return value, False
        return value[:cap] + marker(len(value.encode("utf-8", "replace")), cap), True
    if isinstance(value, bytes | bytearray | memoryview):
        size = len(value)
        return (value, False) if size <= cap else (binary_marker(size, cap), True)
    return value, False


def value_size(value: Any) -> int:
    """Bytes a fetched value takes, roughly, without building its text (a float's repr is small)."""
    if isinstance(value, str | bytes | bytearray | memoryview):
        return len(value)
    if value is None or isinstance(value, bool | int | float):
        return 8
    return len(str(value))


def fetch_rows(widths: Sequence[int]) -> int:
    """Rows per fetch so that one batch stays under FETCH_MEMORY even if every cell is full."""
    row = max(1, sum(widths))
    return max(1, min(MAX_FETCH_ROWS, FETCH_MEMORY // row))


# ------------------------------------------------------------------ SQLite


def too_big_message(limit: int) -> str:
    return (
        f"A value in this result (or one computed on the way) is larger than {limit:,} bytes, the most "
        "a result may hold. Ask for a part of it (for example its first 200 characters) or for its "
        "length instead."
    )


# ------------------------------------------------------------------ PostgreSQL


def postgres_widths(types: Sequence[int], cap: int) -> list[int]:
    """What each column of a bounded PostgreSQL row can hold at most (the preview included)."""
    return [FIXED_WIDTH if t in _PG_FIXED else 4 * cap + FIXED_WIDTH for t in types]


def postgres_bounded(sql: str, types: Sequence[int], cap: int) -> tuple[str, int]:
    """`sql` wrapped so no variable-length value over `cap` bytes leaves the server.

    Returns (the wrapped SQL, how many preview columns follow the original ones). Column k of the
    query is `c{k}` (a column list renames them, so duplicate or odd names are fine). `OFFSET 0`
    keeps PostgreSQL from pulling the query up into the wrapper, so each value is computed once
    however often the wrapper reads it; a plain projection over it keeps the query's row order.
    """
    values, previews = [], []
    for k, oid in enumerate(types, start=1):
        column = f"q.c{k}"
        if oid in _PG_FIXED:
            values.append(column)
            continue
        size = f"octet_length({column})" if oid in _PG_TEXT else f"octet_length(({column})::text)"
        values.append(f"CASE WHEN {size} > {cap} THEN NULL ELSE {column} END")
        prefix = "''" if oid == _PG_BYTEA else f"left(({column})::text, {cap})"
        previews.append(f"CASE WHEN {size} > {cap} THEN {size}::text || ':' || {prefix} END")
    names = ", ".join(f"c{k}" for k in range(1, len(types) + 1))
    inner = f"SELECT * FROM ({sql}) AS askbase_query OFFSET 0"
    return f"SELECT {', '.join(values + previews)} FROM ({inner}) AS q({names})", len(previews)


def postgres_row(row: Sequence[Any], types: Sequence[int], cap: int) -> tuple[tuple[Any, ...], int]:
    """A bounded row back in the query's shape: cut values get their preview and a marker."""
    width = len(types)
    values = list(row[:width])
    previews = iter(row[width:])
    cut = 0
    for k, oid in enumerate(types):
        if oid in _PG_FIXED:
            continue
        preview = next(previews)
        if preview is not None:
            size, _, prefix = str(preview).partition(":")
            values[k] = binary_marker(int(size), cap) if oid == _PG_BYTEA else prefix + marker(int(size), cap)
            cut += 1
    return tuple(values), cut
