"""Schemas at warehouse size: how long reading a 10,000-table catalog takes, and reading it again.

    python -m core.bench reflect [--tables 10000] [--columns 20] [--baseline-tables 300] [--json]

Generates (once, kept under `<var>/bench/reflect/`) a DuckDB file with `--tables` tables of
`--columns` columns each (a primary key, then integer, text and number columns in turn), then
measures, in this run:

- *bulk reflection*: Askbase's catalog of the file from nothing (core/warehouse/reflect.py: one
  query for every column, one for the keys, one for the views, one for the row estimates), and
  the disk cache written — target at most 30 s;
- *cache re-read*: the same catalog in another process's shoes (a new `Database`, its engine
  already open): the one-row signature query, then the cached JSON — target at most 1 s;
- *one table changed*: the cache after one table gained a column, in another process's shoes:
  the signature, one query of per-table fingerprints, that table read again and the other
  9,999 kept (core/warehouse/incremental.py) — baseline: the full bulk reflection above;
- *baseline*: reflection table by table, as SQLAlchemy's inspector does it (a columns query and
  a keys query per table), timed on `--baseline-tables` tables and scaled to all of them; and
  for the re-read, the bulk reflection itself (what every start would cost without the cache).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.catalog import Catalog
from core.database import Database
from core.demo_file import build_lock
from core.settings import DatabaseSettings, load_settings

TARGET_REFLECT_S = 30.0
TARGET_REREAD_S = 1.0
TYPES = ("BIGINT", "VARCHAR", "DOUBLE")


def generate(path: Path, tables: int, columns: int) -> float:
    """Write the wide schema to `path` (when missing); seconds it took (0 when it was there)."""
    import duckdb

    with build_lock(path):
        if path.is_file():
            return 0.0
        start = time.perf_counter()
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.unlink(missing_ok=True)
        conn = duckdb.connect(str(partial))
        body = ", ".join(f"c{j:02d} {TYPES[j % 3]}" for j in range(1, columns))
        conn.execute("BEGIN")
        for i in range(tables):
            conn.execute(f"CREATE TABLE t{i:05d} (id BIGINT PRIMARY KEY, {body})")
        conn.execute("COMMIT")
        conn.close()
        partial.replace(path)
        return time.perf_counter() - start


def per_table_baseline(db: Database, sample: int) -> tuple[float, int]:
    """Seconds to reflect `sample` tables one by one (columns, then keys, per table); tables done."""
    engine = db.engine
    with engine.connect() as conn:
        names = [
            r[0]
            for r in conn.exec_driver_sql(
                f"SELECT table_name FROM duckdb_tables() ORDER BY table_name LIMIT {int(sample)}"
            )
        ]
        start = time.perf_counter()
        for name in names:
            conn.exec_driver_sql(
                "SELECT column_name, data_type, is_nullable FROM information_schema.columns "
                f"WHERE table_schema = 'main' AND table_name = '{name}' ORDER BY ordinal_position"
            ).all()
            conn.exec_driver_sql(
                "SELECT constraint_type, constraint_column_names FROM duckdb_constraints() "
                f"WHERE table_name = '{name}'"
            ).all()
        return time.perf_counter() - start, len(names)


def one_table_changed(
    path: Path, config: DatabaseSettings, var: Path, before: Catalog
) -> tuple[float, tuple[str, ...]]:
    """Seconds to bring the cached catalog up to date after one table gained a column (another
    process's start: signature, per-table fingerprints, that table read again, the rest kept),
    and which tables were read."""
    import duckdb

    first = before.tables[0]
    conn = duckdb.connect(str(path))
    conn.execute(f'ALTER TABLE "{first.name}" ADD COLUMN changed_by_bench INTEGER')
    conn.close()
    db = Database(name="wide", config=config, var_dir=var)
    db.engine.connect().close()
    start = time.perf_counter()
    after = db.catalog
    seconds = time.perf_counter() - start
    done = db.__dict__["last_reflection"]
    db.dispose()
    grown = after.table(first.name)
    assert grown is not None and grown.columns[-1].name == "changed_by_bench", "the change was not read"
    assert len(after.tables) == len(before.tables)
    return seconds, done.read


def measure(path: Path, baseline_tables: int) -> dict[str, Any]:
    var = Path(tempfile.mkdtemp(prefix="askbase-reflect-"))
    copy = var / path.name  # a copy: the incremental run alters one of its tables
    shutil.copyfile(path, copy)
    config = DatabaseSettings(url=f"duckdb:///{copy}")
    try:
        cold_db = Database(name="wide", config=config, var_dir=var)
        cold_db.engine.connect().close()  # opening the file is not reflection
        start = time.perf_counter()
        catalog = cold_db.catalog
        cold = time.perf_counter() - start
        warm_db = Database(name="wide", config=config, var_dir=var)
        warm_db.engine.connect().close()
        start = time.perf_counter()
        again = warm_db.catalog
        reread = time.perf_counter() - start
        assert again == catalog, "the cached catalog differs from the one reflected"
        base_s, base_n = per_table_baseline(cold_db, baseline_tables)
        tables = len(catalog.tables)
        cache_bytes = sum(f.stat().st_size for f in (var / "cache").glob("*.catalog.json"))
        cold_db.dispose()
        warm_db.dispose()
        changed_s, read = one_table_changed(copy, config, var, catalog)
    finally:
        shutil.rmtree(var, ignore_errors=True)
    scaled = base_s / max(base_n, 1) * tables
    return {
        "one_changed_reread_s": round(changed_s, 3),
        "one_changed_read_tables": list(read),
        "tables": tables,
        "columns": sum(len(t.columns) for t in catalog.tables),
        "bulk_reflection_s": round(cold, 3),
        "cache_reread_s": round(reread, 3),
        "cache_bytes": cache_bytes,
        "baseline_per_table_s": round(scaled, 3),
        "baseline_measured": {"tables": base_n, "seconds": round(base_s, 3)},
        "baseline_reread_s": round(cold, 3),
        "targets": {"reflection_s": TARGET_REFLECT_S, "reread_s": TARGET_REREAD_S},
        "reflection_ok": cold <= TARGET_REFLECT_S,
        "reread_ok": reread <= TARGET_REREAD_S,
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.bench reflect", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--tables", type=int, default=10_000)
    parser.add_argument("--columns", type=int, default=20)
    parser.add_argument("--baseline-tables", type=int, default=300, help="tables reflected one by one")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON line")
    args = parser.parse_args(argv)
    if args.tables < 1 or args.columns < 2:
        parser.error("--tables needs at least 1, --columns at least 2")
    path = Path(load_settings().var_dir) / "bench" / "reflect" / f"wide-{args.tables}x{args.columns}.duckdb"
    made = generate(path, args.tables, args.columns)
    figures = measure(path, args.baseline_tables)
    figures["generated_s"] = round(made, 3)
    out = sys.stderr if args.json else sys.stdout
    ok = {True: "within target", False: "OVER TARGET"}
    print(
        f"schema: {figures['tables']:,} tables, {figures['columns']:,} columns (DuckDB, {path})"
        + (f"; generated in {made:.1f} s" if made else ""),
        file=out,
    )
    print(
        f"bulk reflection:  {figures['bulk_reflection_s']:8.2f} s  (target {TARGET_REFLECT_S:.0f} s: "
        f"{ok[figures['reflection_ok']]}); baseline, table by table: {figures['baseline_per_table_s']:.2f} s "
        f"(measured {figures['baseline_measured']['seconds']:.2f} s on {figures['baseline_measured']['tables']} "
        "tables, scaled)",
        file=out,
    )
    print(
        f"cache re-read:    {figures['cache_reread_s']:8.2f} s  (target {TARGET_REREAD_S:.0f} s: "
        f"{ok[figures['reread_ok']]}); baseline, reflecting again: {figures['baseline_reread_s']:.2f} s; "
        f"cache file {figures['cache_bytes'] / 1e6:.1f} MB",
        file=out,
    )
    print(
        f"one table changed: {figures['one_changed_reread_s']:8.2f} s  (read again: "
        f"{', '.join(figures['one_changed_read_tables'])}); baseline, full reflection: "
        f"{figures['bulk_reflection_s']:.2f} s",
        file=out,
    )
    if args.json:
        print(json.dumps(figures))
    return 0
