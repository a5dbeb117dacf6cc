"""The state database is made and upgraded by Alembic: old databases keep every row, racing starts are safe.

`tests/data/state_schema_v0.*.sql` is the DDL the release before migrations ran (`create_all` of
core/state/schema.py at eb83305), frozen: a database made by it, with rows in every table, must
come out of `open_state` at head with the same rows, on SQLite and on real PostgreSQL.
"""

from __future__ import annotations

import datetime as dt
import fnmatch
import subprocess
import sys
import tomllib
import uuid
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from sqlalchemy.engine import make_url

from bot.cli import main as cli
from core.settings import ROOT
from core.state import audit, open_state, state_engine
from core.state.conversations import history
from core.state.migrate import VERSION_TABLE, current, head
from core.state.schema import metadata

DATA = Path(__file__).parent / "data"
AT = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.UTC)

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]


@pytest.fixture
def state_url(request, tmp_path) -> str:
    """An empty state database: a SQLite file, or a new PostgreSQL database on the test server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.sqlite'}"
    return request.getfixturevalue("postgres_state")


def previous_release(url: str, *, skip: tuple[str, ...] = ()) -> sa.Engine:
    """A state database as the release before migrations made it (tables in `skip` left out)."""
    engine = state_engine(url)
    ddl = (DATA / f"state_schema_v0.{engine.dialect.name}.sql").read_text()
    statements = [
        s.strip()
        for s in "\n".join(line for line in ddl.splitlines() if not line.startswith("--")).split(";")
        if s.strip()
    ]
    with engine.begin() as conn:
        for statement in statements:
            if not any(f"TABLE {t} " in statement or f"ON {t} " in statement for t in skip):
                conn.exec_driver_sql(statement)
    return engine


def rows_of_every_kind() -> dict[str, list[dict[str, Any]]]:
    """What a running bot leaves behind: a conversation with turns, a schedule with runs, and so on."""
    conversation = "slack:T1:C1:1700000000.000100"
    return {
        "conversations": [
            {
                "id": conversation,
                "database": "demo",
                "channel": "C1",
                "user": "U1",
                "created_at": AT,
                "updated_at": AT,
            }
        ],
        "turns": [
            {
                "conversation_id": conversation,
                "trace_id": f"t{i}",
                "user": "U1",
                "question": q,
                "status": "answer",
                "mode": "keyword",
                "answer": a,
                "sql": "SELECT COUNT(*) FROM client",
                "columns": ["n"],
                "row_count": 1,
                "created_at": AT + dt.timedelta(minutes=i),
            }
            for i, (q, a) in enumerate([("How many clients?", "300"), ("and in 2024?", "120")])
        ],
        "traces": [{"id": "t0", "data": {"stages": [{"name": "retrieve", "ms": 3.5}]}, "created_at": AT}],
        "processed_events": [{"id": "Ev01", "received_at": AT}],
        "feedback": [
            {"trace_id": "t0", "user": "U2", "verdict": "down", "comment": "wrong year", "created_at": AT}
        ],
        "examples": [
            {
                "database": "demo",
                "question": "How many clients?",
                "sql": "SELECT COUNT(*) FROM client",
                "created_by": "U1",
                "created_at": AT,
            }
        ],
        "channel_settings": [
            {"team": "T1", "channel": "C1", "database": "sales", "set_by": "U1", "updated_at": AT}
        ],
        "audit_log": [
            {
                "at": AT,
                "source": "slack",
                "user": "U1",
                "channel": "C1",
                "database": "demo",
                "question": "How many clients?",
                "sql": "SELECT COUNT(*) FROM client",
                "status": "answer",
                "mode": "keyword",
                "error_kind": None,
                "rows": 1,
                "ms": 12.5,
                "llm_calls": 0,
                "tokens": 0,
                "trace_id": "t0",
            }
        ],
        "schedules": [
            {
                "team": "T1",
                "channel": "C1",
                "owner": "U1",
                "question": "How many clients?",
                "sql": "SELECT COUNT(*) FROM client",
                "database": "demo",
                "trigger": {
                    "kind": "interval",
                    "label": "every hour",
                    "seconds": 3600,
                    "anchor": AT.isoformat(),
                },
                "condition": {"kind": "always"},
                "paused": False,
                "paused_reason": None,
                "revision": 1,
                "failures": 0,
                "retry_at": None,
                "error_ts": None,
                "last_tick": AT,
                "last_run_at": AT,
                "last_status": "posted",
                "last_rows": 1,
                "last_fingerprint": "abc",
                "last_result": {"columns": ["n"], "rows": [[300]]},
                "source_trace": "t0",
                "created_at": AT,
                "updated_at": AT,
            }
        ],
        "schedule_runs": [
            {
                "schedule_id": 1,
                "scheduled_for": AT,
                "manual": False,
                "worker": "w1",
                "started_at": AT,
                "finished_at": AT,
                "ms": 40.0,
                "status": "posted",
                "rows": 1,
                "error": None,
                "note": None,
                "trace_id": "t0",
                "message_ts": "1700000001.000200",
            }
        ],
        "scheduler_lease": [{"name": "scheduler", "holder": "w1", "acquired_at": AT, "expires_at": AT}],
        "clarifications": [
            {
                "id": "c1",
                "conversation_id": conversation,
                "database": "demo",
                "question": "How many clients in Singapore?",
                "kind": "AmbValue",
                "prompt": "Which Singapore?",
                "options": [{"label": "city", "value": "city"}],
                "transcript": [],
                "asker": "U1",
                "team": "T1",
                "channel": "C1",
                "thread_ts": "1700000000.000100",
                "message_ts": "1700000000.000300",
                "trace_id": "t0",
                "status": "open",
                "answer": None,
                "answer_value": None,
                "answered_by": None,
                "created_at": AT,
                "expires_at": AT + dt.timedelta(hours=1),
                "answered_at": None,
            }
        ],
    }


def snapshot(engine: sa.Engine, tables: list[str]) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of `tables` as the database returns it (reflected, so schema.py plays no part)."""
    found = sa.MetaData()
    found.reflect(engine, only=tables)
    with engine.connect() as conn:
        return {
            name: [tuple(r) for r in conn.execute(sa.select(t).order_by(*t.primary_key.columns))]
            for name, t in found.tables.items()
        }


