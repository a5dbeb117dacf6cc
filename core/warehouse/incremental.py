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
import logging
from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa

from core.catalog import KEPT, Catalog, DatabaseView, Table, collection_paused, reflected_catalog
from core.warehouse.reflect import (
    ColumnRow,
    Key,
    _in,
    assemble,
    finish,
    read_columns,
    read_estimates,
    read_keys,
    read_views,
)

log = logging.getLogger(__name__)

RECORD_VERSION = 2  # 2: kept in the catalog cache beside the catalog, not per-table rows apart
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
class Prior:
    """What the last reflection left: each table's fingerprint and keys, and its tables and views
    as reflected (before any overlay), kept as they are — the same objects — when unchanged."""

    scope: dict[str, Any]
    prints: dict[Where, str]
    keys: dict[Where, tuple[Key, ...]]
    tables: dict[Where, Table]
    views: dict[Where, DatabaseView]


NO_PRIOR = Prior({}, {}, {}, {}, {})


@dataclass(frozen=True)
class Reflection:
    """A reflection's result: the catalog, and what had to be read for it."""

    catalog: Catalog
    read: tuple[str, ...]  # "schema.table" read from the engine this time (every one when full)
    kept: int  # tables taken from the record unchanged
    removed: tuple[str, ...]  # tables in the record that are gone
    full: bool
    prior: Prior = NO_PRIOR  # what the next refresh in this process starts from
    record: dict[str, Any] = field(default_factory=dict)  # what the catalog cache keeps for the next


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
    stale: Mapping[str, Any] | None,
    previous: Prior | None = None,
) -> Reflection:
    """The catalog of `schemas`, reading again only the tables changed since the last reflection:
    `previous` (this process's last one) or else the catalog cache that no longer matches,
    `stale` (another process's, with its record: core/catalog.py load_catalog)."""
    scope = {"schemas": list(schemas), "dialect": dialect, "qualify": qualify}
    with engine.connect() as conn:
        prints, every = table_fingerprints(conn, schemas)
        old = previous if previous is not None and previous.scope == scope else _load(stale, scope)
        unchanged = {w for w, fp in old.prints.items() if prints.get(w) == fp}
        changed = [w for w in prints if w not in unchanged]
        # a view whose engine lists its definition but no fingerprint (fakesnow): read every time
        changed += [w for w, fp in old.prints.items() if w not in prints and not fp]
        full = not old.prints or len(changed) > FULL_SHARE * max(len(prints), 1)
        fresh = _read(conn, schemas, None if full else changed, prints, every)
        prior = None if full else _merge(old, unchanged, fresh, scope, dialect, qualify)
        if prior is None and not full:  # a name now in two schemas: as a full reflection decides
            full, fresh = True, _read(conn, schemas, None, prints, every)
        conn.rollback()
    if prior is None:
        with collection_paused():  # as in a full reflection (reflect.py)
            prior = _fresh_prior(fresh, scope, dialect, qualify)
    catalog = finish(
        database,
        dialect,
        list(prior.tables.values()),
        _view_order(prior),
        (k for ks in prior.keys.values() for k in ks),
    )
    removed = tuple(f"{s}.{t}" for s, t in sorted(set(old.prints) - set(prior.prints)))
    read = tuple(f"{s}.{t}" for s, t in sorted(fresh))
    if not full:
        log.info(
            "%s: %d tables read again, %d kept, %d gone", database, len(read), len(unchanged), len(removed)
        )
    return Reflection(catalog, read, 0 if full else len(unchanged), removed, full, prior, _record(prior))


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


def _assembled(
    records: dict[Where, TableRecord], dialect: str, qualify: bool
) -> tuple[dict[Where, Table], dict[Where, DatabaseView]]:
    """The tables and views of `records` as a full reflection makes them (`assemble`), each by
    where it is (schema, table); a name in two schemas keeps the first, as `assemble` does."""
    ordered = dict(sorted(records.items()))
    columns: list[ColumnRow] = [
        (s, t, c, type_name, nullable, r.table_type)
        for (s, t), r in ordered.items()
        for c, type_name, nullable in r.columns
    ]
    keys = [k for r in ordered.values() for k in r.keys]
    definitions = {w: r.definition for w, r in ordered.items() if r.definition is not None}
    estimates = {w: r.estimate for w, r in ordered.items() if r.estimate is not None}
    made = assemble(columns, keys, definitions, estimates, "", dialect, qualify, False)
    where: dict[tuple[str | None, str], Where] = {}
    for s, t in reversed(list(ordered)):  # the first of a name wins, as in assemble
        where[(s if qualify else None, t)] = (s, t)
    tables = {where[(t.schema, t.name)]: t for t in made.tables}
    views = {where[(v.schema, v.name)]: v for v in made.views}
    return tables, views


