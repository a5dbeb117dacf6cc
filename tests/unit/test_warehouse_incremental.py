"""Incremental refresh of a reflected catalog (core/warehouse/incremental.py), on a DuckDB file:
a changed table is read again, the others are kept, and the catalog equals a full reflection."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import duckdb
import pytest

from core.catalog import Catalog
from core.database import Database
from core.settings import DatabaseSettings
from core.warehouse.reflect import bulk_reflect


def _write(path: Path, *statements: str) -> None:
    conn = duckdb.connect(str(path))
    for sql in statements:
        conn.execute(sql)
    conn.close()


@pytest.fixture
def wh(tmp_path: Path) -> Path:
    path = tmp_path / "wh.duckdb"
    _write(
        path,
        "CREATE TABLE region (id INTEGER PRIMARY KEY, name VARCHAR)",
        "CREATE TABLE store (id INTEGER PRIMARY KEY, region_id INTEGER REFERENCES region(id), name VARCHAR)",
        "CREATE TABLE sale (id INTEGER PRIMARY KEY, store_id INTEGER REFERENCES store(id), amount DOUBLE)",
        "CREATE TABLE promo (id INTEGER, code VARCHAR UNIQUE)",
        "CREATE VIEW big_sales AS SELECT * FROM sale WHERE amount > 100",
        "INSERT INTO region VALUES (1, 'North')",
    )
    return path


def _open(path: Path, var: Path) -> Database:
    return Database(name="wh", config=DatabaseSettings(url=f"duckdb:///{path}"), var_dir=var)


def _full(db: Database) -> Catalog:
    """What reading everything gives, for comparison (signatures aside)."""
    return bulk_reflect(db.engine, db.name, ["main"], "duckdb", qualify=False)


def _same(a: Catalog, b: Catalog) -> None:
    key = lambda c: replace(c, signature="")  # noqa: E731
    assert sorted(t.name for t in a.tables) == sorted(t.name for t in b.tables)
    assert {t.name: t for t in a.tables} == {t.name: t for t in b.tables}
    assert sorted(map(repr, key(a).relationships)) == sorted(map(repr, key(b).relationships))
    assert {v.name: v for v in a.views} == {v.name: v for v in b.views}


def test_only_the_altered_table_is_read_again(wh: Path, tmp_path: Path) -> None:
    db = _open(wh, tmp_path / "var")
    first = db.catalog
    assert db.__dict__["last_reflection"].full
    db.dispose()
    _write(wh, "ALTER TABLE promo ADD COLUMN ends DATE")

    assert db.refresh()
    done = db.__dict__["last_reflection"]
    assert (done.full, done.read, done.kept, done.removed) == (False, ("main.promo",), 4, ())
    promo = db.catalog.table("promo")
    assert promo is not None and [c.name for c in promo.columns] == ["id", "code", "ends"]
    assert db.catalog.table("sale") is not None and first.signature != db.catalog.signature
    _same(db.catalog, _full(db))
    db.dispose()


def test_new_and_dropped_tables_and_another_process(wh: Path, tmp_path: Path) -> None:
    db = _open(wh, tmp_path / "var")
    db.catalog  # noqa: B018
    db.dispose()
    _write(
        wh,
        "DROP VIEW big_sales",
        "CREATE TABLE refund (id INTEGER PRIMARY KEY, sale_id INTEGER REFERENCES sale(id))",
    )

    later = _open(wh, tmp_path / "var")  # another process: the records are on disk
    catalog = later.catalog
    done = later.__dict__["last_reflection"]
    assert (done.full, done.read, done.removed) == (False, ("main.refund",), ("main.big_sales",))
    assert catalog.views == () and catalog.table("refund") is not None
    assert any(r.table == "refund" and r.ref_table == "sale" for r in catalog.relationships)
    _same(catalog, _full(later))
    later.dispose()


def test_unchanged_schema_reads_nothing_and_many_changes_read_everything(wh: Path, tmp_path: Path) -> None:
    db = _open(wh, tmp_path / "var")
    db.catalog  # noqa: B018
    assert not db.refresh()  # same signature: the catalog cache answers, no reflection at all
    db.dispose()
    _write(wh, "ALTER TABLE region ADD COLUMN a INTEGER", "ALTER TABLE store ADD COLUMN b INTEGER")
    assert db.refresh()
    assert db.__dict__["last_reflection"].full  # 2 of 5 changed: over FULL_SHARE, one full read
    _same(db.catalog, _full(db))
    db.dispose()


def test_overlaid_tables_are_kept_as_reflected_across_processes(wh: Path, tmp_path: Path) -> None:
    """The catalog cache keeps the catalog overlaid and, beside it, the tables the overlay changed
    as reflected: another process's refresh starts from those, so an overlay note dropped since
    is gone and one kept is applied once (not twice, not lost)."""
    notes = tmp_path / "catalog.yaml"
    notes.write_text("tables:\n  store:\n    description: Shops\n    synonyms: [shop]\n")

    def with_notes(var: Path) -> Database:
        config = DatabaseSettings(url=f"duckdb:///{wh}", catalog=str(notes))
        return Database(name="wh", config=config, var_dir=var)

    db = with_notes(tmp_path / "var")
    assert db.catalog.known_table("store").synonyms == ("shop",)
    db.dispose()
    _write(wh, "ALTER TABLE promo ADD COLUMN ends DATE")
    notes.write_text("tables:\n  sale:\n    description: Sales\n")

    later = with_notes(tmp_path / "var")  # another process: the stale cache holds the record
    catalog = later.catalog
    done = later.__dict__["last_reflection"]
    assert (done.full, done.read) == (False, ("main.promo",))
    store, sale = catalog.known_table("store"), catalog.known_table("sale")
    assert (store.description, store.synonyms) == ("", ())  # the note is gone: reflected as it was
    assert sale.description == "Sales"
    full = _full(later)
    assert store == full.known_table("store")
    assert [c.name for c in catalog.known_table("promo").columns] == ["id", "code", "ends"]
    later.dispose()