def shape(engine: sa.Engine) -> dict[str, Any]:
    """Tables, columns (type, nullability), keys, indexes and unique constraints, as reflected."""
    inspector = sa.inspect(engine)
    out: dict[str, Any] = {}
    for table in sorted(set(inspector.get_table_names()) & set(metadata.tables)):
        out[table] = {
            "columns": [(c["name"], str(c["type"]), c["nullable"]) for c in inspector.get_columns(table)],
            "pk": inspector.get_pk_constraint(table)["constrained_columns"],
            "fks": sorted(
                (fk["constrained_columns"], fk["referred_table"]) for fk in inspector.get_foreign_keys(table)
            ),
            "indexes": sorted(
                (i["name"], tuple(i["column_names"]), bool(i["unique"])) for i in inspector.get_indexes(table)
            ),
            "unique": sorted(
                (u["name"], tuple(u["column_names"])) for u in inspector.get_unique_constraints(table)
            ),
        }
    return out


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_a_database_of_the_previous_release_upgrades_in_place_and_keeps_every_row(state_url, tmp_path):
    old = previous_release(state_url)
    seeded = rows_of_every_kind()
    found = sa.MetaData()
    found.reflect(old)
    with old.begin() as conn:
        for table, rows in seeded.items():
            conn.execute(sa.insert(found.tables[table]), rows)
    SQLAlchemyJobStore(engine=old).jobs_t.create(old)  # APScheduler's own table shares the database
    before = snapshot(old, [*seeded, "apscheduler_jobs"])
    assert current(old) is None
    old.dispose()

    engine = open_state(state_url)  # what every command does first
    try:
        assert current(engine) == head()
        assert snapshot(engine, [*seeded, "apscheduler_jobs"]) == before
        assert {t: len(r) for t, r in before.items()} == {
            **{t: len(r) for t, r in seeded.items()},
            "apscheduler_jobs": 0,
        }
        # the code reads and writes the old rows as before
        assert [t.question for t in history(engine, "slack:T1:C1:1700000000.000100")] == [
            "How many clients?",
            "and in 2024?",
        ]
        assert [
            e["question"]
            for e in audit.entries_since(engine, dt.datetime.now(dt.UTC) - AT + dt.timedelta(days=1))
        ] == ["How many clients?"]
        with engine.begin() as conn:  # and new rows go in beside them
            conn.execute(sa.insert(metadata.tables["processed_events"]), {"id": "Ev02", "received_at": AT})
        with engine.connect() as conn:
            versions = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
        assert versions == [head()]
    finally:
        engine.dispose()
    upgraded, reference = state_engine(state_url), previous_release_fresh(tmp_path, state_url)
    try:  # nothing of the old schema was changed on the way
        assert shape(upgraded) == shape(reference)
    finally:
        upgraded.dispose()
        reference.dispose()


