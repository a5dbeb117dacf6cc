"""What the guard lets through runs on the real databases as it was meant, and what it cannot bound
never starts: REGEXP is REGEXP on MariaDB (which has no REGEXP_LIKE), and a value built whole in
one function call (`array_fill`, `repeat`, `lpad`, `generate_series` in the output) must have a
size the guard can read and bound before the query runs.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from core.access import Principal
from core.askbase import Askbase
from core.guard import GuardPolicy, check
from core.settings import DatabaseSettings, load_settings
from tests.servers import server_url

PG = "ASKBASE_TEST_POSTGRES_URL"
MY = "ASKBASE_TEST_MYSQL_URL"
ALICE = Principal.of(user="U1", channel="C1")


def test_mysql_regexp_is_printed_as_the_operator_both_servers_read():
    cases = {
        "SELECT name FROM t WHERE name REGEXP '^a'": "WHERE name REGEXP '^a'",
        "SELECT name FROM t WHERE name NOT REGEXP '^a'": "WHERE NOT (name REGEXP '^a')",
        "SELECT name FROM t WHERE name RLIKE 'x' AND id > 1": "WHERE (name REGEXP 'x') AND id > 1",
    }
    for sql, expected in cases.items():
        verdict = check(sql, "mysql")
        assert verdict.allowed and expected in verdict.sql and "REGEXP_LIKE" not in verdict.sql, verdict.sql


@pytest.mark.parametrize(
    "sql, reason",
    [
        ("SELECT CAST(array_fill(1, ARRAY[100000000]) AS TEXT)", "ARRAY_FILL"),
        ("SELECT array_fill(1, ARRAY[10000, 10000])", "100,000,000 elements"),
        ("SELECT repeat('x', 1000000000)", "REPEAT"),
        ("SELECT lpad('x', 500000000, 'y')", "LPAD"),
        ("SELECT repeat(name, id * 1000) FROM t", "not a plain number"),
        ("SELECT generate_series(1, 100000000)", "100,000,000 rows"),
        ("SELECT generate_series(1, id) FROM t", "not plain numbers"),
    ],
)
def test_values_built_whole_need_a_size_the_guard_can_bound(sql, reason):
    verdict = check(sql, "postgres", GuardPolicy(value_cap=1_000_000))
    assert not verdict.allowed and reason in verdict.reason, verdict.reason


def test_small_sizes_and_series_in_from_are_fine():
    for sql in (
        "SELECT lpad(CAST(id AS TEXT), 5, '0') FROM t",
        "SELECT repeat('-', 20)",
        "SELECT d FROM generate_series(DATE '2024-01-01', DATE '2024-12-31', INTERVAL '1 day') AS g(d)",
        "SELECT generate_series(1, 12) AS month",
    ):
        assert check(sql, "postgres", GuardPolicy(value_cap=1_000_000)).allowed, sql


# ---------------------------------------------------------------- on the real servers


DUCK = "duckdb"


def _duckdb(tmp_path, state_url) -> tuple[Askbase, str]:
    """A DuckDB file with the hosts table, opened read-only by Askbase as every DuckDB is."""
    import duckdb

    path, table = tmp_path / "hosts.duckdb", "gr_hosts"
    conn = duckdb.connect(str(path))
    conn.execute(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(40))")
    conn.execute(f"INSERT INTO {table} VALUES (1, 'ams-1'), (2, 'ash-1'), (3, 'fra-2')")
    conn.close()
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="srv",
        databases={"srv": DatabaseSettings(url=f"duckdb:///{path}", statement_timeout_s=5)},
    )
    return Askbase(settings), table


@pytest.fixture(
    params=[
        pytest.param(PG, marks=pytest.mark.postgres, id="postgres"),
        pytest.param(MY, marks=pytest.mark.mysql, id="mysql"),
        pytest.param(DUCK, id="duckdb"),
    ]
)
def server(request, tmp_path, state_url) -> Iterator[tuple[str, Askbase, str]]:
    if request.param == DUCK:
        askbase, name = _duckdb(tmp_path, state_url)
        yield DUCK, askbase, name
        askbase.close()
        return
    url = server_url(request.param)
    table = f"gr_{uuid.uuid4().hex[:8]}_hosts"
    admin = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(40))"))
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (1, 'ams-1'), (2, 'ash-1'), (3, 'fra-2')"))
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        default_db="srv",
        databases={"srv": DatabaseSettings(url=url, statement_timeout_s=5)},
    )
    askbase = Askbase(settings)
    yield ("postgres" if request.param == PG else "mysql"), askbase, table
    askbase.close()
    with admin.connect() as conn:
        conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
    admin.dispose()


REGEXP = {"mysql": "name REGEXP '^a'", DUCK: "regexp_matches(name, '^a')"}


def test_regexp_questions_run_on_mariadb_and_huge_values_never_start(server):
    dialect, askbase, table = server
    if dialect in REGEXP:
        out = askbase.rerun(
            f"SELECT name FROM {table} WHERE {REGEXP[dialect]} ORDER BY id",
            database="srv",
            principal=ALICE,
            purpose="rerun",
        )
        assert out.status == "answer", out.error
        assert [r[0] for r in out.rows] == ["ams-1", "ash-1"]
    huge = (
        "SELECT CAST(array_fill(1, ARRAY[100000000]) AS TEXT)"
        if dialect == "postgres"
        else "SELECT REPEAT('x', 1000000000)"
    )
    out = askbase.rerun(huge, database="srv", principal=ALICE, purpose="rerun")
    assert out.status == "error" and out.error_kind == "guard", out.error  # refused before it ran
    assert "at most 20,000,000" in out.error  # the engine's byte cap
