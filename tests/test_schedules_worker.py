"""The worker: a real APScheduler with its job store in a real state database, one-second schedules,
the fake Slack API. Two workers share the state database as two processes would (each with its own
engines); only one runs the scheduler, and each tick is run once.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time
import uuid
from collections import Counter

import pytest
import sqlalchemy as sa
from slack_sdk import WebClient
from sqlalchemy.engine import make_url

from bot.worker import JOBS_TABLE, Worker
from core.askbase import Askbase
from core.schedules import lease, store
from core.schedules.triggers import interval_spec
from core.settings import load_settings
from tests.fakes.slack_api import FakeSlack
from tests.slack_requests import BOT_TOKEN

CHANNEL = "C0WORK"
TIMEOUT = 10


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE incidents (id INTEGER PRIMARY KEY, team TEXT)")
        conn.executemany("INSERT INTO incidents (team) VALUES (?)", [("core",), ("web",)])
    return path


class Running:
    """A worker on its own thread with its own engines, as a separate process would have."""

    def __init__(self, settings, slack: FakeSlack, name: str) -> None:
        self.askbase = Askbase(settings)
        client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
        self.worker = Worker(self.askbase, lambda _team: client, worker_id=name)
        self.stop_event = threading.Event()
        self.crashed = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self) -> None:
        try:
            while not self.stop_event.is_set() and not self.crashed.is_set():
                self.worker.step()
                self.stop_event.wait(self.worker.poll_s)
        finally:
            if not self.crashed.is_set():
                self.worker.stop(release=True)

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): running jobs finish, the lease is handed on."""
        self.stop_event.set()
        self.thread.join(TIMEOUT)
        self.askbase.close()

    def crash(self) -> None:
        """Dies without a word: the scheduler stops, the lease row stays until it expires."""
        self.crashed.set()
        self.thread.join(TIMEOUT)
        scheduler, self.worker.scheduler = self.worker.scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        self.askbase.close()


@pytest.fixture
def state_url(tmp_path) -> str:
    return f"sqlite:///{tmp_path / 'state.sqlite'}"


@pytest.fixture
def start(tmp_path, slack, shop, state_url):
    running: list[Running] = []

    def make(name: str) -> Running:
        settings = load_settings(
            var_dir=str(tmp_path / "var"),
            state_url=state_url,
            databases={"shop": {"url": f"sqlite:///{shop}"}},
            slack={"bot_token": BOT_TOKEN, "api_base_url": slack.base_url},
            schedules={"min_interval_s": 1, "poll_s": 0.1, "lease_s": 1.0},
        )
        r = Running(settings, slack, name)
        running.append(r)
        return r

    yield make
    for r in running:
        if r.thread.is_alive():
            r.stop()


def leader(workers) -> Running:
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        leading = [w for w in workers if w.worker.leading]
        if leading:
            assert len(leading) == 1
            return leading[0]
        time.sleep(0.05)
    raise AssertionError("no worker took the lease")


def create(r: Running, every: int = 1):
    return store.create(
        r.askbase.state,
        team="T0001",
        channel=CHANNEL,
        owner="U0OWNER",
        question="How many incidents?",
        sql="SELECT COUNT(*) AS incidents FROM incidents",
        database="shop",
        trigger=interval_spec(every),
    )


def results(slack: FakeSlack):
    return [m for m in slack.messages.values() if m.channel == CHANNEL and m.table() is not None]


def wait_results(slack: FakeSlack, n: int):
    return slack.wait_for(lambda s: len(results(s)) >= n and results(s), timeout=TIMEOUT)


def eventually(predicate) -> None:
    deadline = time.monotonic() + TIMEOUT
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.05)


def settled(r: Running, schedule_id: int) -> None:
    time.sleep(0.2)
    eventually(lambda: all(run.status != "running" for run in runs(r, schedule_id)))


def runs(r: Running, schedule_id: int):
    return store.runs(r.askbase.state, schedule_id, limit=1000)


