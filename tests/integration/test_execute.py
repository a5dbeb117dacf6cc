"""The executor: read-only sessions, timeouts, caps — on SQLite, PostgreSQL and MariaDB."""

from __future__ import annotations

import json
import logging
import sqlite3
import subprocess
import sys
import time
import uuid

import pytest
import sqlalchemy as sa

from core.askbase import Askbase
from core.database import Database
from core.db_errors import public_text
from core.execute import Limits, QueryError, execute, export_csv
from core.settings import DatabaseSettings, load_settings
from tests.conftest import copy_on
from tests.paths import ROOT
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


@pytest.fixture
def item_db(engine, sqlite_db, tmp_path, request):
    """The item table on each engine of tests/conftest.py ENGINES: the SQLite file, or its copy there."""
    if engine == "sqlite":
        yield sqlite_db
        return
    db = Database(
        name="t",
        config=DatabaseSettings(**copy_on(engine, tmp_path / "t.sqlite", request, "askbase_item")),
        var_dir=tmp_path,
    )
    yield db
    db.dispose()


def test_rows_and_columns(item_db):
    result = execute(item_db, "SELECT id, name FROM item WHERE id <= 3 ORDER BY id")
    assert result.columns == ("id", "name")
    assert result.rows == [(1, "item 1"), (2, "item 2"), (3, "item 3")]
    assert not result.truncated


def test_row_cap_truncates(item_db):
    result = execute(item_db, "SELECT * FROM item", Limits(row_cap=100))
    assert result.row_count == 100 and result.truncated


def test_byte_cap_truncates(item_db):
    result = execute(item_db, "SELECT * FROM item", Limits(byte_cap=2000))
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


def test_syntax_error_is_classified(item_db):
    with pytest.raises(QueryError) as info:
        execute(item_db, "SELECT nope FROM item")
    assert info.value.kind in ("syntax", "other") and "nope" in info.value.message.lower()  # Snowflake: NOPE


