"""The state database is made and upgraded by Alembic: old databases keep every row, racing starts are safe.

Three kinds of old database, each with rows in every table, must come out of `open_state` at head
with the same rows, on SQLite and on real PostgreSQL:

- v0: the release before migrations (`create_all` of core/state/schema.py at eb83305), frozen in
  `tests/data/state_schema_v0.*.sql`;
- v0001: a database migrated to the baseline revision (the packaging branch before main merged);
- 4e317c5 and c06b5bd: main before migrations landed, whose `create_all` already had the Teams
  columns, verified queries, the answer cache and `audit_log.reused_from` (4e317c5), and then the
  question claims too (c06b5bd): `tests/data/state_schema_<commit>.*.sql`.

Whatever the start, the result has exactly the schema a new database gets, which is main's (the
c06b5bd DDL) upgraded by the revisions after it (0003: private results; 0004: Teams clarification
addresses and verifier names; 0005: business definitions), plus the version table.
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
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from sqlalchemy.engine import make_url

from bot.cli import main as cli
from core.schedules import store as schedules
from core.settings import ROOT
from core.state import audit, events, open_state, state_engine
from core.state import verified as verified_store
from core.state.channel_settings import channel_database, private_results, set_private_results
from core.state.conversations import history
from core.state.migrate import VERSION_TABLE, alembic_config, current, head, upgrade
from core.state.schema import metadata
from tests.paths import DATA

AT = dt.datetime(2026, 3, 2, 9, 30, tzinfo=dt.UTC)

BACKENDS = ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
V0 = "v0"  # tests/data/state_schema_v0.*.sql: the release before migrations
TRUSTED = "4e317c5"  # tests/data/state_schema_4e317c5.*.sql: main's create_all with Teams and trusted answers
MAIN = "c06b5bd"  # tests/data/state_schema_c06b5bd.*.sql: main's create_all right before migrations
ORIGINS = [V0, "v0001", TRUSTED, MAIN]
NEW_TABLES = ("verified_queries", "answer_cache", "question_claims")  # added by revision 0002


@pytest.fixture
def state_url(request, tmp_path) -> str:
    """An empty state database: a SQLite file, or a new PostgreSQL database on the test server."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.sqlite'}"
    return request.getfixturevalue("postgres_state")


def made_by(url: str, ddl: str = V0, *, skip: tuple[str, ...] = ()) -> sa.Engine:
    """A state database as `ddl`'s code made it with create_all (tables in `skip` left out)."""
    engine = state_engine(url)
    text = (DATA / f"state_schema_{ddl}.{engine.dialect.name}.sql").read_text()
    statements = [
        s.strip()
        for s in "\n".join(line for line in text.splitlines() if not line.startswith("--")).split(";")
        if s.strip()
    ]
    with engine.begin() as conn:
        for statement in statements:
            if not any(f"TABLE {t} " in statement or f"ON {t} " in statement for t in skip):
                conn.exec_driver_sql(statement)
    return engine


def previous_release(url: str, *, skip: tuple[str, ...] = ()) -> sa.Engine:
    """A state database as the release before migrations made it (tables in `skip` left out)."""
    return made_by(url, V0, skip=skip)


def old_database(url: str, origin: str) -> sa.Engine:
    """An empty state database of `origin`: the create_all of v0 or of a main commit, or migrated to 0001."""
    if origin == "v0001":
        engine = state_engine(url)
        assert upgrade(engine, "0001") == "0001"
        return engine
    return made_by(url, origin)


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
                # as Snapshot.to_json wrote it
                "last_result": {"columns": ["n"], "rows": [[300]], "row_count": 1},
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


