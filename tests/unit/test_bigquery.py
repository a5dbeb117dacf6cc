"""BigQuery at the client boundary: sqlalchemy-bigquery and google-cloud-bigquery run for real, the
client that would call Google is a fake that records every job configuration
(tests/fakes/bigquery_client.py). Every query is priced by a dry run first and refused over the
cap, billed at most the cap, labelled and timed out.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import sqlalchemy as sa

from core.askbase import Askbase
from core.attribution import Asker, asking, tracing
from core.database import Database
from core.execute import Limits, QueryError, execute
from core.settings import DatabaseSettings
from core.warehouse.sessions import warehouse_engine
from tests.fakes.bigquery_client import FakeClient

CAP = 5_000_000_000  # 5 GB


@pytest.fixture
def client() -> FakeClient:
    fake = FakeClient(dataset="shop")
    fake.db.execute("CREATE TABLE member (id BIGINT, name VARCHAR, city VARCHAR)")
    fake.db.execute(
        "INSERT INTO member VALUES (1, 'Ann', 'Zurich'), (2, 'Bob', 'Zurich'), (3, 'Cid', 'Bern')"
    )
    return fake


@pytest.fixture
def shop(client, tmp_path) -> Iterator[Database]:
    db = Database(
        name="shop",
        config=DatabaseSettings(url="bigquery://proj/shop", warehouse={"max_bytes_billed": CAP}),
        var_dir=tmp_path,
    )
    # Askbase's engine for the URL, with the fake client handed over the way sqlalchemy-bigquery
    # takes a client of the caller's (the settings cannot hold an object)
    url = sa.engine.make_url("bigquery://proj/shop?user_supplied_client=true")
    db.__dict__["engine"] = warehouse_engine(url, db.config.warehouse, {"client": client})
    yield db
    db.dispose()


def test_every_job_is_priced_first_billed_at_most_the_cap_labelled_and_timed(shop, client):
    with asking(Asker(user="U0123ALICE", source="slack")), tracing("abc123trace"):
        result = execute(
            shop, "SELECT name FROM member WHERE city = 'Zurich' ORDER BY id", Limits(timeout_s=12)
        )
    assert result.rows == [("Ann",), ("Bob",)]
    ours = [j for j in client.jobs if "member" in j.sql]
    dry, run = ours
    assert dry.config is not None and dry.config.dry_run and not dry.config.use_query_cache
    assert run.config is not None and not run.config.dry_run
    assert run.config.maximum_bytes_billed == CAP and dry.config.maximum_bytes_billed == CAP
    for job in (dry, run):
        assert job.config is not None
        assert job.config.labels == {
            "app": "askbase",
            "asker": "u0123alice",
            "source": "slack",
            "trace": "abc123trace",
        }
    assert int(run.config.job_timeout_ms) == 12_000 and run.timeout == 12


def test_a_query_whose_dry_run_is_over_the_cap_is_refused_before_it_runs(shop, client):
    client.bytes_for = lambda sql: 12_300_000_000 if "member" in sql else 0
    with pytest.raises(QueryError) as info:
        execute(shop, "SELECT * FROM member")
    assert info.value.kind == "too_large"
    assert "12.3 GB" in info.value.message and "5.0 GB" in info.value.message
    assert not [j for j in client.queries if "member" in j.sql]  # only the dry run was sent


def test_anything_but_a_query_never_reaches_bigquery(shop, client):
    for sql in (
        "DELETE FROM member WHERE true",
        "EXPORT DATA OPTIONS (uri = 'gs://b/*.csv') AS SELECT * FROM member",
        "SELECT 1; SELECT 2",
        "DECLARE x INT64",
    ):
        with pytest.raises(QueryError):
            execute(shop, sql)
        assert not [j for j in client.jobs if j.sql == sql]


def test_reflection_and_a_keyword_answer_on_bigquery(shop, client, settings):
    catalog = shop.catalog
    assert catalog.dialect == "bigquery"
    assert [(c.name, c.kind) for c in catalog.tables[0].columns] == [
        ("id", "integer"),
        ("name", "text"),
        ("city", "text"),
    ]
    app = Askbase(settings)
    try:
        outcome = app.ask("how many members per city?", db=shop, source="slack", user="U1")
    finally:
        app.close()
    assert outcome.status == "answer", outcome.error
    assert sorted(outcome.rows) == [("Bern", 1), ("Zurich", 2)]
    # every job of the engine, the catalog's and the samples' too, is billed at most the cap
    assert client.jobs and all(
        j.config is not None
        and int(j.config.maximum_bytes_billed) <= CAP
        and j.config.labels["app"] == "askbase"
        for j in client.jobs
    )
    # the value index read each column from a sample BigQuery bills a share of
    distinct = [j.sql for j in client.queries if j.sql.startswith("SELECT DISTINCT")]
    assert distinct and all("TABLESAMPLE SYSTEM (" in sql for sql in distinct)
    [answer] = [j for j in client.queries if j.sql.startswith("SELECT city, COUNT(*)")]
    assert answer.config is not None and answer.config.labels["trace"] == outcome.trace.id
