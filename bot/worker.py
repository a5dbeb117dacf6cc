"""`python -m bot worker`: the lease, and the APScheduler loop that fires scheduled questions.

How the worker learns about schedules. The `schedules` table is the only thing the Slack app
writes: any web process creates, pauses, resumes and deletes rows there. The worker that holds
the lease owns an APScheduler BackgroundScheduler whose SQLAlchemy job store lives in the same
state database, and every `schedules.poll_s` seconds it *syncs*: one job per active row (job id
`schedule-<id>`, job name carrying the row's revision), jobs of paused or deleted rows removed.
Only that one scheduler ever touches the job store — APScheduler 3 does not support two
schedulers sharing one (its maintainers say so in issues #129 and #231) — and the web processes
never need to reach the worker. A new schedule starts firing within `poll_s`; a pause or delete
takes effect at once, because every run re-reads its row first.

The job store is what makes restarts safe: it keeps each job's next run time, so on start
APScheduler sees runs that fell due while no worker ran and, with `coalesce`, makes them one run
(within `misfire_grace_s`); that run says how many scheduled times it stands for. The job is
`bot.worker:fire` with the schedule id as its only argument — nothing else is pickled.

One active scheduler. Workers take a lease row in the state database (core/schedules/lease.py)
with an expiry, renewed every poll; a second worker waits and takes over when the lease expires
(the first one died) or is released (it stopped cleanly). Should two ever overlap — a stalled
leader waking up late — each run first claims its tick, so a tick still runs once. The lease is
read on the worker's `clock`, which a test moves instead of sleeping.

What one run does is core/schedules/tick.py; posting it is bot/slack/schedule_posts.py (Slack) or
bot/teams/posts.py (schedules made in Teams, `platform = "teams"`, posted proactively with their
stored conversation reference). A worker runs both kinds; either chat may be left unconfigured,
and then its schedules' runs fail with a clear reason (and pause) instead of stopping the worker.

Value indexes on a schedule. A database with `index_refresh` (a cron line) has its value index
refreshed by the worker — by every worker, leading or not, since each var dir keeps its own
indexes: each heartbeat asks core/index_refresh.py which are due on the worker's `clock`
(`due`) and runs the job (`refresh_due`: `python -m bot index refresh`'s path, once per tick
under the index's lock) on a thread of its own, so a refresh of many minutes never holds up the
lease. A failed refresh is logged and tried again at the next tick; it never stops the worker.
"""

from __future__ import annotations

import argparse
import datetime as dt
import logging
import os
import signal
import socket
import sys
import threading
import uuid
from collections.abc import Callable
from typing import Any

from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient

from bot.schedule_runs import run_and_post, utcnow
from bot.slack.clients import team_clients
from bot.slack.schedule_posts import Runner
from bot.teams import posts as teams_posts
from bot.teams.config import startup_problem as teams_problem
from core import index_refresh
from core.askbase import Askbase
from core.conversation.upkeep import open_state
from core.schedules import lease
from core.schedules.tick import ChatUnavailable
from core.schedules.triggers import as_utc
from core.settings import Settings

log = logging.getLogger("askbase.worker")

JOB_PREFIX = "schedule-"
JOBS_TABLE = "apscheduler_jobs"

_active: Runner | None = None  # the runner of the worker that leads; read by `fire`
_active_teams: teams_posts.TeamsRunner | None = None  # its Teams side
_active_lock = threading.Lock()


def fire(schedule_id: int) -> None:
    """The APScheduler job (stored by reference as `bot.worker:fire`)."""
    with _active_lock:
        runner, teams = _active, _active_teams
    if runner is None:
        log.warning("schedule %s fired with no active worker; skipped", schedule_id)
        return
    schedule = runner.conversations.scheduled(schedule_id)
    if schedule is not None and schedule.platform == "teams" and teams is not None:
        run_and_post(teams, schedule_id)
        return
    run_and_post(runner, schedule_id)