def _fresh_prior(
    records: dict[Where, TableRecord], scope: dict[str, Any], dialect: str, qualify: bool
) -> Prior:
    """Everything read this time (a full reflection)."""
    tables, views = _assembled(records, dialect, qualify)
    return Prior(
        scope=scope,
        prints={w: r.fingerprint for w, r in sorted(records.items())},
        keys={w: r.keys for w, r in sorted(records.items()) if r.keys},
        tables=tables,
        views=views,
    )


def _merge(
    old: Prior,
    unchanged: set[Where],
    fresh: dict[Where, TableRecord],
    scope: dict[str, Any],
    dialect: str,
    qualify: bool,
) -> Prior | None:
    """The unchanged tables and views of `old` (the same objects) with the `fresh` ones in their
    places, in the order a full reflection gives; None when a table name would now be in two
    schemas (which one wins is the full reflection's business)."""
    new_tables, new_views = _assembled(fresh, dialect, qualify)
    tables = {w: t for w, t in old.tables.items() if w in unchanged} | new_tables
    views = {w: v for w, v in old.views.items() if w in unchanged} | new_views
    names = [w[1].lower() for w in (*tables, *views)]
    if len(names) != len(set(names)):
        return None
    prints = {w: fp for w, fp in old.prints.items() if w in unchanged} | {
        w: r.fingerprint for w, r in fresh.items()
    }
    keys = {w: k for w, k in old.keys.items() if w in unchanged} | {
        w: r.keys for w, r in fresh.items() if r.keys
    }
    return Prior(
        scope=scope,
        prints=dict(sorted(prints.items())),
        keys=dict(sorted(keys.items())),
        tables=dict(sorted(tables.items())),
        views=dict(sorted(views.items())),
    )


def _view_order(prior: Prior) -> list[DatabaseView]:
    """Views as `assemble` lists them: those with columns, then those known by definition only."""
    return sorted(prior.views.values(), key=lambda v: not v.columns) if prior.views else []


def _load(stale: Mapping[str, Any] | None, scope: dict[str, Any]) -> Prior:
    """What the last reflection left in the catalog cache, or nothing when there is none, it is
    unreadable or for another scope."""
    try:
        record = stale.get(KEPT) if stale is not None else None
        if (
            stale is None
            or not record
            or record.get("version") != RECORD_VERSION
            or record.get("scope") != scope
        ):
            return NO_PRIOR
        catalog = reflected_catalog(stale)
        keys: dict[Where, list[Key]] = defaultdict(list)
        for k in record["keys"]:
            keys[(k[0], k[1])].append(Key(k[0], k[1], k[2], k[3], tuple(k[4]), k[5], tuple(k[6])))
        return Prior(
            scope=scope,
            prints={(p[0], p[1]): p[2] for p in record["prints"]},
            keys={w: tuple(ks) for w, ks in keys.items()},
            tables={(w[0], w[1]): t for w, t in zip(record["tables"], catalog.tables, strict=True)},
            views={(w[0], w[1]): v for w, v in zip(record["views"], catalog.views, strict=True)},
        )
    except (ValueError, KeyError, TypeError, IndexError, AttributeError) as exc:
        log.warning("ignoring an unreadable reflection record: %s", exc)
        return NO_PRIOR


def _record(prior: Prior) -> dict[str, Any]:
    """What the catalog cache keeps for the next refresh: each table's fingerprint and keys, and
    where each table and view of the catalog is (the tables themselves are the catalog's)."""
    return {
        "version": RECORD_VERSION,
        "scope": prior.scope,
        "prints": [(s, t, fp) for (s, t), fp in prior.prints.items()],
        "keys": [
            (k.schema, k.table, k.kind, k.name, k.columns, k.ref_table, k.ref_columns)
            for ks in prior.keys.values()
            for k in ks
        ],
        "tables": list(prior.tables),
        "views": [w for w, _ in sorted(prior.views.items(), key=lambda wv: not wv[1].columns)],
    }
