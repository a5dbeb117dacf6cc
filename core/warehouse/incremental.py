"""Refreshing a reflected warehouse catalog table by table: only what changed is read again.

Why: when a warehouse's schema signature moves (one table altered among 10,000), reading every
column, key, view and estimate again costs seconds to minutes and a scan of INFORMATION_SCHEMA
that some warehouses bill. So the reflection keeps, beside the catalog cache, what the engine
said per table (its columns, keys, view definition, row estimate) with a per-table fingerprint,
and a refresh:

1. reads every table's fingerprint in one query — DuckDB: a hash of the table's (or view's)
   CREATE statement; Snowflake and Databricks: INFORMATION_SCHEMA.TABLES.LAST_ALTERED (which
   also moves on loads, so a loaded table is read again: more than needed, never less); other
   engines, or when that query fails: a hash of the table's rows of INFORMATION_SCHEMA.COLUMNS;
2. reads columns, keys, views and estimates again only for tables whose fingerprint changed or
   that are new, drops the tables that are gone, and keeps the rest as they were;
3. assembles the catalog exactly as a full reflection would (core/warehouse/reflect.py
   `assemble`), so the two give equal catalogs (tests/unit/test_warehouse_incremental.py).

With no usable record (first run, other schemas, another version) or when more than
FULL_SHARE of the tables changed, it reads everything, as a full reflection does.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from collections import defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlalchemy as sa

from core.catalog import Catalog
from core.warehouse.reflect import (
    ColumnRow,
    Key,
    _in,
    assemble,
    read_columns,
    read_estimates,
    read_keys,
    read_views,
)

log = logging.getLogger(__name__)

RECORD_VERSION = 1
FULL_SHARE = 0.25  # above this share of tables changed, one full read is cheaper than IN lists
LAST_ALTERED = frozenset({"snowflake", "databricks"})

Where = tuple[str, str]  # (schema, table)


@dataclass(frozen=True)
class TableRecord:
    """What the engine said about one table or view, and the fingerprint it had then."""

    fingerprint: str
    table_type: str
    columns: tuple[tuple[str, str, bool], ...]  # name, type, nullable
    keys: tuple[Key, ...]
    definition: str | None  # a view's SELECT
    estimate: int | None


@dataclass(frozen=True)
class Reflection:
    """A reflection's result: the catalog, and what had to be read for it."""

    catalog: Catalog
    read: tuple[str, ...]  # "schema.table" read from the engine this time (every one when full)
    kept: int  # tables taken from the record unchanged
    removed: tuple[str, ...]  # tables in the record that are gone
    full: bool


def table_fingerprints(
    conn: sa.Connection, schemas: Sequence[str]
) -> tuple[dict[Where, str], list[ColumnRow] | None]:
    """Each table's and view's fingerprint, in one query (see the module's docstring); and the
    column rows when that query was INFORMATION_SCHEMA.COLUMNS itself (not read twice then)."""
    dialect = conn.dialect.name
    try:
        if dialect == "duckdb":
            wanted = _in(schemas)
            rows = conn.exec_driver_sql(
                "SELECT schema_name, table_name, sql FROM duckdb_tables() WHERE database_name = "
                f"current_database() AND schema_name IN ({wanted}) UNION ALL "
                "SELECT schema_name, view_name, sql FROM duckdb_views() WHERE NOT internal AND "
                f"database_name = current_database() AND schema_name IN ({wanted})"
            ).all()
            return {(str(r[0]), str(r[1])): _digest(r[2]) for r in rows}, None
        if dialect in LAST_ALTERED:
            wanted = _in(s.upper() if dialect == "snowflake" else s for s in schemas)
            rows = conn.exec_driver_sql(
                "SELECT table_schema, table_name, last_altered, table_type FROM information_schema.tables "
                f"WHERE table_schema IN ({wanted})"
            ).all()
            if rows and all(len(r) >= 4 and r[2] is not None for r in rows):
                return {(str(r[0]), str(r[1])): _digest(r[2], r[3]) for r in rows}, None
    except sa.exc.DBAPIError as exc:
        log.info("table fingerprints unavailable (%s); hashing columns", str(exc).splitlines()[0])
        conn.rollback()
    every = read_columns(conn, schemas)
    by_table: dict[Where, list[ColumnRow]] = defaultdict(list)
    for row in every:
        by_table[(row[0], row[1])].append(row)
    return {where: _digest(*rows) for where, rows in by_table.items()}, every


def _digest(*parts: Any) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]


def reflect_incrementally(
    engine: sa.Engine,
    database: str,
    schemas: Sequence[str],
    dialect: str,
    qualify: bool,
    record_file: Path,
) -> Reflection:
    """The catalog of `schemas`, reading again only the tables changed since `record_file`."""
    scope = {"schemas": list(schemas), "dialect": dialect, "qualify": qualify}
    with engine.connect() as conn:
        prints, every = table_fingerprints(conn, schemas)
        old = _load(record_file, scope)
        unchanged = {w: r for w, r in old.items() if prints.get(w) == r.fingerprint}
        stale = [w for w in prints if w not in unchanged]
        # a view whose engine lists its definition but no fingerprint (fakesnow): read every time
        stale += [w for w, r in old.items() if w not in prints and not r.fingerprint]
        full = not old or len(stale) > FULL_SHARE * max(len(prints), 1)
        fresh = _read(conn, schemas, None if full else stale, prints, every)
        conn.rollback()
    records = fresh if full else {**unchanged, **fresh}
    records = {w: records[w] for w in sorted(records) if w in prints or w in fresh}
    _save(record_file, scope, records)
    catalog = _assemble(records, database, dialect, qualify)
    removed = tuple(f"{s}.{t}" for s, t in sorted(set(old) - set(records)))
    read = tuple(f"{s}.{t}" for s, t in sorted(fresh))
    if not full:
        log.info(
            "%s: %d tables read again, %d kept, %d gone", database, len(read), len(unchanged), len(removed)
        )
    return Reflection(catalog, read, 0 if full else len(unchanged), removed, full)