def rows_of_mains_features(origin: str = MAIN) -> dict[str, list[dict[str, Any]]]:
    """What main's Teams adapter, trusted answers and (from c06b5bd) question claims left in a
    database of `origin`, beside the rest."""
    claims = {
        "question_claims": [
            {
                "key": "msg:T1:C1:1700000002.000100",
                "state": "answering",
                "holder": "web-1:4242:ab12",
                "lease_until": AT + dt.timedelta(seconds=30),
                "attempts": 1,
                "payload": {"question": "How many clients?", "channel": "C1"},
                "status_ref": "message:1700000002.000200",
                "thread_ref": "1700000002.000100",
                "received_at": AT,
                "updated_at": AT,
            }
        ]
    }
    return {
        **(claims if origin == MAIN else {}),
        "schedules": [
            {
                **rows_of_every_kind()["schedules"][0],
                "channel": "19:general@thread.tacv2",
                "platform": "teams",
                "address": {"conversation": {"id": "19:general@thread.tacv2"}, "serviceUrl": "http://smba/"},
            }
        ],
        "audit_log": [
            {**rows_of_every_kind()["audit_log"][0], "trace_id": "t1", "reused_from": "verified #1"}
        ],
        "verified_queries": [
            {
                "database": "demo",
                "question": "How many clients?",
                "sql": "SELECT COUNT(*) FROM client",
                "dialect": "sqlite",
                "params": [],
                "reusable": True,
                "note": None,
                "verified_by": "U9",
                "verified_at": AT,
                "team": "T1",
                "channel": "C1",
                "source_trace": "t0",
                "signature": "sig",
                "stale_reason": None,
                "stale_at": None,
                "stale_notified_at": None,
                "active": True,
                "unverified_by": None,
                "unverified_at": None,
                "reuse_count": 2,
                "last_reused_at": AT,
            }
        ],
        "answer_cache": [
            {
                "key": "0" * 64,
                "database": "demo",
                "question": "how many clients",
                "answer": {"columns": ["n"], "rows": [[300]]},
                "bytes": 42,
                "source_trace": "t0",
                "created_at": AT,
            }
        ],
    }


def seed(engine: sa.Engine, origin: str) -> dict[str, int]:
    """Rows in every table `origin` has (through the reflected tables, not schema.py); counts per table."""
    groups = [rows_of_every_kind(), *([rows_of_mains_features(origin)] if origin in (TRUSTED, MAIN) else [])]
    found = sa.MetaData()
    found.reflect(engine)
    counts: dict[str, int] = {}
    with engine.begin() as conn:
        for rows in groups:  # one insert per group: an executemany takes its columns from the first row
            for table, values in rows.items():
                conn.execute(sa.insert(found.tables[table]), values)
                counts[table] = counts.get(table, 0) + len(values)
    return counts


