"""Question claims (core/state/events.py) on real SQLite and PostgreSQL state databases.

A question is answered once however many deliveries and processes see it, and never lost: a
live claim drops redeliveries, an expired one is taken over by exactly one process, an answered
one by none. Time moves through `now`, so nothing here sleeps.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time

import pytest
import sqlalchemy as sa

from core.conversation import claims
from core.conversation.claims import ClaimKeeper
from core.state import events, open_state
from core.state.bounded import StateUnavailable
from core.state.health import StateProbe

T0 = dt.datetime(2030, 1, 1, 12, 0, tzinfo=dt.UTC)


def at(seconds: float) -> dt.datetime:
    return T0 + dt.timedelta(seconds=seconds)


@pytest.fixture
def sqlite_state(state_url):
    engine = open_state(state_url)
    yield engine
    engine.dispose()


def lifecycle(engine: sa.Engine) -> None:
    first = events.claim(engine, "msg:T:C:1", "web-1", 30, payload={"question": "q"}, delivery="Ev1", now=T0)
    assert first is not None and not first.taken_over
    # Slack's retry while web-1 answers, and the same message as a `message` event: dropped
    assert events.claim(engine, "msg:T:C:1", "web-2", 30, delivery="Ev1", now=at(5)) is None
    assert events.claim(engine, "msg:T:C:1", "web-2", 30, delivery="Ev2", now=at(5)) is None
    assert events.answering(engine, "msg:T:C:1", "web-1", 30, status_ref="111.1", thread_ref="1", now=at(1))
    assert events.renew(engine, ["msg:T:C:1"], "web-1", 30, now=at(20)) == {"msg:T:C:1"}  # until 50 s
    assert events.claim(engine, "msg:T:C:1", "web-2", 30, delivery="Ev1", now=at(45)) is None
    assert events.expired(engine, now=at(45)) == []
    # web-1 dies: nothing renews; after the lease a retry takes over, with the stale status to replace
    assert events.expired(engine, now=at(51)) == ["msg:T:C:1"]
    taken = events.claim(engine, "msg:T:C:1", "web-2", 30, delivery="Ev1", now=at(51))
    assert taken is not None and taken.taken_over and taken.attempts == 2
    assert (taken.status_ref, taken.thread_ref, dict(taken.payload or {})) == (
        "111.1",
        "1",
        {"question": "q"},
    )
    assert taken.received_at == T0
    # the dead process's renewal, had it woken up, no longer holds anything
    assert events.renew(engine, ["msg:T:C:1"], "web-1", 30, now=at(52)) == set()
    events.answered(engine, "msg:T:C:1", now=at(53))
    assert events.state_of(engine, "msg:T:C:1") == "answered"
    # answered: no retry, however late, and no sweep takes it again
    assert events.claim(engine, "msg:T:C:1", "web-3", 30, delivery="Ev1", now=at(3600)) is None
    assert events.expired(engine, now=at(3600)) == []
    # an event id seen before, arriving on a question never claimed, is not a question to answer
    assert events.claim(engine, "msg:T:C:2", "web-3", 30, delivery="Ev1", now=at(60)) is None
    # two days later everything is forgotten
    assert events.prune(engine, now=at(3 * 86400)) >= 3
    assert events.state_of(engine, "msg:T:C:1") is None


def test_claim_lifecycle_on_sqlite(sqlite_state):
    lifecycle(sqlite_state)


@pytest.mark.postgres
def test_claim_lifecycle_on_postgresql(postgres_state):
    engine = open_state(postgres_state)
    try:
        lifecycle(engine)
    finally:
        engine.dispose()


def race(engine: sa.Engine, key: str, holders: int, now: dt.datetime, delivery: str | None) -> list[str]:
    """`holders` processes claim `key` at the same moment; who got it."""
    start = threading.Barrier(holders)
    won: list[str] = []

    def one(name: str) -> None:
        start.wait()
        if events.claim(engine, key, name, 30, delivery=delivery, now=now) is not None:
            won.append(name)

    threads = [threading.Thread(target=one, args=(f"web-{i}",)) for i in range(holders)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


@pytest.mark.postgres
def test_simultaneous_deliveries_and_takeovers_have_one_winner_on_postgresql(postgres_state):
    engine = open_state(postgres_state)
    try:
        for n in range(10):
            assert len(race(engine, f"msg:T:C:{n}", 6, T0, delivery=f"Ev{n}")) == 1
        # every holder died; six processes sweep at once: each question is taken over by one
        for n in range(10):
            assert len(race(engine, f"msg:T:C:{n}", 6, at(60), delivery=None)) == 1
    finally:
        engine.dispose()


def test_simultaneous_deliveries_have_one_winner_on_sqlite(sqlite_state):
    for n in range(5):
        assert len(race(sqlite_state, f"msg:T:C:{n}", 4, T0, delivery=f"Ev{n}")) == 1


def test_a_replayed_request_digest_is_seen_once(sqlite_state):
    assert events.first_request(sqlite_state, "abc", now=T0)
    assert not events.first_request(sqlite_state, "abc", now=at(10))
    assert events.first_request(sqlite_state, "abd", now=at(10))


def test_each_adapter_takes_over_only_its_own_questions(sqlite_state):
    """A Slack process cannot answer a Teams question (nor the other way round): its sweep must
    leave it for a process of the other adapter instead of dropping it as unanswerable."""
    now = dt.datetime.now(dt.UTC)  # the keeper takes claims at the real time
    for key in ("msg:T:C:1", "cmd:T:trigger", "teams:19:x|1"):
        events.claim(sqlite_state, key, "dead", 30, payload={"k": key}, now=now - dt.timedelta(seconds=60))
    assert events.expired(sqlite_state, now=now, prefixes=("teams:",)) == ["teams:19:x|1"]
    keeper = ClaimKeeper(sqlite_state, lease_s=30, wait_s=5)
    seen: list[tuple[str, bool]] = []
    try:
        # the Slack sweep: one question resumed (holding its claim), one apologised for (too old)
        def resume(claim, apologise):
            seen.append((claim.key, apologise))
            return claim.key.startswith("msg:")

        assert claims.recover(keeper, ("msg:", "cmd:"), 3600, resume, now=now) == 2
        assert claims.recover(keeper, ("cmd:",), 0, resume, now=now) == 0  # held now, lease live
    finally:
        keeper.close()
    assert sorted(seen) == [("cmd:T:trigger", False), ("msg:T:C:1", False)]
    assert events.state_of(sqlite_state, "cmd:T:trigger") == "answered"  # resume was done with it
    assert events.state_of(sqlite_state, "msg:T:C:1") == "received"  # an answer under way holds it
    assert events.state_of(sqlite_state, "teams:19:x|1") == "received"  # left for a Teams process
    assert events.expired(sqlite_state, now=now, prefixes=("teams:",)) == ["teams:19:x|1"]


def test_keeper_renews_while_answering_and_lets_a_dead_holder_lapse(sqlite_state):
    keeper = ClaimKeeper(sqlite_state, lease_s=1.0, wait_s=2.0)
    try:
        assert keeper.take("msg:T:C:9", payload={"question": "q"}) is not None
        time.sleep(2.5)  # more than two leases: only the heartbeat keeps it
        assert events.expired(sqlite_state) == []
        keeper.finished("msg:T:C:9")
        assert events.state_of(sqlite_state, "msg:T:C:9") == "answered"
    finally:
        keeper.close()


def test_a_locked_state_database_is_reported_within_the_wait_and_a_late_claim_answers_nothing(
    sqlite_state, tmp_path
):
    lock = sqlite3.connect(tmp_path / "state.sqlite", isolation_level=None)
    lock.execute("BEGIN EXCLUSIVE")
    keeper = ClaimKeeper(sqlite_state, lease_s=30, wait_s=0.5)
    try:
        probe = StateProbe(sqlite_state, timeout_s=0.5)
        started = time.monotonic()
        health = probe.check()
        assert not health.ok and "did not answer" in health.detail
        with pytest.raises(StateUnavailable):
            keeper.take("msg:T:C:late", payload={"question": "q"})
        assert time.monotonic() - started < 3
    finally:
        lock.execute("ROLLBACK")
        lock.close()
    # the claim was still waiting on the lock and lands now: the asker was told to ask again, so
    # it must be closed at once, never answered later by a sweep
    deadline = time.monotonic() + 40
    while events.state_of(sqlite_state, "msg:T:C:late") != "answered":
        assert time.monotonic() < deadline, "the late claim was never closed"
        time.sleep(0.2)
    assert events.expired(sqlite_state, now=at(10**6)) == []
    assert StateProbe(sqlite_state).check().ok
    keeper.close()


def test_a_read_only_state_database_is_unhealthy(tmp_path):
    path = tmp_path / "state.sqlite"
    open_state(f"sqlite:///{path}").dispose()
    engine = sa.create_engine(f"sqlite:///file:{path}?mode=ro&uri=true")  # as a read-only file behaves
    try:
        health = StateProbe(engine).check()
        assert not health.ok and "readonly" in health.detail
    finally:
        engine.dispose()
