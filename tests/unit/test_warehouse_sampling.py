"""The value index of a warehouse-sized table is read from a bounded sample (core/warehouse/sampling.py),
with a cap on columns per build, and a refresh re-reads only changed tables: on DuckDB for real."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from core.database import Database
from core.settings import DatabaseSettings, WarehouseSettings
from core.values import build_index, refresh_index
from core.warehouse.sampling import sampled_distinct


@pytest.fixture
def big(tmp_path: Path) -> Path:
    path = tmp_path / "big.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE customer (id INTEGER PRIMARY KEY, city VARCHAR, segment VARCHAR)")
    conn.execute(
        "INSERT INTO customer SELECT i, 'city ' || i, ['retail', 'smb', 'enterprise'][1 + i % 3] "
        "FROM range(150000) t(i)"
    )
    conn.execute("CREATE TABLE small (id INTEGER PRIMARY KEY, label VARCHAR)")
    conn.execute("INSERT INTO small VALUES (1, 'alpha'), (2, 'beta')")
    conn.close()
    return path


def _db(path: Path, var: Path, **caps: int) -> Database:
    config = DatabaseSettings(url=f"duckdb:///{path}", warehouse=WarehouseSettings(**caps))
    return Database(name="big", config=config, var_dir=var)


def test_duckdb_samples_a_bounded_number_of_rows() -> None:
    sql = sampled_distinct("duckdb", '"customer"', '"city"', 500, 150_000)
    assert sql == (
        'SELECT DISTINCT "city" FROM "customer" TABLESAMPLE RESERVOIR (500 ROWS) '
        'WHERE "city" IS NOT NULL LIMIT 500'
    )


def test_the_index_reads_at_most_sample_rows_per_column_and_max_columns(big: Path, tmp_path: Path) -> None:
    db = _db(big, tmp_path / "var", sample_rows=1000, max_index_columns=2)
    stats = build_index(db)
    by_column = {c: stats.values for c in stats.read_columns}
    assert len(stats.read_columns) == 2 and stats.columns == 2, by_column
    assert [k for k, why in stats.skipped.items() if why == "over warehouse.max_index_columns"] == [
        "small.label"
    ]
    cities = [m for m in db.values.lookup("city 1234", k=3) if m.column == "city"]
    assert stats.values <= 1000 + 3  # 1,000 sampled cities at most, and the three segments
    assert all(m.value.startswith("city ") for m in cities)
    db.dispose()


def test_a_refresh_reads_again_only_the_changed_table(big: Path, tmp_path: Path) -> None:
    db = _db(big, tmp_path / "var", sample_rows=200_000)
    build_index(db)
    db.dispose()
    again = refresh_index(db)
    # the small table is re-read whatever (cheap); the large one is kept while its statistics hold
    assert set(again.kept_columns) == {"customer.city", "customer.segment"}
    assert again.read_columns == ["small.label"] and not again.rewritten
    db.dispose()
    conn = duckdb.connect(str(big))
    conn.execute("INSERT INTO customer VALUES (160000, 'Atlantis', 'retail')")
    conn.close()
    after = refresh_index(db)
    assert {"customer.city", "customer.segment"} <= set(after.read_columns) and after.rewritten
    assert any(m.value == "Atlantis" for m in db.values.lookup("Atlantis", k=3))
    db.dispose()
