"""The worker: a real APScheduler with its job store in a real state database, and the fake Slack API.
Two workers share the state database as two processes would (each with its own engines); only one
runs the scheduler, and each tick is run once.

Time is a clock the test moves. The lease, the tick a run belongs to and the missed-tick count
are read on it, so a lease expires and three ticks pass without anyone sleeping. APScheduler keeps
real time; a tick "comes" when the test makes the leader's job due now (`fire_now`), which is what
APScheduler itself does when the job's time comes. Settings are production's (a 5 s poll, a 30 s
lease, a one-minute schedule): with a clock to move, nothing needs shrinking.
"""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time
from collections import Counter

import pytest
import sqlalchemy as sa
from slack_sdk import WebClient

from bot.schedule_runs import run_and_post
from bot.worker import JOBS_TABLE, Worker, fire
from core.askbase import Askbase
from core.bench.fakes.slack_api import FakeSlack
from core.schedules import lease, store
from core.schedules.triggers import interval_spec
from core.settings import load_settings
from tests.clock import Clock
from tests.slack_requests import BOT_TOKEN

CHANNEL = "C0WORK"
EVERY = 60
TIMEOUT = 10
WORKER_SETTINGS = {"min_interval_s": 60, "poll_s": 5, "lease_s": 30}


@pytest.fixture
def shop(tmp_path):
    path = tmp_path / "shop.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE incidents (id INTEGER PRIMARY KEY, team TEXT)")
        conn.executemany("INSERT INTO incidents (team) VALUES (?)", [("core",), ("web",)])
    return path


class Running:
    """A worker with its own engines, as a separate process would have. The test beats its heart
    (`step`, what the loop does every poll) or runs its real loop on a thread (`loop`)."""

    def __init__(self, settings, slack: FakeSlack, name: str, clock: Clock) -> None:
        self.askbase = Askbase(settings)
        client = WebClient(token=BOT_TOKEN, base_url=slack.base_url)
        self.worker = Worker(self.askbase, lambda _team: client, worker_id=name, clock=clock)
        self.stop_event = threading.Event()
        self.thread: threading.Thread | None = None
        self.closed = False

    def step(self) -> Running:
        self.worker.step()
        return self

    def loop(self) -> None:
        self.thread = threading.Thread(target=self.worker.run, args=(self.stop_event,), daemon=True)
        self.thread.start()

    def stop(self) -> None:
        """A clean shutdown (SIGTERM): running jobs finish, the lease is handed on."""
        if self.closed:
            return
        self.closed = True
        self.stop_event.set()
        if self.thread is not None:
            self.thread.join(TIMEOUT)
        self.worker.stop(release=True)
        self.askbase.close()

    def crash(self) -> None:
        """Dies without a word: the scheduler stops, the lease row stays until it expires."""
        self.closed = True
        scheduler, self.worker.scheduler = self.worker.scheduler, None
        if scheduler is not None:
            scheduler.shutdown(wait=False)
        self.askbase.close()


def worker_settings(tmp_path, slack, shop, state_url, **schedules):
    return load_settings(
        var_dir=str(tmp_path / "var"),
        state_url=state_url,
        databases={"shop": {"url": f"sqlite:///{shop}"}},
        slack={"bot_token": BOT_TOKEN, "api_base_url": slack.base_url},
        schedules={**WORKER_SETTINGS, **schedules},
    )


@pytest.fixture
def start(tmp_path, slack, shop, state_url, clock):
    running: list[Running] = []

    def make(name: str, **schedules) -> Running:
        r = Running(worker_settings(tmp_path, slack, shop, state_url, **schedules), slack, name, clock)
        running.append(r)
        return r

    yield make
    for r in running:
        r.stop()


def leaders(*workers: Running) -> list[Running]:
    return [w for w in workers if w.worker.leading]


def create(r: Running, clock: Clock):
    return store.create(
        r.askbase.state,
        team="T0001",
        channel=CHANNEL,
        owner="U0OWNER",
        question="How many incidents?",
        sql="SELECT COUNT(*) AS incidents FROM incidents",
        database="shop",
        trigger=interval_spec(EVERY),
        now=clock(),
    )


def fire_now(r: Running, s) -> None:
    """The job's time has come: make the leader's APScheduler job due now (it runs it at once)."""
    r.worker.scheduler.modify_job(s.job_id, next_run_time=dt.datetime.now(dt.UTC))


def eventually(predicate):
    deadline = time.monotonic() + TIMEOUT
    while not (value := predicate()):
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.01)
    return value


def runs(r: Running, schedule_id: int):
    return store.runs(r.askbase.state, schedule_id, limit=1000)


def finished(r: Running, schedule_id: int, n: int):
    """Wait until `n` runs of the schedule are recorded and none is still under way."""

    def settled() -> bool:
        done = runs(r, schedule_id)
        return len(done) >= n and all(x.status != "running" for x in done)

    eventually(settled)
    return runs(r, schedule_id)


def results(slack: FakeSlack):
    return [m for m in list(slack.messages.values()) if m.channel == CHANNEL and m.result() is not None]


def tick(r: Running, s, clock: Clock, n: int) -> None:
    """One more tick: a minute passes, the leader's heart beats, the job fires; wait for run `n`."""
    clock.advance(EVERY)
    r.step()
    fire_now(r, s)
    finished(r, s.id, n)