def test_two_workers_run_one_scheduler_and_each_tick_once(start, slack):
    a, b = start("worker-a"), start("worker-b")
    first = leader([a, b])
    other = b if first is a else a
    s = create(first)
    wait_results(slack, 3)
    assert not other.worker.leading
    assert lease.current_holder(first.askbase.state, now=dt.datetime.now(dt.UTC)) == first.worker.id

    # the leader stops (a deploy): the other takes over, and the ticks go on being run once
    first.stop()
    assert leader([other]) is other
    before = len(results(slack))
    wait_results(slack, before + 2)
    other.stop()

    done = runs(other, s.id)
    ticks = Counter(r.scheduled_for for r in done)
    assert max(ticks.values()) == 1
    assert {r.worker for r in done} == {"worker-a", "worker-b"}
    assert len(results(slack)) == len([r for r in done if r.status == "posted"])


def test_a_crashed_leaders_lease_expires_and_another_worker_takes_over(start, slack):
    a = start("worker-a")
    leader([a])
    s = create(a)
    wait_results(slack, 1)
    b = start("worker-b")
    time.sleep(0.3)
    assert not b.worker.leading  # the lease is live: b waits
    a.crash()
    assert leader([b]) is b
    count = len(results(slack))
    wait_results(slack, count + 1)
    assert "worker-b" in {r.worker for r in runs(b, s.id)}


def test_a_restarted_worker_keeps_its_schedules_and_runs_missed_ticks_once_with_a_note(
    start, slack, state_url
):
    a = start("worker-a")
    leader([a])
    s = create(a)
    wait_results(slack, 1)
    a.stop()
    with sa.create_engine(state_url).connect() as conn:
        stored = conn.execute(sa.text(f"SELECT id FROM {JOBS_TABLE}")).scalars().all()
    assert stored == [f"schedule-{s.id}"]  # the job store kept the job while no worker ran

    time.sleep(2.2)  # two ticks pass with no worker
    posted = len(results(slack))
    b = start("worker-b")
    leader([b])
    catch_up = wait_results(slack, posted + 1)
    notes = [m.all_text() for m in catch_up if "was not running" in m.all_text()]
    assert len(notes) == 1 and "this one run covers them" in notes[0]
    ticks = Counter(r.scheduled_for for r in runs(b, s.id))
    assert max(ticks.values()) == 1


def test_pause_resume_and_delete_reach_the_running_scheduler(start, slack):
    a = start("worker-a")
    leader([a])
    s = create(a)
    wait_results(slack, 1)

    store.pause(a.askbase.state, s.id)
    eventually(lambda: not a.worker.scheduler.get_jobs())
    settled(a, s.id)  # a run already under way may still post
    paused_at = len(results(slack))
    time.sleep(1.6)
    assert len(results(slack)) == paused_at

    store.resume(a.askbase.state, s.id)
    wait_results(slack, paused_at + 1)

    store.delete(a.askbase.state, s.id)
    eventually(lambda: not a.worker.scheduler.get_jobs())
    time.sleep(0.5)  # a run under way when the row went may still post
    gone_at = len(results(slack))
    time.sleep(1.6)
    assert len(results(slack)) == gone_at
    assert store.get(a.askbase.state, s.id) is None


@pytest.fixture
def postgres_state():
    """A fresh PostgreSQL database for the state (what several processes share in production)."""
    from tests.servers import admin_engine, server_url

    name = f"askbase_sched_{uuid.uuid4().hex[:8]}"
    admin = admin_engine("ASKBASE_TEST_POSTGRES_URL").execution_options(isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    yield (
        make_url(server_url("ASKBASE_TEST_POSTGRES_URL"))
        .set(database=name)
        .render_as_string(hide_password=False)
    )
    with admin.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


@pytest.mark.postgres
def test_two_workers_on_a_postgresql_state_database_run_each_tick_once(postgres_state, tmp_path, slack, shop):
    settings = load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=postgres_state,
        databases={"shop": {"url": f"sqlite:///{shop}"}},
        slack={"bot_token": BOT_TOKEN, "api_base_url": slack.base_url},
        schedules={"min_interval_s": 1, "poll_s": 0.1, "lease_s": 1.0},
    )
    a, b = Running(settings, slack, "worker-a"), Running(settings, slack, "worker-b")
    try:
        first = leader([a, b])
        s = create(first)
        wait_results(slack, 3)
        done = runs(first, s.id)
    finally:
        a.stop()
        b.stop()
    assert max(Counter(r.scheduled_for for r in done).values()) == 1
    assert {r.worker for r in done} == {first.worker.id}