class Worker:
    """Waits for the lease, then runs the scheduler and keeps its jobs in line with the table."""

    def __init__(
        self,
        askbase: Askbase,
        client_for: Callable[[str], WebClient],
        *,
        worker_id: str | None = None,
        clock: Callable[[], dt.datetime] = utcnow,
    ) -> None:
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.settings = askbase.settings
        self.clock = clock
        self.runner = Runner(askbase, client_for, worker_id=self.id, clock=clock)
        self.teams = teams_posts.teams_runner(askbase, worker_id=self.id, clock=clock)
        self.scheduler: BackgroundScheduler | None = None
        self._renewed: dt.datetime | None = None
        # value indexes refreshed on a schedule; a cron line that cannot be read stops the start
        self.index_schedules = index_refresh.index_schedules(self.settings)
        self.indexing: threading.Thread | None = None  # the refreshes running now, if any

    @property
    def poll_s(self) -> float:
        return max(0.05, float(self.settings.schedules.poll_s))

    @property
    def lease_s(self) -> float:
        return max(self.poll_s * 2, float(self.settings.schedules.lease_s))

    @property
    def index_grace_s(self) -> float:
        """A refresh tick missed by more than this (no worker ran) waits for the next one."""
        return max(float(self.settings.schedules.misfire_grace_s), self.poll_s * 2)

    @property
    def leading(self) -> bool:
        return self.scheduler is not None

    def run(self, stop: threading.Event) -> None:
        """Until `stop` is set: lead when possible, sync every poll, hand over on the way out."""
        log.info("worker %s started; waiting for the scheduler lease", self.id)
        now = as_utc(self.clock())
        for schedule in self.index_schedules:
            nxt = index_refresh.next_tick(schedule, now)
            log.info(
                "value index of '%s' refreshed on %s; next at %s",
                schedule.database,
                schedule.describe(),
                nxt.isoformat() if nxt else "never",
            )
        try:
            while not stop.is_set():
                self.step()
                stop.wait(self.poll_s)
        finally:
            self.stop(release=True)
            indexing = self.indexing
            if indexing is not None and indexing.is_alive():
                log.info("worker %s: waiting for the value-index refresh to finish", self.id)
                indexing.join()

    def step(self) -> None:
        """One heartbeat: take or renew the lease, then sync the jobs (or step down); and start the
        value-index refreshes that are due."""
        now = as_utc(self.clock())
        self._lease_step(now)
        self.refresh_indexes(now)

    def refresh_indexes(self, now: dt.datetime) -> threading.Thread | None:
        """Start the value-index refreshes due at `now` on a thread of their own, unless the last
        ones still run (their ticks are then taken up by a later heartbeat). Returns the thread."""
        if not self.index_schedules or (self.indexing is not None and self.indexing.is_alive()):
            return None
        app = self.runner.askbase
        try:
            last = index_refresh.last_ticks(app, self.index_schedules)
            pending = index_refresh.due(self.index_schedules, now, last, grace_s=self.index_grace_s)
        except Exception:
            log.exception("worker %s: could not tell which value indexes are due", self.id)
            return None
        if not pending:
            return None
        thread = threading.Thread(
            target=self._refresh_indexes, args=(now,), name=f"index-refresh-{self.id}", daemon=True
        )
        self.indexing = thread
        thread.start()
        return thread

    def _refresh_indexes(self, now: dt.datetime) -> None:
        try:
            index_refresh.refresh_due(
                self.runner.askbase, self.index_schedules, now, grace_s=self.index_grace_s
            )
        except Exception:  # refresh_due logs its own failures; this is a bug, and the worker goes on
            log.exception("worker %s: value-index refresh job failed", self.id)

    def _lease_step(self, now: dt.datetime) -> None:
        """Take or renew the lease, then sync the jobs (or step down)."""
        engine = self.runner.askbase.state
        try:
            if not self.leading:
                if lease.acquire(engine, self.id, self.lease_s, now=now):
                    self._renewed = now
                    self._lead()
                return
            if not lease.renew(engine, self.id, self.lease_s, now=now):
                log.warning("worker %s lost the scheduler lease; stepping down", self.id)
                self.stop(release=False)
                return
            self._renewed = now
            self.sync()
        except Exception:
            log.exception("worker %s: scheduler heartbeat failed", self.id)
            expired = self._renewed is None or now - self._renewed > dt.timedelta(seconds=self.lease_s)
            if self.leading and expired:
                self.stop(release=False)  # our lease has run out by now: someone else may lead

    def _lead(self) -> None:
        global _active, _active_teams
        schedules = self.settings.schedules
        jobstore = SQLAlchemyJobStore(
            engine=open_state(self.settings.state_database_url), tablename=JOBS_TABLE
        )
        scheduler = BackgroundScheduler(
            jobstores={"default": jobstore},
            executors={"default": ThreadPoolExecutor(max(1, self.settings.slack.workers))},
            job_defaults={
                "coalesce": True,
                "max_instances": 1,
                "misfire_grace_time": schedules.misfire_grace_s,
            },
            timezone=dt.UTC,
        )
        scheduler.add_listener(_log_event, EVENT_JOB_MISSED | EVENT_JOB_ERROR | EVENT_JOB_MAX_INSTANCES)
        with _active_lock:
            _active, _active_teams = self.runner, self.teams
        scheduler.start(paused=True)  # jobs of deleted or paused rows go before anything fires
        self.scheduler = scheduler
        self.sync()
        scheduler.resume()
        log.info("worker %s leads the scheduler (%d schedules)", self.id, len(scheduler.get_jobs()))

    def sync(self) -> None:
        """One job per active schedule; a changed timing replaces the job, pausing removes it."""
        scheduler = self.scheduler
        if scheduler is None:
            return
        wanted = {s.job_id: s for s in self.runner.conversations.active_schedules()}
        have = {job.id: job for job in scheduler.get_jobs()}
        for job_id, s in wanted.items():
            job = have.get(job_id)
            if job is not None and job.name == s.job_name:
                continue
            scheduler.add_job(
                fire,
                trigger=s.trigger.trigger(),
                args=[s.id],
                id=job_id,
                name=s.job_name,
                replace_existing=True,
            )
            log.info("schedule %s: %s (%s)", s.id, "updated" if job else "scheduled", s.trigger.describe())
        for job_id in have.keys() - wanted.keys():
            if job_id.startswith(JOB_PREFIX):
                scheduler.remove_job(job_id)
                log.info("schedule %s: unscheduled", job_id.removeprefix(JOB_PREFIX))

    def stop(self, *, release: bool = True, wait: bool = True) -> None:
        """Stop scheduling (running jobs finish when `wait`); `release` hands the lease on at once."""
        global _active, _active_teams
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            with _active_lock:
                if _active is self.runner:
                    _active, _active_teams = None, None
            try:
                scheduler.shutdown(wait=wait)
            except Exception:
                log.exception("worker %s: scheduler shutdown failed", self.id)
        if release:
            try:
                lease.release(self.runner.askbase.state, self.id)
            except Exception:
                log.exception("worker %s: could not release the lease", self.id)


