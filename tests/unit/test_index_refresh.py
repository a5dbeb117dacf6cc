"""Value indexes refreshed on a schedule (`databases.<name>.index_refresh`, core/index_refresh.py):
which are due, the job the worker runs, once per tick whoever runs it, and a failure that waits for
the next tick. The index is the real one, built and refreshed on a copy of the demo database; time
is the `now` each call is given, never the real clock.
"""

from __future__ import annotations

import datetime as dt
import fcntl
import logging
import shutil
import sqlite3
import threading
from pathlib import Path

import pydantic
import pytest
from slack_sdk import WebClient

from bot.cli import main
from bot.worker import Worker
from core import index_refresh
from core.askbase import Askbase
from core.conversation.upkeep import entries_since, parse_since
from core.demo import ensure_demo
from core.index_refresh import (
    SCHEDULED,
    Due,
    IndexScheduleError,
    due,
    index_database,
    index_schedules,
    refresh_due,
    refresh_scheduled,
)
from core.settings import load_settings
from core.values import iter_index_values
from core.values.lock import index_lock, lock_path
from tests.clock import Clock

UTC = dt.UTC
GRACE = 3600.0
TIMEOUT = 30  # a bound on waiting for a thread that is released at once; never a measured time
NIGHTLY = "0 3 * * *"
DAY = dt.datetime(2025, 3, 4, tzinfo=UTC)
SECRET = "sk-test-0123456789abcdefghij"


def at(hour: int, minute: int = 0, second: int = 0, *, day: int = 0) -> dt.datetime:
    return DAY + dt.timedelta(days=day, hours=hour, minutes=minute, seconds=second)


@pytest.fixture
def ops(tmp_path, demo_var) -> Path:
    """A copy of the demo database of this test's own, to change values in."""
    path = tmp_path / "ops.sqlite"
    shutil.copyfile(ensure_demo(demo_var), path)
    return path


def ops_settings(tmp_path, ops, state_url, **more):
    databases = {"ops": {"url": f"sqlite:///{ops}", "index_refresh": NIGHTLY}}
    return load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={**databases, **more},
        llm={"api_key": SECRET},
    )


@pytest.fixture
def make_app(tmp_path, ops, state_url):
    """An Askbase on `ops` (as one process would have it); `make_app()` again: another process's."""
    apps: list[Askbase] = []

    def make(**more) -> Askbase:
        app = Askbase(ops_settings(tmp_path, ops, state_url, **more))
        apps.append(app)
        return app

    yield make
    for app in apps:
        app.close()


def rename_first_city(ops: Path, city: str) -> None:
    with sqlite3.connect(ops) as conn:
        conn.execute("UPDATE location SET city = ? WHERE id = 1", (city,))
    conn.close()


def cities(app: Askbase, name: str = "ops") -> set[str]:
    return {v for t, c, v in iter_index_values(app.database(name)) if (t, c) == ("location", "city")}


def statuses(results) -> list[tuple[str, dt.datetime, str]]:
    return [(r.database, r.tick, r.status) for r in results]


# ------------------------------------------------------------------ due, and the job


def test_the_job_refreshes_a_scheduled_index_when_due_and_not_before(make_app, ops):
    app = make_app()
    index_database(app, "ops", "build")
    assert "Berlin" in cities(app)
    rename_first_city(ops, "Reykjavík")
    schedules = index_schedules(app.settings)

    assert refresh_due(app, schedules, at(2, 59, 30), grace_s=GRACE) == []
    assert "Reykjavík" not in cities(app)

    done = refresh_due(app, schedules, at(3, 0, 5), grace_s=GRACE)
    assert statuses(done) == [("ops", at(3), "refreshed")]
    assert done[0].stats is not None and done[0].stats.rewritten
    assert "Reykjavík" in cities(app) and "Berlin" not in cities(app)

    rename_first_city(ops, "Akureyri")
    assert refresh_due(app, schedules, at(3, 30), grace_s=GRACE) == []  # that tick is done
    assert refresh_due(app, schedules, at(2, 59, day=1), grace_s=GRACE) == []
    assert "Akureyri" not in cities(app)
    again = refresh_due(app, schedules, at(3, 0, 1, day=1), grace_s=GRACE)
    assert statuses(again) == [("ops", at(3, day=1), "refreshed")]
    assert "Akureyri" in cities(app)

    # through `python -m bot index`'s path: access, attribution, one audit row each
    rows = [
        (e["source"], e["question"], e["database"], e["status"])
        for e in entries_since(app.state, parse_since("1h"))
    ]
    assert rows == [
        ("index", "index build", "ops", "answer"),
        ("index", SCHEDULED, "ops", "answer"),
        ("index", SCHEDULED, "ops", "answer"),
    ]


