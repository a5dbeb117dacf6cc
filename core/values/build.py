"""Building and refreshing the index: read the chosen columns' distinct values, write the arrays.

A refresh re-reads only the tables whose statistics changed (`table_fingerprint`) or that are
small enough to re-read, and rewrites the arrays only when a column's set of values changed.
"""

from __future__ import annotations

import json
import logging
import time
from dataclasses import asdict, dataclass, field
from typing import Any

import sqlalchemy as sa

from core.catalog import Catalog, Table
from core.values.columns import ColumnChoice, plan_columns
from core.values.progress import Progress, ProgressFn, no_progress
from core.values.source import Source
from core.values.store import MAX_VALUE_CHARS, folder_bytes, index_path, stored_columns, write_index
from core.warehouse.sampling import SAMPLED, sampled_distinct

log = logging.getLogger(__name__)

SAMPLE_READ_ROWS = 2_000_000  # rows read from a table too large to read whole (columns.FULL_READ_MAX_ROWS)
MAX_VALUES_PER_COLUMN = 2_000_000  # distinct values kept per column, at most
REREAD_MAX_ROWS = 100_000  # refresh re-reads tables this small instead of trusting statistics


@dataclass
class IndexStats:
    """What a build or refresh did, for the command line and the benchmarks."""

    database: str
    path: str
    values: int = 0
    columns: int = 0
    bytes: int = 0
    seconds: float = 0.0
    rewritten: bool = False  # False: refresh found nothing changed
    read_columns: list[str] = field(default_factory=list)  # read from the database this time
    kept_columns: list[str] = field(default_factory=list)  # carried over from the previous index
    sampled_columns: list[str] = field(default_factory=list)  # indexed from a sample of rows
    skipped: dict[str, str] = field(default_factory=dict)  # "table.column" → why not indexed

    @property
    def bytes_per_value(self) -> float:
        return self.bytes / self.values if self.values else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "bytes_per_value": round(self.bytes_per_value, 1)}


def build_index(db: Source, progress: ProgressFn | None = None) -> IndexStats:
    """Index every chosen column of `db` from scratch."""
    return _update(db, progress, reuse=False)


def refresh_index(db: Source, progress: ProgressFn | None = None) -> IndexStats:
    """Bring the index up to date, re-reading only tables that changed (or that are cheap to re-read)."""
    return _update(db, progress, reuse=True)


def _update(db: Source, progress: ProgressFn | None, *, reuse: bool) -> IndexStats:
    """Read the chosen columns (with `reuse`, only those whose table changed) and write the index."""
    start = time.perf_counter()
    progress = progress or no_progress
    path = index_path(db)
    stats = IndexStats(database=db.name, path=str(path))
    old, read_old = stored_columns(path) if reuse else ({}, lambda _: [])
    choices = plan_columns(db, progress)
    stats.skipped = {c.key: c.reason for c in choices if not c.index}
    chosen = [c for c in choices if c.index]
    warehouse = db.engine.dialect.name in SAMPLED
    if warehouse and len(chosen) > db.config.warehouse.max_index_columns:  # a cost cap per build
        cap = db.config.warehouse.max_index_columns
        stats.skipped.update({c.key: "over warehouse.max_index_columns" for c in chosen[cap:]})
        chosen = chosen[:cap]
    catalog = db.catalog
    total_rows = sum(min(_row_estimate(catalog, c.table), SAMPLE_READ_ROWS) for c in chosen)
    columns: list[dict[str, Any]] = []
    values: list[str] = []
    changed = set(old) - {c.key for c in chosen}  # columns no longer indexed
    fingerprints: dict[str, str | None] = {}
    with db.engine.connect() as conn:
        for choice in chosen:
            table = catalog.table(choice.table)
            assert table is not None
            if table.name not in fingerprints:
                fingerprints[table.name] = table_fingerprint(conn, db.engine, table)
            fp = fingerprints[table.name]
            prev = old.get(choice.key)
            small = (table.row_estimate or 0) <= REREAD_MAX_ROWS
            if prev is not None and fp is not None and prev.get("fingerprint") == fp and not small:
                column_values = read_old(prev)
                stats.kept_columns.append(choice.key)
            else:
                offset = len(values)

                def column_progress(p: Progress, offset: int = offset) -> None:
                    progress(Progress(p.phase, offset + p.done, total_rows or None, p.detail))

                column_values = _read_values(
                    conn,
                    db.engine,
                    table,
                    choice,
                    column_progress,
                    total_rows,
                    db.config.warehouse.sample_rows if warehouse else None,
                )
                stats.read_columns.append(choice.key)
                if prev is None or set(read_old(prev)) != set(column_values):
                    changed.add(choice.key)
            if choice.sample_rows:
                stats.sampled_columns.append(choice.key)
            columns.append(
                {
                    "table": choice.table,
                    "column": choice.column,
                    "start": len(values),
                    "count": len(column_values),
                    "fingerprint": fp,
                    "reason": choice.reason,
                    "sampled": choice.sample_rows,
                }
            )
            values.extend(column_values)
    stats.values, stats.columns = len(values), len(columns)
    if reuse and not changed and (path / "meta.json").exists():
        stats.bytes = folder_bytes(path)
        # Same values: keep the arrays, record the latest fingerprints for the next refresh.
        meta = json.loads((path / "meta.json").read_text())
        latest = {f"{c['table']}.{c['column']}": c["fingerprint"] for c in columns}
        for entry in meta["columns"]:
            entry["fingerprint"] = latest.get(f"{entry['table']}.{entry['column']}")
        meta["refreshed_at"] = time.time()
        meta["skipped"] = stats.skipped
        (path / "meta.json.tmp").write_text(json.dumps(meta))
        (path / "meta.json.tmp").replace(path / "meta.json")
    else:
        stats.bytes = write_index(
            path,
            columns,
            values,
            {
                "database": db.name,
                "catalog_signature": catalog.signature,
                "built_at": time.time(),
                "skipped": stats.skipped,
            },
            progress,
        )
        stats.rewritten = True
    stats.seconds = round(time.perf_counter() - start, 3)
    progress(Progress("done", stats.values, stats.values, f"{stats.columns} columns, {stats.bytes:,} bytes"))
    return stats