def _log_event(event: JobEvent) -> None:
    if event.code == EVENT_JOB_MISSED:
        log.warning("job %s missed its run time beyond the grace period; skipped", event.job_id)
    elif event.code == EVENT_JOB_MAX_INSTANCES:
        log.warning("job %s is still running from its last tick; this tick skipped", event.job_id)
    else:
        log.error("job %s raised: %s", event.job_id, getattr(event, "exception", None))


def _no_slack(_team: str) -> WebClient:
    raise ChatUnavailable("the worker has no Slack token configured (SLACK_BOT_TOKEN)")


def run_worker(args: argparse.Namespace, settings: Settings) -> int:
    askbase = Askbase(settings)
    try:
        client_for = team_clients(settings, askbase.state)
    except ValueError as exc:
        if teams_problem(settings) is not None:
            print(
                f"The worker posts to Slack or Teams. Slack: {exc} Teams: set the bot's app id "
                "(CONNECTIONS__SERVICE_CONNECTION__SETTINGS__CLIENTID), see docs/teams.md.",
                file=sys.stderr,
            )
            askbase.close()
            return 2
        client_for = _no_slack
    try:
        worker = Worker(askbase, client_for)
    except index_refresh.IndexScheduleError as exc:
        print(f"Configuration error: {exc}", file=sys.stderr)
        askbase.close()
        return 2
    stop = threading.Event()

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    try:
        worker.run(stop)
    finally:
        askbase.close()
    log.info("worker %s stopped", worker.id)
    return 0