def snapshot(
    engine: sa.Engine, tables: list[str], columns: dict[str, list[str]] | None = None
) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of `tables` as the database returns it (reflected, so schema.py plays no part),
    only `columns[table]` where given: what an older schema had, read back after an upgrade."""
    found = sa.MetaData()
    found.reflect(engine, only=tables)
    with engine.connect() as conn:
        return {
            name: [
                tuple(r)
                for r in conn.execute(
                    sa.select(*[t.c[c] for c in (columns or {}).get(name, t.c.keys())]).order_by(
                        *t.primary_key.columns
                    )
                )
            ]
            for name, t in found.tables.items()
        }


def columns_of(engine: sa.Engine) -> dict[str, list[str]]:
    inspector = sa.inspect(engine)
    return {t: [c["name"] for c in inspector.get_columns(t)] for t in inspector.get_table_names()}


def shape(engine: sa.Engine) -> dict[str, Any]:
    """Tables, columns (type, nullability), keys, indexes and unique constraints, as reflected."""
    inspector = sa.inspect(engine)
    out: dict[str, Any] = {}
    for table in sorted(set(inspector.get_table_names()) & set(metadata.tables)):
        out[table] = {
            "columns": [
                (c["name"], str(c["type"]), c["nullable"], _default(c.get("default")))
                for c in inspector.get_columns(table)
            ],
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


def _default(text: str | None) -> str | None:
    """A column's server default as reflected; PostgreSQL's sequences are named per schema, so left out."""
    return None if text is None or text.startswith("nextval(") else text


@pytest.mark.parametrize("origin", ORIGINS)
@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_a_database_of_an_earlier_release_upgrades_in_place_and_keeps_every_row(state_url, origin, tmp_path):
    old = old_database(state_url, origin)
    seeded = seed(old, origin)
    SQLAlchemyJobStore(engine=old).jobs_t.create(old)  # APScheduler's own table shares the database
    had = columns_of(old)
    before = snapshot(old, [*seeded, "apscheduler_jobs"])
    assert current(old) == ("0001" if origin == "v0001" else None)
    old.dispose()

    engine = open_state(state_url)  # what every command does first
    try:
        assert current(engine) == head() == "0005"
        assert snapshot(engine, [*seeded, "apscheduler_jobs"], had) == before
        assert {t: len(r) for t, r in before.items()} == {**seeded, "apscheduler_jobs": 0}
        # the code reads and writes the old rows as before
        assert [t.question for t in history(engine, "slack:T1:C1:1700000000.000100")] == [
            "How many clients?",
            "and in 2024?",
        ]
        logged = audit.entries_since(engine, dt.datetime.now(dt.UTC) - AT + dt.timedelta(days=1))
        assert [e["question"] for e in logged] == ["How many clients?"] * seeded["audit_log"]
        # what 0002 added reads as the code expects of rows made before it: Slack schedules, no reuse
        slack_schedule = schedules.get(engine, 1)
        assert slack_schedule is not None and slack_schedule.question == "How many clients?"
        assert (slack_schedule.platform, slack_schedule.address) == ("slack", None)
        assert logged[0]["reused_from"] is None
        if origin in (TRUSTED, MAIN):  # main's own rows of its new features stay what they were
            teams = schedules.get(engine, 2)
            assert teams is not None and teams.platform == "teams"
            assert teams.address == rows_of_mains_features()["schedules"][0]["address"]
            assert logged[1]["reused_from"] == "verified #1"
            verified = verified_store.get(engine, 1)
            assert verified is not None and verified.sql == "SELECT COUNT(*) FROM client"
        if origin == MAIN:  # a question in flight when the old release stopped is still found
            key = "msg:T1:C1:1700000002.000100"
            assert events.state_of(engine, key) == "answering"
            assert events.expired(engine, now=AT + dt.timedelta(seconds=31)) == [key]
        with engine.begin() as conn:  # and new rows go in beside them, in the new tables too
            conn.execute(sa.insert(metadata.tables["processed_events"]), {"id": "Ev02", "received_at": AT})
            conn.execute(
                sa.insert(metadata.tables["answer_cache"]),
                {**rows_of_mains_features()["answer_cache"][0], "key": "1" * 64},
            )
        made = schedules.create(
            engine,
            team="T1",
            channel="19:new@thread.tacv2",
            owner="U1",
            question="How many clients?",
            sql="SELECT COUNT(*) FROM client",
            database="demo",
            trigger=slack_schedule.trigger,
            condition=slack_schedule.condition,
            platform="teams",
            address={"conversation": {"id": "19:new@thread.tacv2"}},
        )
        assert schedules.get(engine, made.id) == made
        claimed = events.claim(engine, "msg:T1:C1:1800000000.000100", "web-2", 30, now=AT)
        assert claimed is not None and not claimed.taken_over
        with engine.connect() as conn:
            versions = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
        assert versions == [head()]
    finally:
        engine.dispose()
    upgraded, reference = state_engine(state_url), mains_at_head(tmp_path, state_url)
    try:  # whatever the start, the schema is main's at head: nothing else was changed on the way
        assert shape(upgraded) == shape(reference)
    finally:
        upgraded.dispose()
        reference.dispose()


def fresh(tmp_path: Path, state_url: str, ddl: str) -> sa.Engine:
    """`ddl`'s schema in a second, empty database of the same kind (for comparing)."""
    if make_url(state_url).get_backend_name() == "sqlite":
        return made_by(f"sqlite:///{tmp_path / f'{ddl}-{uuid.uuid4().hex[:8]}.sqlite'}", ddl)
    name = f"{ddl}_{uuid.uuid4().hex[:8]}"
    engine = state_engine(state_url)
    with engine.begin() as conn:
        conn.exec_driver_sql(f'CREATE SCHEMA "{name}"')
    engine.dispose()
    in_schema = make_url(state_url).update_query_dict({"options": f"-csearch_path={name}"})
    return made_by(in_schema.render_as_string(False), ddl)