def test_two_workers_run_one_scheduler_and_each_tick_once(start, slack, clock):
    a, b = start("worker-a").step(), start("worker-b").step()
    assert leaders(a, b) == [a]
    assert lease.current_holder(a.askbase.state, now=clock()) == "worker-a"
    s = create(a, clock)
    for n in (1, 2, 3):
        tick(a, s, clock, n)
        b.step()
        assert leaders(a, b) == [a]  # the lease is live: b keeps waiting
    assert len(results(slack)) == 3

    # a stalled second scheduler fires the same tick late: the run table refuses it
    assert run_and_post(b.worker.runner, s.id).status == "duplicate"

    # the leader stops (a deploy): it hands the lease on, and the other takes over at once
    a.stop()
    assert leaders(b.step()) == [b]
    for n in (4, 5):
        tick(b, s, clock, n)

    done = runs(b, s.id)
    assert max(Counter(r.scheduled_for for r in done).values()) == 1
    assert Counter(r.worker for r in done) == {"worker-a": 3, "worker-b": 2}
    assert len(results(slack)) == len([r for r in done if r.status == "posted"]) == 5


def test_a_crashed_leaders_lease_expires_and_another_worker_takes_over(start, slack, clock):
    a = start("worker-a").step()
    s = create(a, clock)
    tick(a, s, clock, 1)
    b = start("worker-b").step()
    assert leaders(a, b) == [a]
    a.crash()

    lease_s = b.worker.lease_s
    clock.advance(lease_s - 1)
    assert not b.step().worker.leading  # the dead leader's lease is still live
    clock.advance(2)
    assert b.step().worker.leading  # expired: b takes over
    assert lease.current_holder(b.askbase.state, now=clock()) == "worker-b"
    tick(b, s, clock, 2)
    assert [r.worker for r in runs(b, s.id)] == ["worker-b", "worker-a"]
    assert len(results(slack)) == 2


def test_a_restarted_worker_keeps_its_schedules_and_runs_missed_ticks_once_with_a_note(
    start, slack, clock, state_url
):
    a = start("worker-a").step()
    created = clock()
    s = create(a, clock)
    tick(a, s, clock, 1)
    a.stop()
    with sa.create_engine(state_url).connect() as conn:
        stored = conn.execute(sa.text(f"SELECT id FROM {JOBS_TABLE}")).scalars().all()
    assert stored == [s.job_id]  # the job store kept the job while no worker ran

    clock.advance(3 * EVERY + 5)  # three ticks pass with no worker
    b = start("worker-b").step()
    assert b.worker.leading and [job.id for job in b.worker.scheduler.get_jobs()] == [s.job_id]
    # APScheduler keeps real time: its job is now three ticks overdue, as after a real outage, and
    # it makes them one run (coalesce) within the grace time
    overdue = dt.datetime.now(dt.UTC) - dt.timedelta(seconds=3 * EVERY)
    b.worker.scheduler.modify_job(s.job_id, next_run_time=overdue)
    latest, first = finished(b, s.id, 2)
    assert (latest.worker, latest.status) == ("worker-b", "posted")
    assert latest.scheduled_for == created + dt.timedelta(seconds=4 * EVERY)  # it stands for the latest
    assert first.scheduled_for == created + dt.timedelta(seconds=EVERY)
    catch_up = results(slack)[-1]
    assert "not running at 2 scheduled times; this one run covers them" in catch_up.all_text()
    assert len(results(slack)) == 2


def test_pause_resume_and_delete_reach_the_running_scheduler(start, slack, clock):
    a = start("worker-a", poll_s=0.05)  # the real loop, polling quickly: the test waits on it
    a.loop()
    eventually(lambda: a.worker.leading)
    s = create(a, clock)
    eventually(lambda: a.worker.scheduler.get_jobs())
    clock.advance(EVERY)
    fire_now(a, s)
    finished(a, s.id, 1)

    store.pause(a.askbase.state, s.id)
    eventually(lambda: not a.worker.scheduler.get_jobs())
    clock.advance(EVERY)
    fire(s.id)  # a job that fires anyway (it was under way when the row changed) runs nothing
    assert len(results(slack)) == 1 and len(runs(a, s.id)) == 1

    store.resume(a.askbase.state, s.id, now=clock())
    eventually(lambda: a.worker.scheduler.get_jobs())
    clock.advance(EVERY)
    fire_now(a, s)
    finished(a, s.id, 2)
    assert len(results(slack)) == 2
    assert "was not running" not in results(slack)[-1].all_text()  # the pause is not "missed"

    store.delete(a.askbase.state, s.id)
    eventually(lambda: not a.worker.scheduler.get_jobs())
    clock.advance(EVERY)
    fire(s.id)
    assert len(results(slack)) == 2
    assert store.get(a.askbase.state, s.id) is None and runs(a, s.id) == []


@pytest.mark.postgres
def test_two_workers_on_a_postgresql_state_database_run_each_tick_once(
    postgres_state, tmp_path, slack, shop, clock
):
    settings = worker_settings(tmp_path, slack, shop, postgres_state)
    a, b = Running(settings, slack, "worker-a", clock), Running(settings, slack, "worker-b", clock)
    try:
        # both start at the same moment and race for the lease
        ready = threading.Barrier(2)
        racers = [threading.Thread(target=lambda r=r: (ready.wait(), r.step())) for r in (a, b)]
        for t in racers:
            t.start()
        for t in racers:
            t.join(TIMEOUT)
        (first,) = leaders(a, b)
        other = b if first is a else a
        s = create(first, clock)
        for n in (1, 2, 3):
            tick(first, s, clock, n)
            # the other worker fires the same tick too (two schedulers overlapping): refused
            assert run_and_post(other.worker.runner, s.id).status == "duplicate"
        done = runs(first, s.id)
    finally:
        a.stop()
        b.stop()
    assert max(Counter(r.scheduled_for for r in done).values()) == 1
    assert {r.worker for r in done} == {first.worker.id}
    assert len(results(slack)) == 3
