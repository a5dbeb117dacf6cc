"""core/catalog.py: reflection, the YAML overlay, the on-disk cache, and SQLite's FK quirks.

Reflection is checked on the demo database, on SQLite files written to show the quirks, and on
real PostgreSQL and MariaDB when ASKBASE_TEST_POSTGRES_URL / ASKBASE_TEST_MYSQL_URL are set.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
import yaml
from sqlalchemy.dialects import mysql, postgresql
from sqlalchemy.dialects import sqlite as sqlite_dialect

import core.catalog as catalog_module
from core.catalog import Catalog, Pattern, column_kind, load_catalog, overlay, reflect
from core.connect import readonly_engine
from core.demo import CATALOG_PATH, ensure_demo
from tests.servers import server_url


@pytest.fixture(scope="module")
def demo_file(demo_var: Path) -> Path:
    """The session's demo file (tests/conftest.py builds it once); never written to."""
    return ensure_demo(demo_var)


@pytest.fixture
def demo_copy(demo_file: Path, tmp_path: Path) -> Path:
    """A private copy of the demo, for tests that change the schema."""
    path = tmp_path / "copy.sqlite"
    shutil.copyfile(demo_file, path)
    return path


@pytest.fixture
def engine_for() -> Iterator[Any]:
    engines: list[sa.Engine] = []

    def make(path: Path) -> sa.Engine:
        engines.append(readonly_engine(f"sqlite:///{path}"))
        return engines[-1]

    yield make
    for engine in engines:
        engine.dispose()


@pytest.fixture(scope="module")
def demo_reflected(demo_file: Path) -> Iterator[Catalog]:
    engine = readonly_engine(f"sqlite:///{demo_file}")
    yield reflect(engine, "demo")
    engine.dispose()


def sqlite_file(path: Path, ddl: str) -> Path:
    conn = sqlite3.connect(path)
    conn.executescript(ddl)
    conn.close()
    return path


# ---------------------------------------------------------------------------------------------
# reflection


def test_reflection_finds_every_table_key_and_foreign_key(demo_file: Path, demo_reflected: Catalog) -> None:
    conn = sqlite3.connect(demo_file)
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    declared = {
        (t, r[3], r[2], r[4]) for t in names for r in conn.execute(f"PRAGMA foreign_key_list({t})")
    }  # (table, column, ref_table, ref_column)
    conn.close()
    assert {t.name for t in demo_reflected.tables} == set(names)
    assert all(t.primary_key == ("id",) for t in demo_reflected.tables)
    assert all(t.column("id").primary_key for t in demo_reflected.tables)
    found = {(r.table, r.columns[0], r.ref_table, r.ref_columns[0]) for r in demo_reflected.relationships}
    assert found == declared
    assert len(declared) == 22
    assert all(r.origin == "declared" for r in demo_reflected.relationships)
    assert demo_reflected.dialect == "sqlite"


def test_reflection_tells_dates_numbers_and_text_apart(demo_reflected: Catalog) -> None:
    kind = {(t.name, c.name): c.kind for t in demo_reflected.tables for c in t.columns}
    assert kind["payment", "paid_on"] == "date"
    assert kind["usage", "month"] == "date"
    assert kind["pool_runtime", "sampled_at"] == "datetime"
    assert kind["payment_amount", "amount"] == "number"
    assert kind["location", "latitude"] == "number"
    assert kind["compute", "cpu_cores"] == "integer"
    assert kind["client", "name"] == "text"
    assert kind["datacenter", "code"] == "text"
    client = demo_reflected.table("CLIENT")  # lookups ignore case
    assert client is not None
    assert client.column("EMAIL").nullable and not client.column("name").nullable


def test_reflection_keeps_unique_constraints(demo_reflected: Catalog) -> None:
    assert ("pool_id", "client_id") in demo_reflected.table("pool_client").unique
    assert ("amount_id",) in demo_reflected.table("tax").unique
    assert ("invoice_no",) in demo_reflected.table("payment").unique


def test_row_estimates_are_close_to_real_counts(demo_file: Path, demo_reflected: Catalog) -> None:
    conn = sqlite3.connect(demo_file)
    for table in demo_reflected.tables:
        real = conn.execute(f'SELECT COUNT(*) FROM "{table.name}"').fetchone()[0]
        assert table.row_estimate == pytest.approx(real, rel=0.05), table.name
    conn.close()