def _read(
    conn: sa.Connection,
    schemas: Sequence[str],
    stale: Sequence[Where] | None,
    prints: dict[Where, str],
    every: list[ColumnRow] | None,
) -> dict[Where, TableRecord]:
    """Records of the `stale` tables (every table when None), read in bulk; `every`: the column
    rows already read for the fingerprints, if they were."""
    names: Collection[str] | None = None if stale is None else {t for _, t in stale}
    if names is not None and not names:
        return {}
    wanted = None if stale is None else set(stale)

    def mine(where: Where) -> bool:
        return wanted is None or where in wanted

    columns: dict[Where, list[tuple[str, str, bool]]] = defaultdict(list)
    types: dict[Where, str] = {}
    rows = every if every is not None else read_columns(conn, schemas, names)
    for schema, table, column, type_name, nullable, table_type in rows:
        if mine((schema, table)):
            columns[(schema, table)].append((column, type_name, nullable))
            types[(schema, table)] = table_type
    keys: dict[Where, list[Key]] = defaultdict(list)
    for key in read_keys(conn, schemas, names):
        if mine((key.schema, key.table)):
            keys[(key.schema, key.table)].append(key)
    definitions = {w: d for w, d in read_views(conn, schemas, names).items() if mine(w)}
    estimates = {w: n for w, n in read_estimates(conn, schemas, names).items() if mine(w)}
    found = set(columns) | set(definitions)
    return {
        w: TableRecord(
            fingerprint=prints.get(w, ""),
            table_type=types.get(w, "VIEW"),
            columns=tuple(columns.get(w, ())),
            keys=tuple(keys.get(w, ())),
            definition=definitions.get(w),
            estimate=estimates.get(w),
        )
        for w in found
    }


def _assemble(records: dict[Where, TableRecord], database: str, dialect: str, qualify: bool) -> Catalog:
    columns: list[ColumnRow] = [
        (s, t, c, type_name, nullable, r.table_type)
        for (s, t), r in records.items()
        for c, type_name, nullable in r.columns
    ]
    keys = [k for r in records.values() for k in r.keys]
    definitions = {w: r.definition for w, r in records.items() if r.definition is not None}
    estimates = {w: r.estimate for w, r in records.items() if r.estimate is not None}
    return assemble(columns, keys, definitions, estimates, database, dialect, qualify, False)


def _load(record_file: Path, scope: dict[str, Any]) -> dict[Where, TableRecord]:
    """The records of the last reflection, or none when missing, unreadable or for another scope."""
    try:
        data = json.loads(record_file.read_text())
        if data.get("version") != RECORD_VERSION or data.get("scope") != scope:
            return {}
        return {
            (t["schema"], t["table"]): TableRecord(
                fingerprint=t["fingerprint"],
                table_type=t["type"],
                columns=tuple((c[0], c[1], bool(c[2])) for c in t["columns"]),
                keys=tuple(Key(k[0], k[1], k[2], k[3], tuple(k[4]), k[5], tuple(k[6])) for k in t["keys"]),
                definition=t["definition"],
                estimate=t["estimate"],
            )
            for t in data["tables"]
        }
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
        log.warning("ignoring unreadable reflection record %s: %s", record_file, exc)
        return {}


def _save(record_file: Path, scope: dict[str, Any], records: dict[Where, TableRecord]) -> None:
    """Written under a name of our own, then renamed; a failure only costs the next refresh time."""
    tables = [
        {
            "schema": s,
            "table": t,
            "fingerprint": r.fingerprint,
            "type": r.table_type,
            "columns": r.columns,  # tuples are JSON arrays as they are: no copies of 200,000 columns
            "keys": [
                (k.schema, k.table, k.kind, k.name, k.columns, k.ref_table, k.ref_columns) for k in r.keys
            ],
            "definition": r.definition,
            "estimate": r.estimate,
        }
        for (s, t), r in records.items()
    ]
    tmp: Path | None = None
    try:
        record_file.parent.mkdir(parents=True, exist_ok=True)
        fd, name = tempfile.mkstemp(prefix=f".{record_file.name}.", suffix=".tmp", dir=record_file.parent)
        tmp = Path(name)
        with os.fdopen(fd, "w") as f:  # dumps, not dump: json.dump encodes in Python, 5x slower
            f.write(json.dumps({"version": RECORD_VERSION, "scope": scope, "tables": tables}))
        tmp.replace(record_file)
    except OSError as exc:
        log.warning("could not write reflection record %s: %s", record_file, exc)
        if tmp is not None:
            tmp.unlink(missing_ok=True)
