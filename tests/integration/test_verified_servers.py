"""Verified reuse on real PostgreSQL and MariaDB: the parameters of server SQL (typed DATE literals),
their substitution in that dialect, and the probe that flags a query after a schema change.

Runs where ASKBASE_TEST_POSTGRES_URL / ASKBASE_TEST_MYSQL_URL are set (CI sets them); each test
copies the demo's clients and payments into a database of its own and drops it afterwards.
"""

from __future__ import annotations

import os
import sqlite3
import uuid
from collections.abc import Iterator

import pytest
import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.access import Principal
from core.askbase import Askbase
from core.settings import DatabaseSettings, load_settings
from core.state import verified as verified_store

SERVERS = [
    pytest.param("ASKBASE_TEST_POSTGRES_URL", marks=pytest.mark.postgres),
    pytest.param("ASKBASE_TEST_MYSQL_URL", marks=pytest.mark.mysql),
]
TABLES = {
    "client": [("id", "INTEGER PRIMARY KEY"), ("name", "VARCHAR(200)"), ("segment", "VARCHAR(40)")],
    "payment": [("id", "INTEGER PRIMARY KEY"), ("client_id", "INTEGER REFERENCES client (id)"),
                ("paid_on", "DATE"), ("method", "VARCHAR(20)"), ("status", "VARCHAR(20)")],
}  # fmt: skip
SETTLED_2025 = (
    "SELECT COUNT(*) AS payments FROM payment WHERE status = 'settled' "
    "AND paid_on >= DATE '2025-01-01' AND paid_on < DATE '2026-01-01'"
)
ALICE = Principal.of(user="U1", channel="C1")


@pytest.fixture(params=SERVERS)
def server(request, demo_var) -> Iterator[str]:
    """A fresh database on the server holding the demo's clients and payments; its URL."""
    base = os.environ[request.param]
    name = f"askbase_vq_{uuid.uuid4().hex[:8]}"
    admin = sa.create_engine(base, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {name}"))
    url = make_url(base).set(database=name).render_as_string(hide_password=False)
    writer = sa.create_engine(url)
    try:
        with sqlite3.connect(demo_var / "demo.sqlite") as src, writer.begin() as conn:
            for table, columns in TABLES.items():
                conn.execute(sa.text(f"CREATE TABLE {table} ({', '.join(f'{c} {t}' for c, t in columns)})"))
                names = [c for c, _ in columns]
                data = src.execute(f"SELECT {', '.join(names)} FROM {table}").fetchall()
                insert = (
                    f"INSERT INTO {table} ({', '.join(names)}) VALUES ({', '.join(':' + n for n in names)})"
                )
                conn.execute(sa.text(insert), [dict(zip(names, r, strict=True)) for r in data])
        writer.dispose()
        yield url
    finally:
        writer.dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f"DROP DATABASE {name}"))
        admin.dispose()


def by_hand(demo_var, status: str, year: int) -> int:
    with sqlite3.connect(demo_var / "demo.sqlite") as conn:
        return conn.execute(
            "SELECT COUNT(*) FROM payment WHERE status = ? AND paid_on >= ? AND paid_on < ?",
            (status, f"{year}-01-01", f"{year + 1}-01-01"),
        ).fetchone()[0]


def test_a_verified_server_query_takes_new_values_and_goes_stale_after_a_schema_change(
    server, demo_var, tmp_path, state_url
):
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={"srv": DatabaseSettings(url=server)},
        verified={"schema_check_s": 0},
        cache={"window_s": 0},
    )
    askbase = Askbase(settings)
    try:
        db = askbase.database("srv")
        verified = askbase.trusted.verify(
            db, "How many settled payments were there in 2025?", SETTLED_2025, "U0A"
        )
        assert [p.name for p in verified.query.params] == ["status", "year"]

        out = askbase.ask("How many failed payments were there in 2024?", db="srv", principal=ALICE)
        assert out.reuse is not None and out.reuse.verified_id == verified.query.id
        assert "'failed'" in out.sql and "2024-01-01" in out.sql and "2025-01-01" in out.sql
        assert int(out.rows[0][0]) == by_hand(demo_var, "failed", 2024)

        migration = sa.create_engine(server)
        with migration.begin() as conn:
            conn.execute(sa.text("ALTER TABLE payment RENAME COLUMN status TO state"))
        migration.dispose()
        later = askbase.ask("How many failed payments were there in 2024?", db="srv", principal=ALICE)
        assert later.reuse is None
        assert verified_store.get(askbase.state, verified.query.id).stale
    finally:
        askbase.close()