def test_csv_export_streams_with_header(item_db, tmp_path):
    path = tmp_path / "out.csv"
    count, truncated = export_csv(
        item_db, "SELECT id, name FROM item ORDER BY id", path, Limits(row_cap=1500)
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


# ---------------------------------------------------------------- every value bounded (issue 18)
#
# One cell of 900 MB used to be fetched whole (2.7 GB RSS). Each query below runs in a fresh
# process whose peak RSS is read back: the cell is refused or cut, and memory stays small. The peak
# is the process's own (VmHWM): getrusage's ru_maxrss of a process started by subprocess keeps the
# peak of the process that started it (Linux carries it over the exec), here the pytest worker,
# whose few hundred MB would be read as the probe's.

BIG_CELL = 900_000_000
RSS_LIMIT_MB = 300
PROBE = """
import json, sys
from pathlib import Path
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.settings import DatabaseSettings

def peak_rss_mb():
    status = Path("/proc/self/status").read_text()
    return next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")) / 1024

url, sql, cap, var = sys.argv[1], sys.argv[2], int(sys.argv[3]), Path(sys.argv[4])
db = Database(name="big", config=DatabaseSettings(url=url), var_dir=var)
execute(db, "SELECT 1")  # connected, drivers loaded: the baseline
out = {"baseline_rss_mb": peak_rss_mb()}
try:
    result = execute(db, sql, Limits(cell_cap=cap))
    out["columns"] = list(result.columns)
    out["cut_cells"] = result.cut_cells
    out["rows"] = [
        [v if v is None or isinstance(v, int) else {"len": len(v), "head": v[:10], "tail": v[-90:]} for v in r]
        for r in result.rows
    ]
except QueryError as exc:
    out["error"] = exc.message
out["max_rss_mb"] = peak_rss_mb()
db.dispose()
print(json.dumps(out))
"""


def probe(url: str, sql: str, tmp_path, cap: int = 100_000) -> dict:
    """Run `sql` through execute() in a fresh process; its result and peak RSS."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, url, sql, str(cap), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=180,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    print(f"{sql[:60]}: peak RSS {out['max_rss_mb']:.0f} MB (baseline {out['baseline_rss_mb']:.0f} MB)")
    return out


def test_sqlite_builds_no_900_mb_cell_and_memory_stays_bounded(sqlite_db, tmp_path):
    url = sqlite_db.config.url
    # SQLite's printf builds no string over the length limit: the value is NULL, never 900 MB. (A
    # width pads at once; a precision, '%.*c', spends 4 s of CPU repeating the character first.)
    out = probe(url, f"SELECT printf('%{BIG_CELL}s', 'x') AS big, 42 AS n", tmp_path)
    assert out["rows"] == [[None, 42]] and out["max_rss_mb"] < RSS_LIMIT_MB
    # a value that grows past the limit on the way fails the query with a clear message
    grown = (
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 900) "
        "SELECT group_concat(printf('%.*c', 1000000, 'x'), '') AS big FROM n"
    )
    out = probe(url, grown, tmp_path)
    assert "larger than 20,000,000 bytes" in out["error"] and "part of it" in out["error"]
    assert out["max_rss_mb"] < RSS_LIMIT_MB


def test_long_cells_are_cut_with_a_marker_that_says_how_long_they_were(sqlite_db, tmp_path):
    sql = "SELECT printf('%.*c', 3000000, 'x') AS big, 42 AS n, name FROM item WHERE id <= 2 ORDER BY id"
    result = execute(sqlite_db, sql, Limits(cell_cap=100_000))
    assert [r[1:] for r in result.rows] == [(42, "item 1"), (42, "item 2")]
    big = result.rows[0][0]
    assert big.startswith("x" * 100_000) and not big.startswith("x" * 100_001)
    assert big.endswith("[cut: the value holds 3,000,000 bytes; a cell shows at most 100,000]")
    assert result.cut_cells == 2
    path = tmp_path / "out.csv"
    export_csv(sqlite_db, sql, path, Limits(cell_cap=100_000))
    assert path.stat().st_size < 300_000 and "3,000,000 bytes" in path.read_text()
    blob = execute(sqlite_db, "SELECT randomblob(300000) AS b", Limits(cell_cap=1000)).rows[0][0]
    assert blob == "[binary data of 300,000 bytes; a cell shows at most 1,000]"


def test_sqlite_length_limit_is_lifted_after_the_query(sqlite_db):
    execute(sqlite_db, "SELECT 1", Limits(byte_cap=1_000_000))
    with sqlite_db.engine.connect() as conn:
        raw = conn.connection.dbapi_connection
        assert raw.getlimit(sqlite3.SQLITE_LIMIT_LENGTH) == 1_000_000_000  # SQLite's default


@pytest.mark.postgres
def test_postgres_sends_at_most_a_capped_part_of_a_900_mb_cell(tmp_path):
    url = server_url("ASKBASE_TEST_POSTGRES_URL")
    # The same 900 MB built from 30,000-byte pieces: repeat() copies its argument once per repetition,
    # and 900 million one-byte copies take the server 8 s
    big_cell = f"repeat(repeat('x', 30000), {BIG_CELL // 30000})"
    out = probe(url, f"SELECT {big_cell} AS big, 42 AS n, 'short' AS s", tmp_path)
    assert out["columns"] == ["big", "n", "s"]
    big, n, short = out["rows"][0]
    assert (n, short["tail"]) == (42, "short")
    assert big["head"] == "x" * 10 and big["len"] < 100_000 + 100
    assert big["tail"].endswith("[cut: the value holds 900,000,000 bytes; a cell shows at most 100,000]")
    assert out["cut_cells"] == 1
    assert out["max_rss_mb"] < RSS_LIMIT_MB


@pytest.mark.postgres
def test_postgres_bounded_results_keep_types_names_and_order(tmp_path):
    db = make_db(server_url("ASKBASE_TEST_POSTGRES_URL"), tmp_path)
    try:
        result = execute(
            db,
            "SELECT g AS a, g::text AS b, jsonb_build_object('k', g) AS j, ARRAY[g, g] AS arr, "
            "g::numeric / 4 AS q, g AS a, decode('00ff', 'hex') AS raw, NULL::text AS nothing "
            "FROM generate_series(1, 300) AS g ORDER BY g DESC LIMIT 250",
        )
        assert result.columns == ("a", "b", "j", "arr", "q", "a", "raw", "nothing")
        first = result.rows[0]
        assert first[:4] == (300, "300", {"k": 300}, [300, 300])
        assert float(first[4]) == 75.0 and first[5] == 300 and bytes(first[6]) == b"\x00\xff"
        assert first[7] is None
        assert [r[0] for r in result.rows] == list(range(300, 50, -1))
        assert result.cut_cells == 0
        cut = execute(
            db,
            "SELECT decode(repeat('ab', 5000), 'hex') AS raw, repeat('é', 3000) AS t",
            Limits(cell_cap=1000),
        )
        assert cut.rows[0][0] == "[binary data of 5,000 bytes; a cell shows at most 1,000]"
        assert cut.rows[0][1].startswith("é" * 1000) and "6,000 bytes" in cut.rows[0][1]
    finally:
        db.dispose()


@pytest.mark.mysql
def test_mariadb_cells_are_bounded_by_the_server_and_cut_here(tmp_path):
    url = server_url("ASKBASE_TEST_MYSQL_URL")
    out = probe(url, f"SELECT REPEAT('x', {BIG_CELL}) AS big, 42 AS n", tmp_path)
    assert out["rows"] == [[None, 42]]  # max_allowed_packet: the server builds no such string
    assert out["max_rss_mb"] < RSS_LIMIT_MB
    out = probe(url, "SELECT REPEAT('x', 10000000) AS big, 42 AS n", tmp_path)
    big, n = out["rows"][0]
    assert n == 42 and big["head"] == "x" * 10
    assert big["tail"].endswith("[cut: the value holds 10,000,000 bytes; a cell shows at most 100,000]")
    assert out["max_rss_mb"] < RSS_LIMIT_MB


# ---------------------------------------------------------------- errors people see (issue 18 §9)

UNREACHABLE = {
    "postgres": ("postgresql+psycopg://postgres@127.0.0.1:5999/test", ["127.0.0.1", "5999"]),
    "postgres account": (
        "postgresql+psycopg://askbase_nobody_x@127.0.0.1:5432/test",
        ["askbase_nobody_x", "5432"],
    ),
    "mariadb": ("mysql+pymysql://root@127.0.0.1:3999/test", ["127.0.0.1"]),  # MySQL names no port
    "mariadb account": (
        "mysql+pymysql://askbase_nobody_x@127.0.0.1:3306/test",
        ["askbase_nobody_x", "127.0.0.1"],
    ),
}


@pytest.mark.parametrize("case", list(UNREACHABLE))
def test_database_errors_name_no_host_port_or_account_but_the_log_does(
    case, tmp_path, state_url, caplog, demo_var
):
    url, details = UNREACHABLE[case]
    db = make_db(url, tmp_path)
    with caplog.at_level(logging.INFO, logger="core.execute"), pytest.raises(QueryError) as info:
        execute(db, "SELECT 1")
    db.dispose()
    assert info.value.kind in ("connection", "permission")
    assert not [d for d in details if d in info.value.message], info.value.message
    assert info.value.message  # still says what went wrong
    logged = " ".join(r.getMessage() for r in caplog.records)
    assert all(d in logged for d in details)  # the operator finds the full text in the log

    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={
            "demo": DatabaseSettings(url=f"sqlite:///{demo_var / 'demo.sqlite'}"),
            "far": DatabaseSettings(url=url),
        },
    )
    app = Askbase(settings)
    try:
        outcome = app.ask("How many clients are there?", db="far")
    finally:
        app.close()
    assert outcome.status == "error" and "far" in outcome.error
    assert not [d for d in details if d in json.dumps(outcome.to_json(), default=str)], outcome.error


def test_public_error_text_keeps_the_reason():
    assert public_text(
        'connection to server at "10.1.2.3", port 6432 failed: FATAL: password authentication '
        'failed for user "askbase_ro"'
    ) == ("connection to the database server failed: FATAL: password authentication failed for user …")
    assert public_text("(1142, \"SELECT command denied to user 'ro'@'10.0.0.7' for table `payroll`\")") == (
        '(1142, "SELECT command denied to user … for table `payroll`")'
    )
    assert public_text('column "emial" does not exist') == 'column "emial" does not exist'
