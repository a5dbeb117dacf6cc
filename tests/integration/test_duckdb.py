"""DuckDB for real: a `.duckdb` file and a folder of Parquet/CSV files, read-only at the connection.

Every attack here is sent straight to the executor (no guard), so what stops it is DuckDB itself:
the file opened read-only, file access off, the configuration locked, and the executor running
only what DuckDB's own parser calls one SELECT (core/warehouse/duckdb.py).
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import duckdb
import pytest
import sqlalchemy as sa

from core.bench.ask import main as bench_ask
from core.database import Database
from core.execute import Limits, QueryError, execute, export_csv
from core.guard import GuardPolicy, check
from core.settings import DatabaseSettings
from core.warehouse import MissingDriver, require
from core.warehouse.duckdb import copy_sqlite, lake_tables

WRITES = [
    "DELETE FROM item",
    "UPDATE item SET name = 'x'",
    "CREATE TABLE x (a INTEGER)",
    "CREATE TEMP TABLE x (a INTEGER)",
    "INSERT INTO item VALUES (99, 'x', 1.0)",
    "DROP TABLE item",
    "COPY item TO '{dir}/out.csv'",
    "EXPORT DATABASE '{dir}/export'",
    "ATTACH '{dir}/other.duckdb' AS other",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "SET memory_limit = '100GB'",
    "PRAGMA enable_profiling",
    "CHECKPOINT",
    "SELECT 1; DELETE FROM item",
    "CALL pragma_version()",
]


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def duck(tmp_path) -> Database:
    path = tmp_path / "t.duckdb"
    conn = duckdb.connect(str(path))
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name VARCHAR, price DOUBLE)")
    conn.execute("INSERT INTO item SELECT i, 'item ' || i, i * 1.5 FROM range(1, 2001) t(i)")
    conn.execute("CREATE TABLE member (id INTEGER PRIMARY KEY, name VARCHAR, email VARCHAR, tax_id VARCHAR)")
    conn.execute(
        "INSERT INTO member VALUES (1, 'Ann', 'ann@example.com', 'T-1'), (2, 'Bob', 'bob@example.com', 'T-2')"
    )
    conn.close()
    db = Database(
        name="duck",
        config=DatabaseSettings(
            url=f"duckdb:///{path}", deny_columns=["member.tax_id"], mask_columns=["member.email"]
        ),
        var_dir=tmp_path / "var",
    )
    yield db
    db.dispose()


@pytest.fixture
def lake(tmp_path) -> Path:
    folder = tmp_path / "lake"
    (folder / "events").mkdir(parents=True)
    conn = duckdb.connect()
    conn.execute(f"COPY (SELECT 1 AS id, 'Ann' AS name UNION ALL SELECT 2, 'Bob') TO '{folder}/People.csv'")
    conn.execute(f"COPY (SELECT range AS id, range * 2 AS total FROM range(10)) TO '{folder}/orders.parquet'")
    for part in (1, 2):
        conn.execute(
            f"COPY (SELECT {part} AS part, range AS n FROM range(5)) TO '{folder}/events/p{part}.parquet'"
        )
    conn.close()
    (folder / "notes.txt").write_text("not a table")
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    return folder


def test_a_duckdb_file_answers_and_reflects_in_bulk(duck):
    assert execute(duck, "SELECT id, name FROM item WHERE id <= 2 ORDER BY id").rows == [
        (1, "item 1"),
        (2, "item 2"),
    ]
    catalog = duck.catalog
    assert catalog.dialect == "duckdb"
    item = catalog.table("item")
    assert item is not None and item.primary_key == ("id",) and item.row_estimate == 2000
    assert [(c.name, c.kind) for c in item.columns] == [
        ("id", "integer"),
        ("name", "text"),
        ("price", "number"),
    ]


@pytest.mark.parametrize("sql", WRITES)
def test_the_duckdb_file_refuses_writes_and_session_changes_whatever_sql_arrives(duck, tmp_path, sql):
    file = Path(duck.config.url.removeprefix("duckdb:///"))
    before = digest(file)
    with pytest.raises(QueryError):
        execute(duck, sql.format(dir=tmp_path))
    assert digest(file) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.duckdb", "var"]  # nothing written beside it
    assert execute(duck, "SELECT count(*) FROM item").rows == [(2000,)]


def test_file_access_is_off_and_the_configuration_locked(duck, tmp_path):
    (tmp_path / "secret.csv").write_text("password\nhunter2\n")
    for sql in (f"SELECT * FROM read_csv('{tmp_path}/secret.csv')", f"SELECT * FROM '{tmp_path}/secret.csv'"):
        with pytest.raises(QueryError) as info:
            execute(duck, sql)
        assert "hunter2" not in info.value.message
    # the connection itself, below the executor's checks
    with duck.engine.connect() as conn, pytest.raises(sa.exc.DBAPIError, match="locked"):
        conn.exec_driver_sql("SET enable_external_access = true")


def test_a_runaway_query_is_interrupted_at_the_timeout(duck):
    with pytest.raises(QueryError) as info:
        execute(duck, "SELECT count(*) FROM range(1000000000000) a", Limits(timeout_s=0.3))
    assert info.value.kind == "timeout"
    assert execute(duck, "SELECT 1").rows == [(1,)]  # the pooled connection still works


def test_caps_masks_and_denials_hold_on_duckdb(duck, tmp_path):
    result = execute(duck, "SELECT * FROM item", Limits(row_cap=100))
    assert result.row_count == 100 and result.truncated
    cut = execute(duck, "SELECT repeat('x', 1000) AS v", Limits(cell_cap=100))
    assert cut.cut_cells == 1 and "[cut:" in cut.rows[0][0]
    masked = execute(duck, "SELECT name, email FROM member ORDER BY id")
    assert masked.masked == ("email",) and "ann@example.com" not in repr(masked.rows)
    count, _ = export_csv(duck, "SELECT email FROM member", tmp_path / "out.csv", Limits())
    assert count == 2 and "example.com" not in (tmp_path / "out.csv").read_text().replace("@example.com", "")
    policy = GuardPolicy(deny_columns=frozenset({"member.tax_id"}), mask_columns=frozenset({"member.email"}))
    assert not check("SELECT tax_id FROM member", "duckdb", policy).allowed
    assert not check("SELECT * FROM member", "duckdb", policy).allowed
    assert not check("SELECT name FROM member WHERE email LIKE 'a%'", "duckdb", policy).allowed
    assert check("SELECT name, email FROM member", "duckdb", policy).allowed


def test_a_folder_of_files_is_a_database_of_views(lake, tmp_path):
    assert [(t.name, t.is_folder) for t in lake_tables(lake)] == [
        ("events", True),
        ("orders", False),
        ("people", False),
    ]
    db = Database(name="lake", config=DatabaseSettings(url=f"files://{lake}"), var_dir=tmp_path / "var")
    try:
        assert sorted(t.name for t in db.catalog.tables) == ["events", "orders", "people"]
        assert execute(db, "SELECT name FROM people ORDER BY id").rows == [("Ann",), ("Bob",)]
        assert execute(db, "SELECT count(*), sum(n) FROM events").rows == [(10, 20)]
        before = sorted(p.name for p in lake.rglob("*"))
        attacks = [
            f"SELECT * FROM read_csv('{tmp_path}/secret.csv')",  # beside the folder
            f"SELECT * FROM read_text('{lake}/notes.txt')",  # in the folder, but no table
            f"COPY orders TO '{lake}/copy.csv'",  # DuckDB may write where it may read: not a SELECT
            f"ATTACH '{lake}/new.duckdb' AS n",
            "CREATE TABLE orders2 AS SELECT * FROM orders",
            "CREATE OR REPLACE VIEW people AS SELECT 'x' AS name",
        ]
        for sql in attacks:
            with pytest.raises(QueryError) as info:
                execute(db, sql)
            assert "hunter2" not in info.value.message
        assert sorted(p.name for p in lake.rglob("*")) == before
        assert execute(db, "SELECT count(*) FROM people").rows == [(2,)]
    finally:
        db.dispose()


def test_files_databases_say_what_is_wrong_with_the_folder(tmp_path):
    for folder, message in ((tmp_path / "missing", "not found"), (tmp_path, "no Parquet or CSV")):
        db = Database(name="x", config=DatabaseSettings(url=f"files://{folder}"), var_dir=tmp_path / "var")
        with pytest.raises(FileNotFoundError, match=message):
            _ = db.engine
    (tmp_path / "a.csv").write_text("x\n1\n")
    (tmp_path / "A.parquet").write_bytes(b"")
    with pytest.raises(ValueError, match="two files make a table named a"):
        lake_tables(tmp_path)


def test_a_sqlite_copy_keeps_tables_values_and_keys(tmp_path):
    import sqlite3

    src = tmp_path / "s.sqlite"
    conn = sqlite3.connect(src)
    conn.executescript(
        """CREATE TABLE city (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
        CREATE TABLE person (id INTEGER PRIMARY KEY, city_id INTEGER REFERENCES city(id), born DATE, note);
        INSERT INTO city VALUES (1, 'Zürich'), (2, 'Bern');
        INSERT INTO person VALUES (1, 1, '2000-01-02', 3), (2, 2, 'unknown', 'x');"""
    )
    conn.commit()
    conn.close()
    copy = copy_sqlite(src, tmp_path / "c.duckdb")
    db = Database(name="c", config=DatabaseSettings(url=f"duckdb:///{copy}"), var_dir=tmp_path / "var")
    try:
        assert execute(db, "SELECT name FROM city ORDER BY id").rows == [("Zürich",), ("Bern",)]
        # 'unknown' is no date: the column stays text, as in SQLite; mixed values become text
        assert execute(db, "SELECT born, note FROM person ORDER BY id").rows == [
            ("2000-01-02", "3"),
            ("unknown", "x"),
        ]
        [rel] = db.catalog.relationships
        assert (rel.table, rel.columns, rel.ref_table, rel.ref_columns) == (
            "person",
            ("city_id",),
            "city",
            ("id",),
        )
    finally:
        db.dispose()


def test_a_missing_driver_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "snowflake.connector", None)  # as if the extra were not installed
    with pytest.raises(MissingDriver) as info:
        require("snowflake")
    assert str(info.value) == "the snowflake driver is not installed: pip install 'askbase[snowflake]'"


@pytest.mark.slow
def test_the_demo_benchmark_answers_alike_on_sqlite_and_duckdb(capsys):
    figures = {}
    for engine in ("sqlite", "duckdb"):
        assert bench_ask(["--dataset", "demo", "--engine", engine, "--json", "--quiet"]) == 0
        import json

        summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert summary["engine"] == engine
        figures[engine] = (summary["correct"], summary["answered"], summary["failed"])
    assert figures["duckdb"] == figures["sqlite"]


@pytest.mark.slow
def test_the_reflect_benchmark_prints_its_figures_and_baseline(capsys):
    from core.bench.reflect import main as bench_reflect

    assert bench_reflect(["--tables", "120", "--columns", "6", "--baseline-tables", "10", "--json"]) == 0
    out = capsys.readouterr()
    import json

    figures = json.loads(out.out.strip().splitlines()[-1])
    assert (figures["tables"], figures["columns"]) == (120, 720)
    assert figures["baseline_measured"]["tables"] == 10
    assert (
        "bulk reflection" in out.err and "baseline, table by table" in out.err and "cache re-read" in out.err
    )


@pytest.mark.slow
def test_the_linking_benchmark_prints_both_schemas_per_stage(capsys):
    from core.bench.linking import STAGES
    from core.bench.linking import main as bench_linking

    assert bench_linking(["--tables", "40", "--columns", "6", "--rounds", "1", "--json"]) == 0
    out = capsys.readouterr()
    import json

    figures = json.loads(out.out.strip().splitlines()[-1])
    assert figures["wide"]["tables"] == figures["baseline"]["tables"] + 40
    assert set(figures["wide"]["p95_ms"]) == set(STAGES) == set(figures["baseline"]["p95_ms"])
    assert "demo p95" in out.err and "wide p95" in out.err
    # the demo's first question read every table's example rows; the timed ones read none again
    assert figures["baseline"]["example_reads"]["tables"] == 0
    assert "example rows read from the database" in out.err
