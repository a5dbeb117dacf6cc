"""One tick with no chat at all (core/schedules/tick.py): a real database and state database, a
`Chat` that is a plain class, and a clock the test moves. What a tick returns is what a chat
adapter would post; what it records is read back from the state database.
"""

from __future__ import annotations

import datetime as dt
import sqlite3

import pytest

from core.access import Principal
from core.askbase import Askbase
from core.schedules import store, tick
from core.schedules.conditions import Condition
from core.schedules.store import Schedule
from core.schedules.tick import Failure
from core.schedules.triggers import interval_spec
from core.settings import load_settings
from core.state import audit

START = dt.datetime(2025, 6, 2, 8, 0, tzinfo=dt.UTC)
MINUTE = dt.timedelta(minutes=1)


class Plain:
    """A chat without markup: the owner is who the schedule says; a failure reads `kind: detail`."""

    def principal(self, schedule: Schedule) -> Principal:
        return Principal.of(schedule.owner, schedule.channel)

    def explain(self, schedule: Schedule, failure: Failure) -> str:
        return f"{failure.kind}: {failure.detail}"


@pytest.fixture
def askbase(tmp_path, state_url):
    shop = tmp_path / "shop.sqlite"
    with sqlite3.connect(shop) as conn:
        conn.execute("CREATE TABLE orders (id INTEGER PRIMARY KEY, status TEXT)")
        conn.executemany("INSERT INTO orders (status) VALUES (?)", [("late",), ("open",)])
    engine = Askbase(
        load_settings(
            var_dir=str(tmp_path / "var"),
            state_url=state_url,
            databases={"shop": {"url": f"sqlite:///{shop}"}},
        )
    )
    yield engine
    engine.close()


def make(askbase: Askbase, condition: Condition | None = None) -> Schedule:
    return store.create(
        askbase.state,
        team="T1",
        channel="C1",
        owner="U1",
        question="Late orders?",
        sql="SELECT id FROM orders WHERE status = 'late' ORDER BY id",
        database="shop",
        trigger=interval_spec(60),
        condition=condition,
        now=START,
    )


def test_a_tick_says_what_to_post_and_records_the_run_once_it_is_delivered(askbase):
    s = make(askbase)
    ready = tick.run_tick(askbase, s.id, Plain(), now=START + MINUTE, worker="w1")
    assert ready.status == "ready" and ready.at == START + MINUTE
    assert ready.result.outcome.rows == [(1,)] and ready.result.changes == (
        "First run — nothing to compare with yet.",
    )
    (run,) = store.runs(askbase.state, s.id)
    assert (run.status, run.worker) == ("running", "w1")
    assert store.get(askbase.state, s.id).last_fingerprint is None  # not seen yet

    done = tick.delivered(askbase, ready, "1700000000.000100")
    assert (done.status, done.message_ts, done.rows) == ("posted", "1700000000.000100", 1)
    (run,) = store.runs(askbase.state, s.id)
    assert (run.status, run.rows, run.message_ts) == ("posted", 1, "1700000000.000100")
    assert store.get(askbase.state, s.id).last_fingerprint == ready.result.fingerprint
    entries = audit.entries_since(askbase.state, dt.timedelta(days=3650))
    assert [(e["source"], e["user"], e["status"]) for e in entries] == [("schedule_run", "U1", "answer")]


def test_a_result_that_was_not_delivered_fails_the_run_and_counts_as_unseen(askbase):
    s = make(askbase, Condition("changed"))
    ready = tick.run_tick(askbase, s.id, Plain(), now=START + MINUTE)
    failed = tick.undelivered(askbase, Plain(), ready, Failure(tick.DELIVERY, "channel_not_found"))
    assert (failed.status, failed.detail) == ("failed", "delivery: channel_not_found")
    assert failed.notice.text == failed.detail and failed.notice.limit == 3
    assert failed.schedule.failures == 1 and failed.notice.retry_at == START + 2 * MINUTE
    with pytest.raises(ValueError):
        tick.delivered(askbase, failed, "1.2")  # only a ready tick can be delivered

    again = tick.run_tick(askbase, s.id, Plain(), now=START + 2 * MINUTE)
    assert again.status == "ready" and again.result.why == "first result"


def test_quiet_runs_and_skipped_ticks_post_nothing(askbase):
    s = make(askbase, Condition("changed"))
    first = tick.run_tick(askbase, s.id, Plain(), now=START + MINUTE)
    tick.delivered(askbase, first, "1.1")
    quiet = tick.run_tick(askbase, s.id, Plain(), now=START + 2 * MINUTE)
    assert (quiet.status, quiet.detail, quiet.result.why) == ("quiet", "unchanged", "unchanged")
    assert tick.run_tick(askbase, s.id, Plain(), now=START + 2 * MINUTE).status == "duplicate"
    store.pause(askbase.state, s.id)
    assert tick.run_tick(askbase, s.id, Plain(), now=START + 3 * MINUTE).status == "skipped"
    store.delete(askbase.state, s.id)
    assert tick.run_tick(askbase, s.id, Plain(), now=START + 4 * MINUTE).detail == "deleted"
    statuses = [e["status"] for e in audit.entries_since(askbase.state, dt.timedelta(days=3650))]
    assert statuses == ["answer", "answer"]  # the two runs that reached the database
