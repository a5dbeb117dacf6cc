"""The database-level defence, with the guard bypassed: SQL goes straight to the executor.

What this proves on real PostgreSQL and MariaDB (and SQLite):
- with the account the tests are given (a superuser on a developer machine), the executor alone
  stops every write, every session change that would allow one, second statements and COPY;
- with the least-privileged account docs/security.md sets up, the database itself also refuses
  every file function (pg_read_file, COPY ... PROGRAM, LOAD_FILE, INTO OUTFILE);
- the data is the same afterwards and no file was read or written;
- a connection killed mid-query is retried once on a fresh connection, then reported clearly;
- Askbase warns when its account may do more than read.
"""

from __future__ import annotations

import logging
import os
import secrets
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.access import privilege_problems
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.settings import DatabaseSettings
from tests.servers import server_url

PG = "ASKBASE_TEST_POSTGRES_URL"
MY = "ASKBASE_TEST_MYSQL_URL"
SERVERS = [pytest.param(PG, marks=pytest.mark.postgres), pytest.param(MY, marks=pytest.mark.mysql)]
PASSWD_LINE = "root:"  # what /etc/passwd starts with


@dataclass
class Server:
    env: str
    admin: sa.Engine
    table: str
    marker_dir: Path

    @property
    def postgres(self) -> bool:
        return self.env == PG

    def database(self, url: str, tmp_path: Path) -> Database:
        return Database(name="defence", config=DatabaseSettings(url=url), var_dir=tmp_path)

    def content(self) -> list[tuple]:
        with self.admin.connect() as conn:
            return [tuple(r) for r in conn.execute(sa.text(f"SELECT id, name FROM {self.table} ORDER BY id"))]

    def tables(self) -> set[str]:
        """This test's tables (every attack names its table), plus (PostgreSQL) how many large objects
        exist: what a write would change. Other tests' tables are left out: they come and go on the
        shared server while this one runs (other xdist workers, other checkouts)."""
        names = {
            t.lower() for t in sa.inspect(self.admin).get_table_names() if t.lower().startswith(self.table)
        }
        if self.postgres:
            with self.admin.connect() as conn:
                count = conn.execute(sa.text("SELECT count(*) FROM pg_largeobject_metadata")).scalar()
            names.add(f"large objects: {count}")
        return names


@pytest.fixture(params=SERVERS)
def server(request, tmp_path) -> Iterator[Server]:
    env = request.param
    admin = sa.create_engine(server_url(env), isolation_level="AUTOCOMMIT")
    table = f"askbase_def_{uuid.uuid4().hex[:8]}"
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE TABLE {table} (id INTEGER PRIMARY KEY, name VARCHAR(40))"))
        conn.execute(sa.text(f"INSERT INTO {table} VALUES (1, 'alpha'), (2, 'beta')"))
    yield Server(env, admin, table, tmp_path)
    with admin.connect() as conn:
        conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}"))
        conn.execute(sa.text(f"DROP TABLE IF EXISTS {table}_new"))
    admin.dispose()


@pytest.fixture
def least_privileged(server) -> Iterator[str]:
    """The read-only account of docs/security.md, for this test's table only; yields its URL."""
    name = f"askbase_ro_{uuid.uuid4().hex[:8]}"
    password = secrets.token_hex(12)
    url = make_url(server_url(server.env))
    with server.admin.connect() as conn:
        if server.postgres:
            conn.execute(
                sa.text(f"CREATE ROLE {name} LOGIN PASSWORD '{password}' NOSUPERUSER NOCREATEDB NOCREATEROLE")
            )
            conn.execute(sa.text(f'GRANT CONNECT ON DATABASE "{url.database}" TO {name}'))
            conn.execute(sa.text(f"GRANT USAGE ON SCHEMA public TO {name}"))
            conn.execute(sa.text(f"GRANT SELECT ON {server.table} TO {name}"))
            conn.execute(sa.text(f"ALTER ROLE {name} SET default_transaction_read_only = on"))
        else:
            conn.execute(sa.text(f"CREATE USER '{name}'@'%' IDENTIFIED BY '{password}'"))
            conn.execute(sa.text(f"GRANT SELECT ON `{url.database}`.`{server.table}` TO '{name}'@'%'"))
    try:
        yield url.set(username=name, password=password).render_as_string(hide_password=False)
    finally:
        with server.admin.connect() as conn:
            if server.postgres:
                conn.execute(
                    sa.text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = :n"),
                    {"n": name},
                )
                conn.execute(sa.text(f"DROP OWNED BY {name}"))
                conn.execute(sa.text(f"DROP ROLE {name}"))
            else:
                conn.execute(sa.text(f"DROP USER '{name}'@'%'"))


def refused(db: Database, sql: str) -> QueryError | None:
    """The error the executor raised, or None when the statement ran."""
    try:
        execute(db, sql, Limits(timeout_s=5))
    except QueryError as exc:
        return exc
    return None