def _read_values(
    conn: sa.Connection,
    engine: sa.Engine,
    table: Table,
    choice: ColumnChoice,
    progress: ProgressFn,
    total: int,
    warehouse_rows: int | None = None,
) -> list[str]:
    """The column's distinct values; on a warehouse from a sample of `warehouse_rows` rows."""
    query: sa.Executable = _select_column(
        engine, table, choice.column, SAMPLE_READ_ROWS if choice.sample_rows else None
    )
    if warehouse_rows is not None:
        name = sa.table(table.name, schema=table.schema)
        table_sql = (
            str(sa.select(sa.literal_column("1")).select_from(name).compile(engine))
            .split("FROM", 1)[1]
            .strip()
        )
        query = sa.text(
            sampled_distinct(
                engine.dialect.name,
                table_sql,
                _quoted(engine, choice.column),
                warehouse_rows,
                table.row_estimate,
            )
        )
    out: list[str] = []
    result = conn.execution_options(stream_results=True, yield_per=20_000).execute(query)
    for part in result.scalars().partitions(20_000):
        out.extend(
            v if isinstance(v, str) else str(v)
            for v in part
            if not isinstance(v, bytes | memoryview) and len(str(v)) <= MAX_VALUE_CHARS
        )
        progress(Progress("read", len(out), total or None, choice.key))
        if len(out) >= MAX_VALUES_PER_COLUMN:
            log.warning("%s has over %d distinct values; indexing the first ones", choice.key, len(out))
            break
    result.close()
    return out


def table_fingerprint(conn: sa.Connection, engine: sa.Engine, table: Table) -> str | None:
    """A cheap sign that a table's rows changed, from the engine's statistics; None when unknown."""
    name = engine.dialect.name
    try:
        if name == "postgresql":
            row = conn.execute(
                sa.text(
                    "SELECT n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables "
                    "WHERE relname = :t AND schemaname = COALESCE(:s, current_schema())"
                ),
                {"t": table.name, "s": table.schema},
            ).first()
        elif name in ("mysql", "mariadb"):
            row = conn.execute(
                sa.text(
                    "SELECT table_rows, data_length, update_time, auto_increment FROM information_schema.tables "
                    "WHERE table_name = :t AND table_schema = COALESCE(:s, DATABASE())"
                ),
                {"t": table.name, "s": table.schema},
            ).first()
        elif name == "duckdb":  # its size estimate and its CREATE statement, both kept in its catalog
            row = conn.execute(
                sa.text(
                    "SELECT estimated_size, hash(sql) FROM duckdb_tables() WHERE table_name = :t "
                    "AND schema_name = COALESCE(:s, current_schema()) AND database_name = current_database()"
                ),
                {"t": table.name, "s": table.schema},
            ).first()
        elif name == "sqlite":
            quoted = _quoted(engine, table.name)
            row = conn.execute(sa.text(f"SELECT COUNT(*), MAX(rowid) FROM {quoted}")).first()
        else:
            return None
    except sa.exc.DBAPIError:
        conn.rollback()
        return None
    return None if row is None else repr(tuple(row))


def _quoted(engine: sa.Engine, name: str) -> str:
    return engine.dialect.identifier_preparer.quote(name)


def _row_estimate(catalog: Catalog, name: str) -> int:
    table = catalog.table(name)
    return (table.row_estimate or 0) if table is not None else 0


def _select_column(
    engine: sa.Engine, table: Table, column: str, sample_rows: int | None
) -> sa.Select[tuple[Any]]:
    """SELECT DISTINCT column FROM table [sampled], NULLs left out."""
    t = sa.table(table.name, sa.column(column), schema=table.schema)
    col: sa.ColumnElement[Any] = t.c[column]
    if sample_rows:
        estimate = max(table.row_estimate or sample_rows, 1)
        if engine.dialect.name == "postgresql" and estimate > sample_rows:
            percent = max(0.01, min(100.0, 100.0 * sample_rows / estimate))
            sampled = sa.tablesample(t, sa.func.system(percent))
            col = sampled.c[column]
        else:
            sub = sa.select(col).limit(sample_rows).subquery()
            col = sub.c[column]
    return sa.select(col).where(col.is_not(None)).distinct()