@pytest.mark.filterwarnings("ignore:.*SQL-parsed foreign key constraint")  # SQLAlchemy notices the case too
def test_sqlite_foreign_keys_in_another_case_or_without_columns_resolve(
    tmp_path: Path, engine_for: Any
) -> None:
    path = sqlite_file(
        tmp_path / "quirks.sqlite",
        """
        CREATE TABLE Parent (ID INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE child (
            id INTEGER PRIMARY KEY,
            parent_id INTEGER REFERENCES PARENT,          -- other case, no column: the PK
            ghost_id INTEGER REFERENCES ghost (id)        -- no such table: dropped
        );
        CREATE TABLE other (id INTEGER PRIMARY KEY, pid INTEGER, FOREIGN KEY (PID) REFERENCES parent (id));
        CREATE TABLE pair (a INTEGER, b INTEGER, PRIMARY KEY (a, b));
        CREATE TABLE uses_pair (id INTEGER PRIMARY KEY, a INTEGER, b INTEGER, FOREIGN KEY (a, b) REFERENCES PAIR);
        CREATE TABLE bad_arity (id INTEGER PRIMARY KEY, a INTEGER REFERENCES pair); -- 1 column vs 2-column PK
        """,
    )
    found = {str(r) for r in reflect(engine_for(path), "quirks").relationships}
    assert found == {
        "child.parent_id → Parent.ID (declared)",
        "other.pid → Parent.ID (declared)",
        "uses_pair.a, uses_pair.b → pair.a, pair.b (declared)",
    }