# Statements that change data or schema, or try to make the session writable first. Each list
# runs in order on one pool: a session change that survived would let the following write through.
# A few are ordinary SELECTs that PostgreSQL runs even in a read-only transaction (set_config,
# creating a large object): the executor always rolls back, so they must leave nothing behind.
MAY_RUN = ("SELECT set_config(", "SELECT lo_from_bytea(")


def writes(s: Server) -> list[str]:
    t = s.table
    common = [
        f"DELETE FROM {t}",
        f"UPDATE {t} SET name = 'pwned'",
        f"INSERT INTO {t} VALUES (3, 'gamma')",
        f"DROP TABLE {t}",
        f"CREATE TABLE {t}_new (a INTEGER)",
        f"TRUNCATE TABLE {t}",
        f"ALTER TABLE {t} ADD COLUMN pwned INTEGER",
        f"SELECT id FROM {t}; DELETE FROM {t}",
        f"SELECT id FROM {t} FOR UPDATE",
        "COMMIT",
        f"DELETE FROM {t}",
    ]
    if s.postgres:
        return [
            *common,
            "SET SESSION CHARACTERISTICS AS TRANSACTION READ WRITE",
            f"DELETE FROM {t}",
            "SET default_transaction_read_only = off",
            f"DELETE FROM {t}",
            "SELECT set_config('default_transaction_read_only', 'off', false)",
            f"DELETE FROM {t}",
            "SET transaction_read_only = off",
            f"WITH gone AS (DELETE FROM {t} RETURNING *) SELECT * FROM gone",
            "SELECT lo_from_bytea(0, 'x'::bytea)",
            f"COPY {t} FROM PROGRAM 'echo 9,x'",
        ]
    return [
        *common,
        "SET SESSION TRANSACTION READ WRITE",
        f"DELETE FROM {t}",
        "SET SESSION tx_read_only = 0",
        f"DELETE FROM {t}",
        "SET autocommit = 1",
        f"DELETE FROM {t}",
        f"REPLACE INTO {t} VALUES (1, 'pwned')",
    ]


def file_attacks(s: Server) -> list[str]:
    marker = s.marker_dir / "written-by-the-database"
    if s.postgres:
        return [
            "SELECT pg_read_file('/etc/passwd')",
            "SELECT pg_read_binary_file('/etc/passwd')",
            "SELECT pg_ls_dir('/')",
            "SELECT pg_stat_file('/etc/passwd')",
            "SELECT lo_import('/etc/passwd')",
            f"COPY (SELECT 1) TO PROGRAM 'touch {marker}'",
            f"COPY (SELECT 1) TO '{marker}'",
            "COPY (SELECT 1) FROM PROGRAM 'cat /etc/passwd'",
        ]
    return [
        "SELECT LOAD_FILE('/etc/passwd')",
        f"SELECT id FROM {s.table} INTO OUTFILE '{marker}'",
        f"SELECT id FROM {s.table} INTO DUMPFILE '{marker}'",
        f"LOAD DATA INFILE '/etc/passwd' INTO TABLE {s.table}",
    ]


def assert_unchanged(server: Server, before_tables: set[str]) -> None:
    assert server.content() == [(1, "alpha"), (2, "beta")]
    assert server.tables() == before_tables
    assert not (server.marker_dir / "written-by-the-database").exists()


@pytest.mark.parametrize("account", ["configured", "least-privileged"])
def test_writes_and_session_tricks_change_nothing(server, request, tmp_path, account):
    url = server_url(server.env) if account == "configured" else request.getfixturevalue("least_privileged")
    db = server.database(url, tmp_path)
    before = server.tables()
    try:
        for sql in writes(server):
            error = refused(db, sql)
            assert error is not None or sql.startswith(MAY_RUN), f"ran: {sql}"
            assert server.content() == [(1, "alpha"), (2, "beta")], f"changed by: {sql}"
            assert server.tables() == before, f"changed by: {sql}"
        assert execute(db, f"SELECT name FROM {server.table} ORDER BY id").rows == [("alpha",), ("beta",)]
    finally:
        db.dispose()
    assert_unchanged(server, before)


def test_a_least_privileged_account_reads_no_file(server, least_privileged, tmp_path):
    db = server.database(least_privileged, tmp_path)
    before = server.tables()
    try:
        for sql in file_attacks(server):
            try:
                result = execute(db, sql, Limits(timeout_s=5))
            except QueryError:
                continue
            # MariaDB's LOAD_FILE answers NULL when the FILE privilege is missing
            assert result.rows == [(None,)], f"{sql} returned {result.rows!r}"
        assert privilege_problems(db.engine) == []
    finally:
        db.dispose()
    assert_unchanged(server, before)


