"""Stored SQL run again (a CSV export, a schedule) through the engine's one door, `Askbase.rerun`.

A real SQLite database and the real state database: what is checked is what the person who
clicked would see (the rows, the count in the file, the reason for a refusal) and the audit row
an administrator reads afterwards.
"""

from __future__ import annotations

import csv
import datetime as dt
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from core.access import Principal
from core.askbase import Askbase
from core.settings import AccessRule, load_settings
from core.state.audit import entries_since
from tests.conftest import copy_on

USER, CHANNEL = "U0ANALYST", "C0SALES"


def shop(path: Path) -> Path:
    with sqlite3.connect(path) as conn:
        conn.executescript(
            """
            CREATE TABLE client (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT);
            CREATE TABLE salary (client_id INTEGER REFERENCES client(id), amount INTEGER);
            INSERT INTO client VALUES (1, 'Ada', 'Lyon'), (2, 'Ben', 'Paris'), (3, 'Cy', 'Lyon');
            INSERT INTO salary VALUES (1, 100), (2, 200);
            """
        )
    return path


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return shop(tmp_path / "shop.sqlite")


@pytest.fixture
def shop_on(engine: str, db_path: Path, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The shop on each engine of tests/conftest.py ENGINES (its DatabaseSettings' fields): the
    SQLite file, or its copy on that engine."""
    return copy_on(engine, db_path, request, "askbase_shop")


def make_app(
    tmp_path: Path, shop_on: dict[str, Any], shop: dict[str, Any] | None = None, **overrides: Any
) -> Askbase:
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=f"sqlite:///{tmp_path / 'state.sqlite'}",
        databases={"shop": {**shop_on, **(shop or {})}},
        **overrides,
    )
    return Askbase(settings)


@pytest.fixture
def app(tmp_path: Path, shop_on: dict[str, Any]) -> Iterator[Askbase]:
    app = make_app(tmp_path, shop_on)
    yield app
    app.close()


def audited(app: Askbase) -> list[tuple[object, ...]]:
    return [
        (e["source"], e["user"], e["channel"], e["status"], e["error_kind"])
        for e in entries_since(app.state, dt.timedelta(hours=1))
    ]


WHO = Principal.of(USER, CHANNEL)


def test_stored_sql_runs_again_under_the_guard_and_is_audited(app, db_path, hand):
    outcome = app.rerun(
        "SELECT name FROM client ORDER BY name", database="shop", principal=WHO, purpose="rerun"
    )
    assert outcome.status == "answer"
    assert outcome.rows == hand("SELECT name FROM client ORDER BY name", db_path)
    assert outcome.sql.upper().endswith("LIMIT 1000")  # the guard bounds it like a fresh question
    names = ", ".join(name for (name,) in outcome.rows)
    assert outcome.answer == f"3 rows: {names}."  # the sentence says what the rows are
    assert [s.name for s in outcome.trace.stages] == ["guard", "execute"]
    assert audited(app) == [("rerun", USER, CHANNEL, "answer", None)]


def test_stored_sql_a_rule_added_since_denies_is_refused_and_never_runs(tmp_path, shop_on):
    app = make_app(tmp_path, shop_on, shop={"deny_tables": ["salary"]})
    try:
        outcome = app.rerun(
            "SELECT SUM(amount) FROM salary", database="shop", principal=WHO, purpose="schedule_run"
        )
    finally:
        app.close()
    assert outcome.status == "error" and outcome.error_kind == "guard"
    assert "not allowed any more" in outcome.error and not outcome.rows
    assert "execute" not in [s.name for s in outcome.trace.stages]
    assert audited(app)[-1] == ("schedule_run", USER, CHANNEL, "error", "guard")


def test_stored_sql_that_writes_is_refused_and_the_data_stays(app, db_path, hand):
    outcome = app.rerun("DELETE FROM client", database="shop", principal=WHO, purpose="rerun")
    assert outcome.status == "error" and outcome.error_kind == "guard"
    assert hand("SELECT COUNT(*) FROM client", db_path) == [(3,)]


def test_someone_who_may_not_query_the_database_is_refused_and_audited(tmp_path, shop_on):
    app = make_app(
        tmp_path, shop_on, access={"rules": [AccessRule(databases=["shop"], channels=["C0OTHER"])]}
    )
    try:
        outcome = app.rerun("SELECT name FROM client", database="shop", principal=WHO, purpose="csv")
    finally:
        app.close()
    assert outcome.status == "error" and outcome.error_kind == "access"
    assert "may not query 'shop'" in outcome.error and not outcome.trace.stages
    assert audited(app) == [("csv", USER, CHANNEL, "error", "access")]


def test_a_database_no_longer_configured_is_reported(app):
    outcome = app.rerun("SELECT 1", database="gone", principal=WHO, purpose="schedule_run")
    assert outcome.status == "error" and outcome.error_kind == "unknown_database"
    assert "'gone' is not configured any more" in outcome.error
    assert audited(app)[-1][3:] == ("error", "unknown_database")


def test_a_csv_export_streams_every_row_to_the_file_and_counts_them(app, db_path, tmp_path, hand):
    path = tmp_path / "export.csv"
    outcome = app.rerun(
        "SELECT name, city FROM client ORDER BY id",
        database="shop",
        principal=WHO,
        purpose="csv",
        question="Which clients?",
        csv_path=path,
    )
    assert outcome.status == "answer" and outcome.exported_rows == 3 and not outcome.truncated
    assert outcome.rows == []  # the rows went to the file, not into memory
    with path.open(newline="") as f:
        assert [tuple(r) for r in csv.reader(f)] == [
            ("name", "city"),
            *hand("SELECT name, city FROM client ORDER BY id", db_path),
        ]
    assert audited(app) == [("csv", USER, CHANNEL, "answer", None)]
