"""Databricks SQL, Trino and Redshift at the connector boundary: their SQLAlchemy dialects and
Askbase run for real; the DB-API connection is a fake that records what is sent
(tests/fakes/dbapi.py) — these engines cannot run on this machine. What each connection is opened
with, what precedes every query (timeout, attribution, read-only), and that nothing but a query
is ever sent.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.attribution import Asker, asking, tracing
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.guard import check
from core.settings import DatabaseSettings
from tests.fakes.dbapi import FakeDriver

URLS = {
    "databricks": "databricks://token:secret@dbc.example.com?http_path=/sql/1.0/warehouses/abc&catalog=main&schema=sales",
    "trino": "trino://askbase@trino.example.com:8080/hive/sales",
    "redshift": "redshift+redshift_connector://askbase:secret@rs.example.com:5439/dev",
}
DRIVERS = {"databricks": "databricks.sql", "trino": "trino.dbapi", "redshift": "redshift_connector"}
SCHEMA = {"databricks": "sales", "trino": "sales", "redshift": "public"}


@pytest.fixture(params=sorted(URLS))
def warehouse(request, monkeypatch, tmp_path) -> Iterator[tuple[str, FakeDriver, Database]]:
    backend = request.param
    driver = FakeDriver(tables={"member": [("id", "BIGINT"), ("name", "VARCHAR"), ("city", "VARCHAR")]})
    driver.schema = SCHEMA[backend]
    module = __import__(DRIVERS[backend], fromlist=["connect"])
    monkeypatch.setattr(module, "connect", driver.connect)
    db = Database(
        name=backend,
        config=DatabaseSettings(url=URLS[backend], schemas=[SCHEMA[backend]]),
        var_dir=tmp_path,
    )
    yield backend, driver, db
    db.dispose()


def statements(driver: FakeDriver, after: int = 0) -> list[str]:
    return [" ".join(s.split()) for s in driver.sent[after:]]


def test_connections_name_askbase_and_carry_a_timeout(warehouse):
    backend, driver, db = warehouse
    execute(db, "SELECT 1 AS n")
    args = driver.connects[0]
    if backend == "trino":
        assert args["source"] == "askbase" and "askbase" in args["client_tags"]
        assert args["session_properties"]["query_max_execution_time"].endswith("s")
    elif backend == "databricks":
        assert args["user_agent_entry"].endswith("askbase")  # the dialect puts "sqlalchemy + " before it
        assert args["session_configuration"]["STATEMENT_TIMEOUT"].isdigit()
    else:
        assert args["application_name"] == "askbase"


EXPECTED_BEFORE = {
    "databricks": ["SET STATEMENT_TIMEOUT = 7"],
    "trino": ["SET SESSION query_max_execution_time = '7s'"],
    "redshift": [
        "SET TRANSACTION READ ONLY",
        "SET statement_timeout TO 7000",
        "SET query_group TO 'askbase;asker:U0123ALICE;trace:tr4ce'",
    ],
}


def test_every_query_is_preceded_by_its_timeout_and_attribution_and_rolled_back(warehouse):
    backend, driver, db = warehouse
    _ = db.catalog
    mark = len(driver.sent)
    with asking(Asker(user="U0123ALICE", source="slack")), tracing("tr4ce"):
        result = execute(db, "SELECT name FROM member WHERE id = 1", Limits(timeout_s=7))
    assert result.rows == [(1,)]
    sent = statements(driver, mark)
    query = sent.index("SELECT name FROM member WHERE id = 1")
    assert sent[query - len(EXPECTED_BEFORE[backend]) : query] == EXPECTED_BEFORE[backend]
    assert "<commit>" not in sent[query:]
    if backend == "redshift":  # the others run in autocommit: their dialects never roll back
        assert "<rollback>" in sent[query:]
    if backend == "trino":  # Trino sends the connection's client tags with the query
        assert driver.tags[mark + query] == ["askbase", "asker:U0123ALICE", "trace:tr4ce"]


@pytest.mark.parametrize(
    "sql",
    [
        "DELETE FROM member",
        "INSERT INTO member VALUES (1, 'x', 'y')",
        "CREATE TABLE x AS SELECT * FROM member",
        "SELECT 1; DROP TABLE member",
        "SET SESSION query_max_execution_time = '1d'",
        "CALL system.runtime.kill_query('q')",
        "COPY INTO member FROM 's3://bucket/x'",
        "MERGE INTO member USING other ON member.id = other.id WHEN MATCHED THEN DELETE",
    ],
)
def test_anything_but_a_query_never_reaches_the_warehouse(warehouse, sql):
    _, driver, db = warehouse
    _ = db.catalog
    mark = len(driver.sent)
    with pytest.raises(QueryError):
        execute(db, sql)
    assert sql not in driver.sent[mark:]


def test_the_catalog_is_read_in_bulk_and_the_guard_speaks_the_dialect(warehouse):
    backend, driver, db = warehouse
    catalog = db.catalog
    assert [c.name for c in catalog.tables[0].columns] == ["id", "name", "city"]
    assert sum("information_schema.columns" in s.lower() for s in driver.sent) <= 2
    dialect = catalog.dialect
    assert dialect == {"databricks": "databricks", "trino": "trino", "redshift": "redshift"}[backend]
    assert check("SELECT city, count(*) FROM member GROUP BY city", dialect).allowed
    for attack in (
        "SELECT * FROM member; DELETE FROM member",
        "SELECT * FROM information_schema.tables",
        "SELECT current_user",
    ):
        assert not check(attack, dialect).allowed, attack