def mains_at_head(tmp_path: Path, state_url: str) -> sa.Engine:
    """Main's schema (the c06b5bd DDL) upgraded by the revisions after it: what every database
    comes to (test_0003_... checks what those revisions change)."""
    engine = fresh(tmp_path, state_url, MAIN)
    upgrade(engine)
    return engine


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_a_new_database_gets_exactly_mains_schema_plus_the_version_table(state_url, tmp_path):
    engine = open_state(state_url)
    reference = mains_at_head(tmp_path, state_url)
    try:
        assert shape(engine) == shape(reference)
        assert set(sa.inspect(engine).get_table_names()) == {*metadata.tables, VERSION_TABLE}
        assert {*NEW_TABLES, "schedules", "audit_log"} <= set(metadata.tables)
    finally:
        engine.dispose()
        reference.dispose()


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_0002_goes_back_to_0001_and_up_again_keeping_the_rows_0001_knew(state_url, tmp_path):
    """`alembic downgrade 0001` removes exactly what 0002 added; upgrading again restores main's schema."""
    engine = open_state(state_url)
    try:
        seed(engine, MAIN)
        v0001 = old_database(f"sqlite:///{tmp_path / 'v0001.sqlite'}", "v0001")
        kept = columns_of(v0001)  # what 0001 knew, column by column
        v0001.dispose()
        before = snapshot(engine, list(rows_of_every_kind()), kept)
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0001")
        assert current(engine) == "0001"
        tables = set(sa.inspect(engine).get_table_names())
        assert not tables & set(NEW_TABLES) and "schedules" in tables
        assert "platform" not in columns_of(engine)["schedules"]
        assert snapshot(engine, list(rows_of_every_kind()), kept) == before
        assert upgrade(engine) == head()
        assert snapshot(engine, list(rows_of_every_kind()), kept) == before
    finally:
        engine.dispose()
    reference = mains_at_head(tmp_path, state_url)
    again = state_engine(state_url)
    try:
        assert shape(again) == shape(reference)
    finally:
        again.dispose()
        reference.dispose()


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_0003_makes_channels_private_keeping_their_database_choice(state_url, tmp_path):
    """0003 adds `channel_settings.private_results` (false for rows made before it) and lets a
    channel be private with no database chosen; downgrading drops what 0002 cannot hold."""
    engine = state_engine(state_url)
    try:
        assert upgrade(engine, "0002") == "0002"
        seed(engine, MAIN)
        before = snapshot(engine, list(rows_of_every_kind()))
        assert upgrade(engine, "0003") == "0003"
        kept = {t: [c for c in cols if c != "private_results"] for t, cols in columns_of(engine).items()}
        assert snapshot(engine, list(rows_of_every_kind()), kept) == before  # every row, as it was
        assert channel_database(engine, "T1", "C1") == "sales" and not private_results(engine, "T1", "C1")
        set_private_results(engine, "T1", "C2", True, "U1")  # no database chosen there: the default
        set_private_results(engine, "T1", "C1", True, "U1")
        assert channel_database(engine, "T1", "C2") is None and private_results(engine, "T1", "C2")
        assert private_results(engine, "T1", "C1") and channel_database(engine, "T1", "C1") == "sales"

        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0002")
        assert "private_results" not in columns_of(engine)["channel_settings"]
        rows = snapshot(engine, ["channel_settings"], {"channel_settings": ["team", "channel", "database"]})
        assert rows == {"channel_settings": [("T1", "C1", "sales")]}  # C2 held only what 0002 cannot keep
        assert upgrade(engine) == head()
        assert not private_results(engine, "T1", "C1")
    finally:
        engine.dispose()
    main, reference = fresh(tmp_path, state_url, MAIN), fresh(tmp_path, state_url, MAIN)
    upgrade(reference, "0003")
    try:  # what 0003 changes of main's schema, and nothing else
        old, new = shape(main), shape(reference)
        changed = {t for t in new if new[t] != old[t]}
        assert changed == {"channel_settings"}
        columns = {c[0]: c for c in new["channel_settings"]["columns"]}
        assert [c[0] for c in old["channel_settings"]["columns"]] + ["private_results"] == list(columns)
        assert columns["database"][2] is True and columns["private_results"][2] is False
    finally:
        main.dispose()
        reference.dispose()


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_0004_adds_teams_card_addresses_and_verifier_names_keeping_every_row(state_url, tmp_path):
    """0004 adds `clarifications.address` and `verified_queries.verifier_name`, empty for rows made
    before it; downgrading drops exactly those two columns and keeps every row."""
    engine = state_engine(state_url)
    added = {"clarifications": "address", "verified_queries": "verifier_name"}
    try:
        assert upgrade(engine, "0003") == "0003"
        seed(engine, MAIN)
        tables = sorted({*rows_of_every_kind(), *rows_of_mains_features()})
        before = snapshot(engine, tables)
        assert upgrade(engine, "0004") == "0004"
        kept = {t: [c for c in cols if c != added.get(t)] for t, cols in columns_of(engine).items()}
        assert snapshot(engine, tables, kept) == before  # every row, as it was
        q = verified_store.get(engine, 1)
        assert q is not None and q.verifier_name == ""  # Slack's rows show <@U…> as before
        with engine.connect() as conn:
            addresses = conn.execute(sa.text("SELECT address FROM clarifications")).scalars().all()
        assert addresses and all(a is None for a in addresses)

        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0003")
        columns = columns_of(engine)
        assert all(column not in columns[table] for table, column in added.items())
        assert snapshot(engine, tables, kept) == before
        assert upgrade(engine) == head()
    finally:
        engine.dispose()
    main, reference = fresh(tmp_path, state_url, MAIN), mains_at_head(tmp_path, state_url)
    upgrade(main, "0003")
    try:  # what 0004 changes of the schema at 0003, and nothing else
        old, new = shape(main), shape(reference)
        assert {t for t in old if new[t] != old[t]} == set(added)
        for table, column in added.items():
            names = [c[0] for c in new[table]["columns"]]
            assert [c[0] for c in old[table]["columns"]] + [column] == names
    finally:
        main.dispose()
        reference.dispose()


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_0005_adds_the_definitions_table_keeping_every_row(state_url):
    """0005 adds `definitions` (taught, learned and imported business definitions); every other
    table keeps its rows, and downgrading drops only the new table."""
    engine = state_engine(state_url)
    try:
        assert upgrade(engine, "0004") == "0004"
        seed(engine, MAIN)
        tables = sorted({*rows_of_every_kind(), *rows_of_mains_features()})
        before = snapshot(engine, tables)
        assert upgrade(engine) == head() == "0005"
        assert snapshot(engine, tables) == before
        assert "definitions" in columns_of(engine)
        with engine.begin() as conn:
            command.downgrade(alembic_config(conn), "0004")
        assert "definitions" not in columns_of(engine)
        assert snapshot(engine, tables) == before
    finally:
        engine.dispose()


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


