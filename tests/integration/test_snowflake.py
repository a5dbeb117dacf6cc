"""Snowflake through snowflake-sqlalchemy and the real connector, against fakesnow (a Snowflake
emulation on DuckDB, tests/snowflake_emulation.py): reflection, the guard, read-only and
attribution.

What fakesnow cannot emulate is checked at the connector boundary, on what the connector sent
(tests/fakes/fakesnow_server.py records every statement): `ALTER SESSION SET QUERY_TAG = ...,
STATEMENT_TIMEOUT_IN_SECONDS = ...` before every query (fakesnow does not implement ALTER SESSION,
the recording server answers it), and Snowflake's own statement timeout (not enforced by fakesnow).
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from core.askbase import Askbase
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.guard import check
from core.settings import DatabaseSettings, load_settings
from tests.paths import ROOT
from tests.snowflake_emulation import PYTHON, Emulation, emulation

pytestmark = pytest.mark.skipif(
    not PYTHON.exists(), reason="needs .venv-fakesnow (make fakesnow, or .ci/run, creates it)"
)

SETUP = [
    "CREATE DATABASE IF NOT EXISTS shop",
    "USE DATABASE shop",
    "CREATE SCHEMA IF NOT EXISTS sales",
    "USE SCHEMA sales",
    "CREATE OR REPLACE TABLE city (id INT PRIMARY KEY, name VARCHAR NOT NULL)",
    "CREATE OR REPLACE TABLE member (id INT PRIMARY KEY, name VARCHAR, email VARCHAR, tax_id VARCHAR, "
    "city_id INT, joined DATE)",
    "INSERT INTO city VALUES (1, 'Zurich'), (2, 'Bern')",
    "INSERT INTO member VALUES (1, 'Ann', 'ann@example.com', 'T-1', 1, '2024-01-05'), "
    "(2, 'Bob', 'bob@example.com', 'T-2', 1, '2024-02-07'), (3, 'Cid', 'cid@example.com', 'T-3', 2, '2025-03-01')",
    "CREATE OR REPLACE VIEW member_names AS SELECT name FROM member",
]


@pytest.fixture(scope="module")
def snow(tmp_path_factory) -> Iterator[Emulation]:
    with emulation(tmp_path_factory.mktemp("fakesnow")) as emu:
        conn = emu.connect()
        try:
            cur = conn.cursor()
            for sql in SETUP:
                cur.execute(sql)
        finally:
            conn.close()
        yield emu


@pytest.fixture
def shop(snow, tmp_path) -> Iterator[Database]:
    db = Database(
        name="shop",
        config=DatabaseSettings(
            url=snow.url("shop", "sales"),
            warehouse={"connect": snow.connect_args},
            deny_columns=["member.tax_id"],
            mask_columns=["member.email"],
        ),
        var_dir=tmp_path,
    )
    yield db
    db.dispose()


def queries_after(snow: Emulation, mark: int) -> list[str]:
    return [e["sql"] for e in snow.sent()[mark:] if "sql" in e]


def test_reflection_reads_the_schema_in_bulk(shop, snow):
    mark = len(snow.sent())
    catalog = shop.catalog
    assert catalog.dialect == "snowflake"
    assert sorted(t.name for t in catalog.tables) == ["CITY", "MEMBER"]
    member = catalog.table("member")
    assert member is not None and member.primary_key == ("ID",)
    assert [(c.name, c.kind) for c in member.columns][:2] == [("ID", "integer"), ("NAME", "text")]
    assert [v.name for v in catalog.views] == ["MEMBER_NAMES"]
    sent = queries_after(snow, mark)
    # a handful of queries whatever the number of tables: no call per table
    assert sum("information_schema.columns" in q.lower() for q in sent) <= 2
    assert not any("where table_name" in q.lower() for q in sent)


def test_every_query_names_askbase_the_asker_and_the_trace(shop, snow, settings):
    mark = len(snow.sent())
    app = Askbase(settings)
    try:
        outcome = app.ask("how many members are there?", db=shop, source="slack", user="U0123ALICE")
    finally:
        app.close()
    assert outcome.status == "answer", outcome.error
    assert outcome.rows == [(3,)]
    sent = queries_after(snow, mark)
    selects = [i for i, q in enumerate(sent) if q.lstrip().upper().startswith("SELECT COUNT")]
    assert selects
    for i in selects:
        before = sent[i - 1]
        assert before.startswith("ALTER SESSION SET QUERY_TAG = '")
        tag = json.loads(before.split("'", 2)[1])
        assert tag["app"] == "askbase" and tag["asker"] == "U0123ALICE" and tag["source"] == "slack"
        assert tag["trace"] == outcome.trace.id
        assert "STATEMENT_TIMEOUT_IN_SECONDS = " in before


def test_the_statement_timeout_is_the_query_s_own(shop, snow):
    mark = len(snow.sent())
    execute(shop, "SELECT 1 AS one", Limits(timeout_s=7))
    # (the dialect itself sends ALTER SESSION SET autocommit=false on a new connection)
    [alter] = [q for q in queries_after(snow, mark) if q.startswith("ALTER SESSION SET QUERY_TAG")]
    assert alter.endswith("STATEMENT_TIMEOUT_IN_SECONDS = 7")


def test_the_connection_allows_one_statement_and_names_the_application(shop, snow):
    mark = len(snow.sent())
    execute(shop, "SELECT 1 AS one")
    logins = [e["login"] for e in snow.sent()[mark:] if "login" in e]
    assert logins and all(str(lg.get("MULTI_STATEMENT_COUNT")) == "1" for lg in logins)


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM member",
        "UPDATE member SET name = 'x'",
        "CREATE TABLE x (a INT)",
        "DROP TABLE member",
        "SELECT 1; DELETE FROM member",
        "COPY INTO member FROM @stage",
        "CALL system$wait(10)",
        "EXECUTE IMMEDIATE 'DELETE FROM member'",
        "ALTER SESSION SET QUERY_TAG = 'other'",
    ],
)
def test_anything_but_a_query_never_reaches_snowflake(shop, snow, sql):
    mark = len(snow.sent())
    with pytest.raises(QueryError):
        execute(shop, sql)
    assert not any(q == sql for q in queries_after(snow, mark))
    assert execute(shop, "SELECT count(*) FROM member").rows == [(3,)]


def test_guard_masks_and_denials_hold_on_snowflake(shop):
    assert execute(shop, "SELECT name FROM member WHERE id = 1").rows == [("Ann",)]
    masked = execute(shop, "SELECT name, email FROM member ORDER BY id")
    assert masked.masked and "ann@example.com" not in repr(masked.rows)
    from core.run import guard_policy

    policy = guard_policy(shop, load_settings().engine)
    assert not check("SELECT tax_id FROM member", "snowflake", policy).allowed
    assert not check("SELECT name FROM member WHERE email LIKE 'a%'", "snowflake", policy).allowed
    for attack in (
        "SELECT * FROM @my_stage",
        "SELECT system$whitelist()",
        "SELECT * FROM TABLE(RESULT_SCAN(LAST_QUERY_ID()))",
        "SELECT * FROM snowflake.account_usage.query_history",
    ):
        assert not check(attack, "snowflake", policy).allowed, attack


def test_snowflake_answers_in_keyword_mode_end_to_end(shop, settings):
    app = Askbase(settings)
    try:
        outcome = app.ask("how many members per city?", db=shop)
    finally:
        app.close()
    assert outcome.status == "answer", outcome.error
    assert sorted(outcome.rows) in ([("Bern", 1), ("Zurich", 2)], [(1, 2), (2, 1)])


def test_the_docs_role_grants_select_only() -> None:
    text = (ROOT / "docs" / "warehouses.md").read_text()
    section = text.split("## Snowflake", 1)[1].split("\n## ", 1)[0]
    grants = [line for line in section.splitlines() if line.strip().upper().startswith("GRANT ")]
    assert grants and all(
        any(word in line.upper() for word in ("USAGE", "SELECT", "ROLE ASKBASE_RO TO")) for line in grants
    ), grants
