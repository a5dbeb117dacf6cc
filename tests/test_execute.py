"""The executor: read-only sessions, timeouts, caps — on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import sqlite3
import time
import uuid

import pytest
import sqlalchemy as sa

from core.database import Database
from core.execute import Limits, QueryError, execute, export_csv
from core.settings import DatabaseSettings
from tests.servers import server_url


def make_db(url: str, tmp_path) -> Database:
    return Database(name="t", config=DatabaseSettings(url=url), var_dir=tmp_path)


@pytest.fixture
def sqlite_db(tmp_path):
    path = tmp_path / "t.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT, price REAL)")
    conn.executemany("INSERT INTO item VALUES (?, ?, ?)", [(i, f"item {i}", i * 1.5) for i in range(1, 2001)])
    conn.commit()
    conn.close()
    db = make_db(f"sqlite:///{path}", tmp_path)
    yield db
    db.dispose()


def test_rows_and_columns(sqlite_db):
    result = execute(sqlite_db, "SELECT id, name FROM item WHERE id <= 3 ORDER BY id")
    assert result.columns == ("id", "name")
    assert result.rows == [(1, "item 1"), (2, "item 2"), (3, "item 3")]
    assert not result.truncated


def test_row_cap_truncates(sqlite_db):
    result = execute(sqlite_db, "SELECT * FROM item", Limits(row_cap=100))
    assert result.row_count == 100 and result.truncated


def test_byte_cap_truncates(sqlite_db):
    result = execute(sqlite_db, "SELECT * FROM item", Limits(byte_cap=2000))
    assert 0 < result.row_count < 2000 and result.truncated


def test_sqlite_file_cannot_be_written(sqlite_db):
    for sql in ("DELETE FROM item", "CREATE TABLE x (a int)", "PRAGMA query_only = OFF; DELETE FROM item"):
        with pytest.raises(QueryError):
            execute(sqlite_db, sql)
    assert execute(sqlite_db, "SELECT COUNT(*) FROM item").rows == [(2000,)]


def test_sqlite_runaway_query_is_stopped_by_the_timeout(sqlite_db):
    sql = "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n) SELECT COUNT(*) FROM n"
    start = time.monotonic()
    with pytest.raises(QueryError) as info:
        execute(sqlite_db, sql, Limits(timeout_s=0.5))
    assert info.value.kind == "timeout"
    assert time.monotonic() - start < 1.5
    assert execute(sqlite_db, "SELECT 1").rows == [(1,)]  # the pooled connection still works


def test_syntax_error_is_classified(sqlite_db):
    with pytest.raises(QueryError) as info:
        execute(sqlite_db, "SELECT nope FROM item")
    assert info.value.kind in ("syntax", "other") and "nope" in info.value.message


def test_csv_export_streams_with_header(sqlite_db, tmp_path):
    path = tmp_path / "out.csv"
    count, truncated = export_csv(
        sqlite_db, "SELECT id, name FROM item ORDER BY id", path, Limits(row_cap=1500)
    )
    lines = path.read_text().splitlines()
    assert (count, truncated) == (1500, True)
    assert lines[0] == "id,name" and lines[1] == "1,item 1" and len(lines) == 1501


def _server_db(env: str, tmp_path):
    url = server_url(env)
    admin = sa.create_engine(url)
    table = f"askbase_exec_{uuid.uuid4().hex[:8]}"
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(20))"))
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (1, 'a'), (2, 'b')"))
    return admin, table, make_db(url, tmp_path)


SLEEP = {"ASKBASE_TEST_POSTGRES_URL": "SELECT pg_sleep(5)", "ASKBASE_TEST_MYSQL_URL": "SELECT SLEEP(5)"}


@pytest.mark.parametrize(
    "env",
    [
        pytest.param("ASKBASE_TEST_POSTGRES_URL", marks=pytest.mark.postgres),
        pytest.param("ASKBASE_TEST_MYSQL_URL", marks=pytest.mark.mysql),
    ],
)
def test_server_databases_are_read_only_and_time_out(env, tmp_path):
    admin, table, db = _server_db(env, tmp_path)
    try:
        assert execute(db, f"SELECT name FROM {table} ORDER BY id").rows == [("a",), ("b",)]
        for sql in (
            f"DELETE FROM {table}",
            f"UPDATE {table} SET name = 'x'",
            f"CREATE TABLE {table}_2 (a int)",
        ):
            with pytest.raises(QueryError):
                execute(db, sql)
        with admin.connect() as conn:
            assert conn.execute(sa.text(f"SELECT COUNT(*) FROM {table} WHERE name <> 'x'")).scalar() == 2
        start = time.monotonic()
        try:
            result = execute(db, SLEEP[env], Limits(timeout_s=1))
            # MariaDB's SLEEP returns 1 when interrupted by max_statement_time instead of failing
            assert result.rows == [(1,)]
        except QueryError as exc:
            assert exc.kind == "timeout"
        assert time.monotonic() - start < 2.0
    finally:
        db.dispose()
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
            conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}_2"))
        admin.dispose()