def test_a_superuser_or_file_privileged_account_is_warned_about(server, tmp_path, caplog):
    db = server.database(server_url(server.env), tmp_path)
    try:
        with sa.create_engine(server_url(server.env)).connect() as conn:
            mighty = (
                conn.execute(sa.text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")).scalar()
                if server.postgres
                else any(
                    "FILE" in g or "ALL PRIVILEGES" in g for (g,) in conn.execute(sa.text("SHOW GRANTS"))
                )
            )
        if not mighty:
            pytest.skip("the configured test account is already least-privileged")
        with caplog.at_level(logging.WARNING, logger="core.execute"):
            execute(db, "SELECT 1")
            execute(db, "SELECT 2")
        warnings = [r.getMessage() for r in caplog.records if "read-only account" in r.getMessage()]
        assert len(warnings) == 1  # once per database, not per query
    finally:
        db.dispose()


# ---------------------------------------------------------------- dropped connections


def _killer(server: Server, marker: str, times: int) -> tuple[threading.Thread, list[int]]:
    """Kill the connection running the query tagged `marker`, up to `times` times (one per run)."""
    killed: list[int] = []

    def run() -> None:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and len(killed) < times:
            with server.admin.connect() as conn:
                if server.postgres:
                    ids = conn.execute(
                        sa.text(
                            "SELECT pid FROM pg_stat_activity WHERE application_name = :m "
                            "AND state = 'active' AND pid <> pg_backend_pid()"
                        ),
                        {"m": marker},
                    ).scalars()
                    for pid in ids:
                        conn.execute(sa.text("SELECT pg_terminate_backend(:p)"), {"p": pid})
                        killed.append(pid)
                else:
                    ids = conn.execute(
                        sa.text(
                            "SELECT ID FROM information_schema.PROCESSLIST "
                            "WHERE INFO LIKE :m AND ID <> CONNECTION_ID()"
                        ),
                        {"m": f"%'{marker}'%"},
                    ).scalars()
                    for pid in ids:
                        conn.execute(sa.text(f"KILL CONNECTION {int(pid)}"))
                        killed.append(pid)
            time.sleep(0.05)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, killed


def _slow(server: Server, marker: str) -> str:
    sleep = "pg_sleep(1) IS NULL" if server.postgres else "SLEEP(1)"
    return f"SELECT {sleep} AS slept, '{marker}' AS tag"


def _tagged_url(server: Server, marker: str) -> str:
    url = make_url(server_url(server.env))
    if server.postgres:  # find the backend by its application name (the cursor hides the SQL)
        url = url.update_query_dict({"application_name": marker})
    return url.render_as_string(hide_password=False)


def test_a_connection_killed_mid_query_is_retried_once(server, tmp_path):
    marker = f"askbase_{uuid.uuid4().hex[:8]}"
    db = server.database(_tagged_url(server, marker), tmp_path)
    try:
        thread, killed = _killer(server, marker, times=1)
        result = execute(db, _slow(server, marker), Limits(timeout_s=10))
        thread.join()
        assert len(killed) == 1
        assert result.rows[0][1] == marker  # the answer arrived on a fresh connection
    finally:
        db.dispose()


def test_a_connection_killed_twice_is_a_clear_connection_error(server, tmp_path):
    marker = f"askbase_{uuid.uuid4().hex[:8]}"
    db = server.database(_tagged_url(server, marker), tmp_path)
    try:
        thread, killed = _killer(server, marker, times=2)
        with pytest.raises(QueryError) as info:
            execute(db, _slow(server, marker), Limits(timeout_s=10))
        thread.join()
        assert info.value.kind == "connection" and len(killed) == 2  # bounded: one retry only
        assert execute(db, "SELECT 1").rows[0][0] == 1  # the pool recovers for the next question
    finally:
        db.dispose()


# ---------------------------------------------------------------- SQLite


def test_sqlite_refuses_files_attachments_and_writes(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT)")
        conn.execute("INSERT INTO item VALUES (1, 'alpha')")
    before = path.read_bytes()
    db = Database(name="shop", config=DatabaseSettings(url=f"sqlite:///{path}"), var_dir=tmp_path)
    attacks = [
        "DELETE FROM item",
        "CREATE TABLE x (a)",
        "CREATE TEMP TABLE x (a)",
        f"ATTACH DATABASE '{tmp_path / 'attached.sqlite'}' AS other",
        f"VACUUM INTO '{tmp_path / 'copy.sqlite'}'",
        "PRAGMA query_only = OFF",
        "PRAGMA writable_schema = ON",
        "SELECT load_extension('/tmp/evil')",
        "SELECT readfile('/etc/passwd')",
        "BEGIN IMMEDIATE",
        "SELECT 1; DELETE FROM item",
    ]
    try:
        for sql in attacks:
            assert refused(db, sql) is not None, f"ran: {sql}"
        assert execute(db, "SELECT name FROM item").rows == [("alpha",)]
    finally:
        db.dispose()
    assert path.read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["shop.sqlite"]