def test_the_job_refreshes_a_duckdb_index_too(tmp_path, demo_duckdb, state_url):
    """A warehouse's index (sampled, capped: docs/warehouses.md) on the same schedule, on DuckDB."""
    duckdb = pytest.importorskip("duckdb")
    lake = tmp_path / "ops.duckdb"
    shutil.copyfile(demo_duckdb, lake)
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={"lake": {"url": f"duckdb:///{lake}", "index_refresh": NIGHTLY}},
    )
    app = Askbase(settings)
    try:
        index_database(app, "lake", "build")
        app.database("lake").dispose()  # DuckDB: one process writes a file only when nobody reads it
        conn = duckdb.connect(str(lake))
        conn.execute("UPDATE location SET city = 'Reykjavík' WHERE id = 1")
        conn.close()
        schedules = index_schedules(settings)
        assert refresh_due(app, schedules, at(2, 59), grace_s=GRACE) == []
        assert "Reykjavík" not in cities(app, "lake")
        assert statuses(refresh_due(app, schedules, at(3, 0, 5), grace_s=GRACE)) == [
            ("lake", at(3), "refreshed")
        ]
        assert "Reykjavík" in cities(app, "lake")
    finally:
        app.close()


def test_due_is_the_latest_tick_not_yet_refreshed_within_the_grace(tmp_path, ops, state_url):
    settings = ops_settings(
        tmp_path,
        ops,
        state_url,
        berlin={
            "url": f"sqlite:///{ops}",
            "index_refresh": "30 4 * * 1-5",
            "index_refresh_timezone": "Europe/Berlin",
        },
        never={"url": f"sqlite:///{ops}"},
    )
    schedules = index_schedules(settings)
    assert [s.database for s in schedules] == ["berlin", "ops"]  # no schedule, no entry
    nothing: dict[str, dt.datetime | None] = {}

    def due_now(now, last=nothing):
        return [(d.database, d.tick) for d in due(schedules, now, last, grace_s=GRACE)]

    assert due_now(at(2, 59)) == []
    # 2025-03-04 is a Tuesday; 04:30 in Berlin (winter time) is 03:30 UTC
    assert due_now(at(3, 40)) == [("berlin", at(3, 30)), ("ops", at(3))]
    assert due_now(at(3, 40), {"ops": at(3), "berlin": at(3, 30)}) == []
    assert due_now(at(3, 40), {"ops": at(3, day=-1)}) == [("berlin", at(3, 30)), ("ops", at(3))]
    # a worker back after the grace waits for the next tick, as scheduled questions do
    assert due_now(at(4, 1)) == [("berlin", at(3, 30))]
    assert due_now(at(9)) == []
    # Saturday: the weekday schedule does not fire, the nightly one does
    assert due_now(at(3, 10, day=4)) == [("ops", at(3, day=4))]


# ------------------------------------------------------------------ a bad cron line