@pytest.mark.parametrize("state_url", BACKENDS, indirect=True)
def test_the_head_and_the_current_revision_read_without_alembic_are_alembics(state_url):
    """Opening the state reads the head from the revision files' names and the current revision
    from the version table, without importing Alembic: both must be what Alembic itself says,
    before any revision, part way and at head."""
    from alembic.script import ScriptDirectory

    assert head() == ScriptDirectory.from_config(alembic_config()).get_current_head()
    engine = state_engine(state_url)
    try:
        for target in (None, "0002", "head"):
            if target:
                upgrade(engine, target)
            with engine.connect() as conn:
                alembic_says = MigrationContext.configure(
                    conn, opts={"version_table": VERSION_TABLE}
                ).get_current_revision()
            assert current(engine) == alembic_says == {None: None, "0002": "0002", "head": head()}[target]
    finally:
        engine.dispose()


def test_a_process_that_opens_a_state_database_at_head_does_not_import_alembic(tmp_path):
    url = f"sqlite:///{tmp_path / 'state.sqlite'}"
    open_state(url).dispose()
    probe = "import sys; from core.state import open_state; open_state(sys.argv[1]); print('alembic' in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", probe, url], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


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
    assert {
        "migrations/versions/v0001_baseline.py",
        "migrations/versions/v0002_teams_trusted_claims.py",
        "migrations/versions/v0003_private_results.py",
        "migrations/versions/v0004_teams_clarify_verify.py",
        "migrations/versions/v0005_definitions.py",
    } <= set(files)
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), files