def test_a_table_dropped_while_the_catalog_is_read_is_left_out(tmp_path: Path, engine_for: Any) -> None:
    """Other people change a live database while Askbase reads it (in CI, other tests share the server)."""
    path = sqlite_file(
        tmp_path / "live.sqlite",
        """
        CREATE TABLE keep (id INTEGER PRIMARY KEY, name TEXT);
        CREATE TABLE scratch (id INTEGER PRIMARY KEY, keep_id INTEGER REFERENCES keep (id));
        CREATE TABLE notes (id INTEGER PRIMARY KEY, scratch_id INTEGER REFERENCES scratch (id));
        """,
    )
    engine = engine_for(path)
    statements: list[str] = []

    def drop_once_listed(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        """Drop `scratch` just before the first statement that follows the table list."""
        listed = any("sqlite_master" in s and "type='table'" in s.replace(" ", "") for s in statements)
        if listed and not any(s == "DROP" for s in statements):
            statements.append("DROP")
            with sqlite3.connect(path) as other:
                other.execute("DROP TABLE scratch")
        statements.append(statement)

    sa.event.listen(engine, "before_cursor_execute", drop_once_listed)
    catalog = reflect(engine, "live")
    assert "DROP" in statements, "the table list was never read"
    assert [t.name for t in catalog.tables] == ["keep", "notes"]
    assert catalog.relationships == ()  # notes.scratch_id pointed at the dropped table


@pytest.mark.parametrize(
    ("type_", "kind"),
    [
        (sa.Integer(), "integer"),
        (sa.BigInteger(), "integer"),
        (sa.Numeric(10, 2), "number"),
        (sa.Float(), "number"),
        (sa.Date(), "date"),
        (sa.DateTime(), "datetime"),
        (sa.String(40), "text"),
        (sa.Text(), "text"),
        (sa.Boolean(), "boolean"),
        (sa.LargeBinary(), "binary"),
        (sa.types.NullType(), "text"),  # untyped SQLite column
        (sqlite_dialect.DATETIME(), "datetime"),
        (postgresql.UUID(), "other"),
        (postgresql.TIMESTAMP(timezone=True), "datetime"),
        (mysql.TINYINT(display_width=1), "boolean"),  # MySQL's BOOLEAN
        (mysql.TINYINT(display_width=4), "integer"),
    ],
)
def test_column_kind(type_: Any, kind: str) -> None:
    assert column_kind(type_) == kind


# ---------------------------------------------------------------------------------------------
# overlay


def test_overlay_adds_descriptions_synonyms_values_and_patterns(demo_reflected: Catalog) -> None:
    data = yaml.safe_load(CATALOG_PATH.read_text())
    cat = overlay(demo_reflected, data)
    client = cat.table("client")
    assert client.description == data["tables"]["client"]["description"]
    assert "customer" in client.synonyms
    assert client.column("status").values == {"ACT": "active", "SUS": "suspended", "CHN": "churned"}
    assert "postcode" in cat.table("location").column("zip_code").synonyms
    assert cat.table("compute").column("id").description == "Unique host identifier."  # plain-string note
    assert cat.description.startswith("Day-to-day operations")
    assert (
        Pattern(
            "many_to_many",
            "pool_client",
            ("client", "resource_pool"),
            description=data["patterns"][0]["description"],
        )
        in cat.patterns
    )
    assert cat.relationships == demo_reflected.relationships
    # the reflected catalog is left as it was
    assert demo_reflected.table("client").description == ""


def test_overlay_skips_what_the_database_does_not_have(
    demo_reflected: Catalog, caplog: pytest.LogCaptureFixture
) -> None:
    data = {
        "tables": {
            "CLIENT": {
                "description": "Customers.",
                "columns": {"Name": "Company name.", "nickname": "Gone."},
            },
            "ghost": {"description": "A table dropped last year."},
            "location": "Cities.",
        },
        "relationships": [
            {"from": "usage.pool_id, usage.client_id", "to": "pool_client.pool_id, pool_client.client_id"},
            {"from": "payment.client_id", "to": "client", "description": "duplicate of a declared FK"},
            {"from": "ghost.client_id", "to": "client.id"},
            {"from": "usage.nope", "to": "client.id"},
            {"to": "client.id"},
        ],
        "patterns": [
            {"kind": "lookup", "table": "LOCATION"},
            {"kind": "star", "root": "payment", "tables": ["payment_amount", "ghost"]},
            {"kind": "galaxy", "root": "payment", "tables": ["tax"]},
        ],
    }
    with caplog.at_level(logging.WARNING, logger="core.catalog"):
        cat = overlay(demo_reflected, data)
    warnings = "\n".join(r.getMessage() for r in caplog.records)
    assert "nickname" in warnings
    assert "ghost" in warnings
    assert "usage.nope" in warnings
    assert "galaxy" in warnings
    assert "'from' and 'to'" in warnings

    assert cat.table("client").description == "Customers."
    assert cat.table("client").column("name").description == "Company name."
    assert cat.table("location").description == "Cities."
    assert cat.table("ghost") is None
    assert [(p.kind, p.root) for p in cat.patterns] == [("lookup", "location")]
    extra = [r for r in cat.relationships if r.origin == "catalog"]
    assert [str(r) for r in extra] == [
        "usage.pool_id, usage.client_id → pool_client.pool_id, pool_client.client_id (catalog)"
    ]
    assert len(cat.relationships) == len(demo_reflected.relationships) + 1


def test_catalog_survives_a_round_trip_through_the_cache_format(demo_reflected: Catalog) -> None:
    cat = overlay(demo_reflected, yaml.safe_load(CATALOG_PATH.read_text()))
    assert Catalog.from_dict(cat.to_dict()) == cat


# ---------------------------------------------------------------------------------------------
# load_catalog and its cache


def test_second_load_comes_from_the_cache(
    demo_file: Path, tmp_path: Path, engine_for: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = engine_for(demo_file)
    first = load_catalog(engine, "demo", overlay_path=CATALOG_PATH, cache_dir=tmp_path)
    assert list(tmp_path.glob("*.catalog.json"))

    def no_reflection(*args: Any, **kwargs: Any) -> Catalog:
        raise AssertionError("reflected again although nothing changed")

    monkeypatch.setattr(catalog_module, "reflect", no_reflection)
    second = load_catalog(engine, "demo", overlay_path=CATALOG_PATH, cache_dir=tmp_path)
    assert second == first
    assert second.table("client").synonyms and second.patterns


def test_schema_change_is_noticed_on_the_next_load(demo_copy: Path, tmp_path: Path, engine_for: Any) -> None:
    engine = engine_for(demo_copy)
    cache = tmp_path / "cache"
    before = load_catalog(engine, "copy", overlay_path=CATALOG_PATH, cache_dir=cache)
    conn = sqlite3.connect(demo_copy)
    conn.execute(
        "CREATE TABLE invoice_dispute (id INTEGER PRIMARY KEY, payment_id INTEGER REFERENCES payment (id))"
    )
    conn.commit()
    conn.close()
    after = load_catalog(engine, "copy", overlay_path=CATALOG_PATH, cache_dir=cache)
    assert before.table("invoice_dispute") is None
    assert after.table("invoice_dispute") is not None
    assert after.signature != before.signature
    assert any(r.table == "invoice_dispute" and r.ref_table == "payment" for r in after.relationships)
    assert after.table("client").synonyms  # the overlay still applies


def test_overlay_change_is_noticed_on_the_next_load(demo_file: Path, tmp_path: Path, engine_for: Any) -> None:
    engine = engine_for(demo_file)
    overlay_file = tmp_path / "catalog.yaml"
    overlay_file.write_text("tables:\n  client:\n    description: Our customers.\n")
    assert (
        load_catalog(engine, "demo", overlay_path=overlay_file, cache_dir=tmp_path)
        .table("client")
        .description
        == "Our customers."
    )
    overlay_file.write_text("tables:\n  client:\n    description: Our tenants.\n")
    assert (
        load_catalog(engine, "demo", overlay_path=overlay_file, cache_dir=tmp_path)
        .table("client")
        .description
        == "Our tenants."
    )


def test_unreadable_cache_is_ignored(
    demo_file: Path, tmp_path: Path, engine_for: Any, caplog: pytest.LogCaptureFixture
) -> None:
    engine = engine_for(demo_file)
    (tmp_path / "demo.catalog.json").write_text('{"signature": ')
    with caplog.at_level(logging.WARNING, logger="core.catalog"):
        cat = load_catalog(engine, "demo", overlay_path=CATALOG_PATH, cache_dir=tmp_path)
    assert cat.table("client") is not None
    assert "unreadable catalog cache" in caplog.text
    assert Catalog.from_dict(json.loads((tmp_path / "demo.catalog.json").read_text())) == cat


def test_cache_that_cannot_be_written_only_costs_time(
    demo_file: Path, tmp_path: Path, engine_for: Any, caplog: pytest.LogCaptureFixture
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    with caplog.at_level(logging.WARNING, logger="core.catalog"):
        cat = load_catalog(engine_for(demo_file), "demo", cache_dir=blocker / "cache")
    assert cat.table("client") is not None
    assert "could not write catalog cache" in caplog.text


def load_at_once(engine: sa.Engine, cache: Path, threads: int) -> tuple[list[Catalog], list[BaseException]]:
    barrier = threading.Barrier(threads)
    results: list[Catalog] = []
    errors: list[BaseException] = []

    def load() -> None:
        barrier.wait()
        try:
            results.append(load_catalog(engine, "demo", overlay_path=CATALOG_PATH, cache_dir=cache))
        except BaseException as exc:
            errors.append(exc)

    workers = [threading.Thread(target=load) for _ in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return results, errors


def test_concurrent_loads_share_one_cache_directory(demo_file: Path, tmp_path: Path, engine_for: Any) -> None:
    # Web and worker processes (or several Database objects) may load the same catalog at once.
    engine = engine_for(demo_file)
    for round_ in range(3):  # a clash between writers shows up most rounds, not every one
        cache = tmp_path / str(round_)
        results, errors = load_at_once(engine, cache, threads=6)
        assert errors == []
        assert all(r == results[0] for r in results)
        assert sorted(p.name for p in cache.iterdir()) == ["demo.catalog.json"]


# ---------------------------------------------------------------------------------------------
# real PostgreSQL and MariaDB

POSTGRES_URL = os.environ.get("ASKBASE_TEST_POSTGRES_URL") and server_url("ASKBASE_TEST_POSTGRES_URL")
MYSQL_URL = os.environ.get("ASKBASE_TEST_MYSQL_URL") and server_url("ASKBASE_TEST_MYSQL_URL")


def _server_ddl(schema: str, serial: str, text: str, boolean: str) -> list[str]:
    return [
        f"CREATE TABLE {schema}.team (id {serial} PRIMARY KEY, name {text} NOT NULL, founded DATE)",
        f"""CREATE TABLE {schema}.player (
                id BIGINT PRIMARY KEY,
                team_id INTEGER NOT NULL,
                score NUMERIC(8, 2),
                joined_at TIMESTAMP NULL,
                active {boolean},
                UNIQUE (team_id, score),
                FOREIGN KEY (team_id) REFERENCES {schema}.team (id)
            )""",
        f"INSERT INTO {schema}.team (name, founded) VALUES ('Nordlicht', '2001-02-03'), ('Zürich FC', NULL), ('Lyon', '1950-01-01')",
        f"INSERT INTO {schema}.player (id, team_id, score, active) VALUES (1, 1, 2.5, TRUE), (2, 3, 7.25, FALSE)",
    ]


def _check_server_catalog(cat: Catalog, schema: str) -> None:
    assert {t.name for t in cat.tables} == {"team", "player"}
    team, player = cat.table("team"), cat.table("player")
    assert team.primary_key == ("id",) and player.primary_key == ("id",)
    assert team.schema == schema
    assert [str(r) for r in cat.relationships] == ["player.team_id → team.id (declared)"]
    kinds = {c.name: c.kind for c in player.columns}
    assert kinds == {
        "id": "integer",
        "team_id": "integer",
        "score": "number",
        "joined_at": "datetime",
        "active": "boolean",
    }
    assert {c.name: c.kind for c in team.columns} == {"id": "integer", "name": "text", "founded": "date"}
    assert ("team_id", "score") in player.unique
    assert team.row_estimate == 3


@pytest.fixture
def postgres_schema() -> Iterator[tuple[str, str]]:
    if not POSTGRES_URL:
        pytest.skip("ASKBASE_TEST_POSTGRES_URL is not set")
    schema = f"askbase_catalog_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(POSTGRES_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE SCHEMA {schema}"))
        for statement in _server_ddl(schema, "SERIAL", "TEXT", "BOOLEAN"):
            conn.execute(sa.text(statement))
        conn.execute(sa.text(f"ANALYZE {schema}.team"))
        conn.execute(sa.text(f"ANALYZE {schema}.player"))
    try:
        yield POSTGRES_URL, schema
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP SCHEMA {schema} CASCADE"))
        admin.dispose()


@pytest.fixture
def mysql_database() -> Iterator[tuple[str, str]]:
    if not MYSQL_URL:
        pytest.skip("ASKBASE_TEST_MYSQL_URL is not set")
    database = f"askbase_catalog_{uuid.uuid4().hex[:10]}"
    admin = sa.create_engine(MYSQL_URL)
    with admin.begin() as conn:
        conn.execute(sa.text(f"CREATE DATABASE {database} CHARACTER SET utf8mb4"))
        for statement in _server_ddl(database, "INTEGER AUTO_INCREMENT", "VARCHAR(80)", "BOOLEAN"):
            conn.execute(sa.text(statement))
        conn.execute(sa.text(f"ANALYZE TABLE {database}.team, {database}.player"))
    try:
        yield MYSQL_URL, database
    finally:
        with admin.begin() as conn:
            conn.execute(sa.text(f"DROP DATABASE {database}"))
        admin.dispose()


@pytest.mark.postgres
def test_reflect_postgresql(postgres_schema: tuple[str, str], tmp_path: Path) -> None:
    url, schema = postgres_schema
    engine = readonly_engine(url)
    try:
        with pytest.raises(sa.exc.DBAPIError, match="read-only"), engine.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE {schema}.nope (id INTEGER)"))
        cat = load_catalog(engine, f"pg-{schema}", schema=schema, cache_dir=tmp_path)
        assert cat.dialect == "postgres"
        _check_server_catalog(cat, schema)
        _check_schema_change_noticed(url, engine, schema, cat, tmp_path)
    finally:
        engine.dispose()


@pytest.mark.mysql
def test_reflect_mariadb(mysql_database: tuple[str, str], tmp_path: Path) -> None:
    url, database = mysql_database
    engine = readonly_engine(url)
    try:
        with pytest.raises(sa.exc.DBAPIError, match="READ ONLY"), engine.begin() as conn:
            conn.execute(sa.text(f"CREATE TABLE {database}.nope (id INTEGER)"))
        cat = load_catalog(engine, f"my-{database}", schema=database, cache_dir=tmp_path)
        assert cat.dialect == "mysql"
        _check_server_catalog(cat, database)
        _check_schema_change_noticed(url, engine, database, cat, tmp_path)
    finally:
        engine.dispose()


def _check_schema_change_noticed(
    url: str, engine: sa.Engine, schema: str, before: Catalog, cache: Path
) -> None:
    admin = sa.create_engine(url)
    try:
        with admin.begin() as conn:
            conn.execute(sa.text(f"ALTER TABLE {schema}.team ADD COLUMN city VARCHAR(40)"))
    finally:
        admin.dispose()
    after = load_catalog(engine, before.database, schema=schema, cache_dir=cache)
    assert after.signature != before.signature
    assert after.table("team").column("city") is not None