def test_a_bad_cron_line_is_refused_at_start_naming_the_database_and_the_setting(
    tmp_path, ops, state_url, monkeypatch, capsys
):
    with pytest.raises(pydantic.ValidationError) as refused:
        ops_settings(tmp_path, ops, state_url, sales={"url": f"sqlite:///{ops}", "index_refresh": "0 3 * *"})
    assert "databases.sales.index_refresh" in str(refused.value)
    assert "five fields" in str(refused.value)
    with pytest.raises(pydantic.ValidationError) as refused:
        ops_settings(
            tmp_path, ops, state_url, sales={"url": f"sqlite:///{ops}", "index_refresh": "0 25 * * *"}
        )
    assert "databases.sales.index_refresh" in str(refused.value) and "25" in str(refused.value)
    with pytest.raises(pydantic.ValidationError) as refused:
        ops_settings(
            tmp_path, ops, state_url, sales={"url": f"sqlite:///{ops}", "index_refresh_timezone": "Mars/Base"}
        )
    assert "databases.sales.index_refresh_timezone" in str(refused.value)

    # settings made without validation meet the same check where the worker reads them
    settings = ops_settings(tmp_path, ops, state_url)
    bad = settings.databases["ops"].model_copy(update={"index_refresh": "0 3 * * * *"})
    with pytest.raises(IndexScheduleError, match=r"databases\.ops\.index_refresh"):
        index_schedules(settings.model_copy(update={"databases": {"ops": bad}}))

    # the worker says so in one line and does not start
    monkeypatch.setenv("ASKBASE_VAR_DIR", str(tmp_path / "var"))
    monkeypatch.setenv("ASKBASE_STATE_URL", state_url)
    monkeypatch.setenv("ASKBASE_DATABASES__SALES__URL", f"sqlite:///{ops}")
    monkeypatch.setenv("ASKBASE_DATABASES__SALES__INDEX_REFRESH", "every night")
    assert main(["worker"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("Configuration error") and "databases.sales.index_refresh" in err
    assert "Traceback" not in err


# ------------------------------------------------------------------ once per tick


def test_two_concurrent_runs_refresh_once(make_app, ops, monkeypatch):
    first, second = make_app(), make_app()  # two workers, each with its own engines
    index_database(first, "ops", "build")
    rename_first_city(ops, "Reykjavík")
    schedules = index_schedules(first.settings)
    refreshing, go = threading.Event(), threading.Event()
    calls: list[str] = []
    real = index_refresh.refresh_index

    def held_open(db, progress=None):
        calls.append(db.name)
        refreshing.set()
        assert go.wait(TIMEOUT)
        return real(db, progress)

    monkeypatch.setattr(index_refresh, "refresh_index", held_open)
    results = {}
    running = threading.Thread(
        target=lambda: results.update(first=refresh_due(first, schedules, at(3, 0, 5), grace_s=GRACE))
    )
    running.start()
    assert refreshing.wait(TIMEOUT)
    # the second worker's heartbeat comes a moment later, while the first one refreshes
    assert statuses(refresh_due(second, schedules, at(3, 0, 6), grace_s=GRACE)) == [("ops", at(3), "busy")]
    go.set()
    running.join(TIMEOUT)
    assert not running.is_alive()
    assert statuses(results["first"]) == [("ops", at(3), "refreshed")]
    # and after it: the tick is done, whether asked as due or forced
    assert refresh_due(second, schedules, at(3, 0, 7), grace_s=GRACE) == []
    assert refresh_scheduled(second, Due(schedules[0], at(3)), at(3, 0, 8)).status == "done"
    assert calls == ["ops"]
    assert "Reykjavík" in cities(second)


def test_a_refresh_another_process_holds_is_left_to_it(make_app, ops):
    """flock is per open file, so a lock taken on a file of its own is what another process's
    lock looks like (tests/integration/test_index_refresh_processes.py takes it from a process)."""
    app = make_app()
    index_database(app, "ops", "build")
    rename_first_city(ops, "Reykjavík")
    schedules = index_schedules(app.settings)
    with open(lock_path(app.database("ops")), "a+b") as other:
        fcntl.flock(other.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert statuses(refresh_due(app, schedules, at(3, 0, 5), grace_s=GRACE)) == [("ops", at(3), "busy")]
    assert "Reykjavík" not in cities(app)
    # that process died before recording the tick: the next heartbeat refreshes it
    assert statuses(refresh_due(app, schedules, at(3, 0, 10), grace_s=GRACE)) == [("ops", at(3), "refreshed")]
    assert "Reykjavík" in cities(app)


def test_the_index_command_waits_for_a_refresh_running_elsewhere(make_app):
    app = make_app()
    waited, finished = threading.Event(), threading.Event()
    db = app.database("ops")

    def command() -> None:
        index_database(app, "ops", "build", on_wait=lambda _db: waited.set())
        finished.set()

    with index_lock(db) as held:
        assert held
        thread = threading.Thread(target=command)
        thread.start()
        assert waited.wait(TIMEOUT)
        assert not finished.is_set()
    thread.join(TIMEOUT)
    assert finished.is_set() and "Berlin" in cities(app)


# ------------------------------------------------------------------ failures


def test_a_failed_refresh_is_logged_without_secrets_and_tried_at_the_next_tick(
    make_app, ops, tmp_path, monkeypatch, caplog
):
    gone = tmp_path / "gone" / "missing.sqlite"
    app = make_app(gone={"url": f"sqlite:///{gone}", "index_refresh": NIGHTLY})
    index_database(app, "ops", "build")
    rename_first_city(ops, "Reykjavík")
    schedules = index_schedules(app.settings)
    real = index_refresh.refresh_index

    def leaking(db, progress=None):
        if db.name == "ops":
            raise RuntimeError(f"upstream said no to key {SECRET} at postgresql://bot:hunter22@db.internal/x")
        return real(db, progress)

    monkeypatch.setattr(index_refresh, "refresh_index", leaking)
    with caplog.at_level(logging.INFO, logger="core.index_refresh"):
        done = refresh_due(app, schedules, at(3, 0, 5), grace_s=GRACE)
    assert statuses(done) == [
        ("gone", at(3), "failed"),
        ("ops", at(3), "failed"),
    ]  # one does not stop the other
    failures = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(failures) == 2
    assert all(
        "2025-03-04 03:00 UTC failed" in line and "next try 2025-03-05 03:00 UTC" in line for line in failures
    )
    assert any("'gone'" in line for line in failures) and any("'ops'" in line for line in failures)
    logged = caplog.text + " ".join(r.error for r in done)
    assert SECRET not in logged and "hunter22" not in logged
    audit = [
        (e["question"], e["database"], e["error_kind"]) for e in entries_since(app.state, parse_since("1h"))
    ]
    assert (SCHEDULED, "ops", "internal") in audit and (SCHEDULED, "gone", "database") in audit

    monkeypatch.setattr(index_refresh, "refresh_index", real)
    assert refresh_due(app, schedules, at(3, 1), grace_s=GRACE) == []  # not again until the next tick
    again = refresh_due(app, schedules, at(3, 0, 2, day=1), grace_s=GRACE)
    assert statuses(again) == [("gone", at(3, day=1), "failed"), ("ops", at(3, day=1), "refreshed")]
    assert "Reykjavík" in cities(app)


# ------------------------------------------------------------------ the worker


def _no_chat(_team: str) -> WebClient:
    raise AssertionError("no schedule posts here")


def test_the_worker_heartbeat_runs_the_job_when_an_index_is_due(make_app, ops):
    app = make_app()
    index_database(app, "ops", "build")
    rename_first_city(ops, "Reykjavík")
    clock = Clock(at(2, 59, 58))
    worker = Worker(app, _no_chat, worker_id="w1", clock=clock)
    try:
        assert [s.database for s in worker.index_schedules] == ["ops"]
        worker.step()
        assert worker.indexing is None
        clock.advance(7)
        worker.step()
        assert worker.indexing is not None
        worker.indexing.join(TIMEOUT)
        assert not worker.indexing.is_alive()
        assert "Reykjavík" in cities(app)
        clock.advance(5)
        assert worker.refresh_indexes(clock()) is None  # done for this tick
    finally:
        worker.stop(release=True)