def previous_release_fresh(tmp_path: Path, state_url: str) -> sa.Engine:
    """The previous release's schema in a second, empty database of the same kind (for comparing)."""
    if make_url(state_url).get_backend_name() == "sqlite":
        return previous_release(f"sqlite:///{tmp_path / 'v0-fresh.sqlite'}")
    return previous_release_in_schema(state_url)


def previous_release_in_schema(state_url: str) -> sa.Engine:
    name = f"v0_{uuid.uuid4().hex[:8]}"
    engine = state_engine(state_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    return previous_release(
        make_url(state_url).update_query_dict({"options": f"-csearch_path={name}"}).render_as_string(False)
    )


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_a_new_database_gets_exactly_the_previous_releases_schema_plus_the_version_table(state_url, tmp_path):
    engine = open_state(state_url)
    reference = previous_release_fresh(tmp_path, state_url)
    try:
        assert shape(engine) == shape(reference)
        assert set(sa.inspect(engine).get_table_names()) == {*metadata.tables, VERSION_TABLE}
    finally:
        engine.dispose()
        reference.dispose()


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_schema_py_and_the_migrations_agree(state_url):
    """Fails when core/state/schema.py changes without a revision (python -m core.state revision)."""
    engine = open_state(state_url)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(
                conn,
                opts={
                    "compare_type": True,
                    "include_name": lambda name, kind, _: kind != "table" or name in metadata.tables,
                },
            )
            assert compare_metadata(context, metadata) == []
    finally:
        engine.dispose()


def test_a_database_from_before_a_feature_gets_the_features_tables(tmp_path):
    """A release before clarifications and schedules existed made fewer tables: the missing ones are added."""
    url = f"sqlite:///{tmp_path / 'state.sqlite'}"
    previous_release(url, skip=("clarifications", "schedules", "schedule_runs", "scheduler_lease")).dispose()
    engine = open_state(url)
    try:
        assert {"clarifications", "schedules", "schedule_runs", "scheduler_lease"} <= set(
            sa.inspect(engine).get_table_names()
        )
        assert current(engine) == head()
    finally:
        engine.dispose()


RACE = """
import pathlib, sys, time
from core.state import open_state
from core.state.migrate import current
print("ready", flush=True)
while not pathlib.Path(sys.argv[2]).exists():  # every process starts migrating at the same moment
    time.sleep(0.005)
print(current(open_state(sys.argv[1])))
"""


@pytest.mark.slow
@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_processes_starting_at_once_take_turns(state_url, tmp_path):
    """A web process and workers starting together on a new database: each finds it at head, none fails."""
    go = tmp_path / "go"
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", RACE, state_url, str(go)],
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    assert [p.stdout.readline().strip() for p in procs if p.stdout] == ["ready"] * 4  # Askbase imported
    go.touch()
    results = [p.communicate(timeout=60) for p in procs]
    assert [p.returncode for p in procs] == [0] * 4, [err[-2000:] for _, err in results]
    assert [out.strip() for out, _ in results] == [head()] * 4
    engine = state_engine(state_url)
    try:
        with engine.connect() as conn:
            assert conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all() == [
                head()
            ]
    finally:
        engine.dispose()


def test_askbase_db_upgrade_and_current(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ASKBASE_STATE_URL", f"sqlite:///{tmp_path / 'state.sqlite'}")
    assert cli(["db", "current"]) == 0
    assert "revision none" in capsys.readouterr().out
    assert cli(["db", "upgrade"]) == 0
    assert f"revision {head()}" in capsys.readouterr().out
    monkeypatch.setenv("ASKBASE_STATE_URL", "postgresql+psycopg://askbase:s3cret@127.0.0.1:1/state")
    assert cli(["db", "upgrade"]) == 1
    err = capsys.readouterr().err
    assert "127.0.0.1:1" in err and "s3cret" not in err


def test_the_revisions_ship_as_package_data():
    """The wheel carries env.py and every revision (pyproject package-data), not only the checkout."""
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][
        "core.state"
    ]
    files = [
        p.relative_to(ROOT / "core" / "state").as_posix()
        for p in (ROOT / "core/state/migrations").rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    ]
    assert "migrations/versions/v0001_baseline.py" in files
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), files
