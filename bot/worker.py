"""`python -m bot worker`: the scheduler for recurring questions, and what one run of a schedule does.

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

One active scheduler. Workers take a lease row in the state database (`scheduler_lease`) with an
expiry, renewed every poll; a second worker waits and takes over when the lease expires (the
first one died) or is released (it stopped cleanly). Should two ever overlap — a stalled leader
waking up late — each run first claims its tick in `schedule_runs` (unique per schedule and
scheduled time), so a tick still runs once.

A run (`run_schedule`) checks the owner may still query the database from that channel, guards
the stored SQL again, runs it read-only, decides whether to post (always / not empty / changed /
a column condition), and posts like an interactive answer — table, CSV, chart, the answer's
buttons — plus what changed since the last run. A failing run posts one clear error (later
failures in the same streak update that message), backs off, and after
`max_consecutive_failures` in a row pauses the schedule and tells the owner by DM. Every run is
recorded in `schedule_runs` and in the audit log.
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
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import sqlalchemy as sa
from apscheduler.events import EVENT_JOB_ERROR, EVENT_JOB_MAX_INSTANCES, EVENT_JOB_MISSED, JobEvent
from apscheduler.executors.pool import ThreadPoolExecutor
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError

from bot import render
from bot.answering import BLOCK_ERRORS, NOT_EDITABLE, conversation_key
from bot.slack_files import result_files
from bot.usergroups import UsergroupDirectory, slack_principal
from core import schedules as rules
from core.access import Principal
from core.answer import Outcome
from core.askbase import Askbase
from core.database import UnknownDatabase
from core.execute import QueryError, execute
from core.run import check_for, limits_for
from core.settings import Settings
from core.state import conversations, open_state
from core.state import schedules as store
from core.state.schedules import Schedule
from core.summary import summarize
from core.trace import Trace

log = logging.getLogger("askbase.worker")

JOB_PREFIX = "schedule-"
JOBS_TABLE = "apscheduler_jobs"


def utcnow() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


class RunFailure(Exception):
    """A run that could not produce a result; `message` is what the channel reads (Slack mrkdwn,
    so anything that came from the database is escaped before it goes in)."""

    def __init__(self, message: str, kind: str) -> None:
        super().__init__(message)
        self.message = message
        self.kind = kind


@dataclass
class Runner:
    """What a run needs: the engine, the settings, a Slack client per team, and a clock."""

    askbase: Askbase
    settings: Settings
    client_for: Callable[[str], WebClient]
    worker_id: str = ""
    clock: Callable[[], dt.datetime] = utcnow
    usergroups: UsergroupDirectory = field(default_factory=UsergroupDirectory)

    def principal(self, client: WebClient, s: Schedule) -> Principal:
        """The owner, in the schedule's channel, with the user groups access rules may name."""
        return slack_principal(
            self.settings, client, self.usergroups, team=s.team, channel=s.channel, user=s.owner
        )

    @property
    def state(self) -> sa.Engine:
        return self.askbase.state


@dataclass(frozen=True)
class RunReport:
    status: str  # posted | quiet | failed | paused | skipped | duplicate
    detail: str = ""
    rows: int = 0
    message_ts: str | None = None
    schedule: Schedule | None = field(default=None, compare=False)


# ---------------------------------------------------------------- one run


def run_schedule(
    runner: Runner, schedule_id: int, *, manual: bool = False, by: str | None = None
) -> RunReport:
    """Run a schedule once for the tick that is due now (or, `manual`, right now).

    What goes wrong with the query, the condition or Slack is reported in the channel and returned;
    only a state database that is down raises (APScheduler logs it; the next tick tries again).
    """
    now = rules.as_utc(runner.clock())
    s = store.get(runner.state, schedule_id)
    if s is None:
        return RunReport("skipped", "deleted")
    if s.paused and not manual:
        return RunReport("skipped", "paused", schedule=s)
    tick = now if manual else (rules.latest_fire_time(s.trigger, now) or now)
    if not manual and s.retry_at is not None and tick < s.retry_at:
        log.info("schedule %s: backing off until %s; tick %s skipped", s.id, s.retry_at, tick)
        return RunReport("skipped", "backing off", schedule=s)
    run_id = store.claim_run(runner.state, s.id, tick, manual=manual, worker=runner.worker_id, now=now)
    if run_id is None:
        return RunReport("duplicate", f"tick {tick.isoformat()} already ran", schedule=s)
    missed = rules.Missed(0) if manual else rules.missed_runs(s.trigger, s.last_tick, tick)
    started = time.perf_counter()
    trace = Trace(question=s.question, database=s.database)
    try:
        client = runner.client_for(s.team)
        outcome = _query(runner, s, trace, runner.principal(client, s))
        fingerprint = rules.fingerprint(outcome.columns, outcome.rows)
        decision = rules.should_post(
            s.condition, outcome.columns, outcome.rows, fingerprint, s.last_fingerprint
        )
    except rules.ConditionError as exc:
        return _failed(
            runner, s, run_id, tick, manual, trace, RunFailure(render.escape(str(exc)), "condition"), started
        )
    except RunFailure as exc:
        return _failed(runner, s, run_id, tick, manual, trace, exc, started)
    except Exception:
        log.exception("schedule %s: run %s failed", s.id, run_id)
        failure = RunFailure("something went wrong on my side (the log has the details)", "internal")
        return _failed(runner, s, run_id, tick, manual, trace, failure, started)
    _audit(runner, s, outcome)
    current = rules.snapshot(outcome.columns, outcome.rows)
    changes = rules.describe_diff(rules.diff(s.last_result, current))
    ts: str | None = None
    if decision.post or manual:
        try:
            ts = post_result(runner, client, s, outcome, changes, missed, manual_by=by if manual else None)
        except SlackApiError as exc:
            error = f"I could not post in <#{s.channel}> ({exc.response.get('error')})"
            return _failed(runner, s, run_id, tick, manual, trace, RunFailure(error, "slack"), started)
        _remember_turn(runner, s, outcome, ts)
    status = "posted" if ts else "quiet"
    store.record_success(
        runner.state,
        s.id,
        tick=None if manual else tick,
        status=status,
        rows=outcome.row_count,
        fingerprint=fingerprint,
        result=current,
        now=now,
    )
    store.finish_run(
        runner.state,
        run_id,
        status=status,
        rows=outcome.row_count,
        ms=round((time.perf_counter() - started) * 1000, 3),
        note="; ".join(filter(None, [decision.why, missed.note()])),
        trace_id=trace.id,
        message_ts=ts,
    )
    if s.error_ts and not manual:
        _mark_recovered(client, s)
    log.info("schedule %s: %s (%s rows, %s)", s.id, status, outcome.row_count, decision.why)
    return RunReport(status, decision.why, outcome.row_count, ts, schedule=s)


def _query(runner: Runner, s: Schedule, trace: Trace, owner: Principal) -> Outcome:
    """Guard and run the stored SQL with the owner's permissions, as an answer Outcome."""
    settings = runner.settings
    if not rules.may_query(
        settings, s.database, channel=s.channel, user=s.owner, usergroups=owner.usergroups
    ):
        raise RunFailure(f"<@{s.owner}> may no longer query `{s.database}` from <#{s.channel}>", "access")
    try:
        db = runner.askbase.database(s.database)
    except UnknownDatabase:
        raise RunFailure(f"the database `{s.database}` is not configured any more", "database") from None
    with trace.stage("guard") as stage:
        verdict = check_for(db, s.sql, settings.engine)
        stage.outputs = {"allowed": verdict.allowed, "reason": verdict.reason, "sql": verdict.sql}
    if not verdict.allowed:
        reason = render.escape(verdict.reason)
        raise RunFailure(f"the stored query is not allowed any more: it {reason}", "guard")
    try:
        with trace.stage("execute") as stage:
            result = execute(db, verdict.sql, limits_for(db, settings.engine))
            stage.outputs = {"rows": result.row_count, "truncated": result.truncated}
    except QueryError as exc:
        if exc.kind == "timeout":
            raise RunFailure("the query took too long and was stopped", "timeout") from None
        if exc.kind == "connection":
            raise RunFailure(f"I could not reach the database `{s.database}`", "connection") from None
        detail = render.escape(exc.message[:300])
        raise RunFailure(f"the database refused the query: {detail}", exc.kind) from None
    return Outcome(
        status="answer",
        question=s.question,
        database=db.name,
        answer=summarize("", result.columns, result.rows, result.truncated),
        sql=verdict.sql,
        columns=result.columns,
        rows=result.rows,
        truncated=result.truncated,
        trace=trace,
    )


def _audit(runner: Runner, s: Schedule, outcome: Outcome) -> None:
    """Every run is in the audit log, as the owner's question in the schedule's channel."""
    runner.askbase.audit(outcome, source="schedule", principal=Principal.of(s.owner, s.channel))


def _remember_turn(runner: Runner, s: Schedule, outcome: Outcome, ts: str) -> None:
    """Store the run as a turn of its own thread: Show SQL, CSV, 👍 and follow-ups work on it."""
    key = conversation_key(s.team, s.channel, ts)
    try:
        conversations.ensure_conversation(runner.state, key, s.database, channel=s.channel, user=s.owner)
        conversations.record_turn(runner.state, key, outcome, user=s.owner)
    except Exception:
        log.exception("schedule %s: could not store the turn", s.id)


def _failed(
    runner: Runner,
    s: Schedule,
    run_id: int,
    tick: dt.datetime,
    manual: bool,
    trace: Trace,
    failure: RunFailure,
    started: float,
) -> RunReport:
    log.warning("schedule %s: run failed (%s): %s", s.id, failure.kind, failure.message)
    outcome = Outcome(
        status="error",
        question=s.question,
        database=s.database,
        sql=s.sql,
        error=failure.message,
        error_kind=failure.kind,
        trace=trace,
    )
    _audit(runner, s, outcome)
    store.finish_run(
        runner.state,
        run_id,
        status="failed",
        ms=round((time.perf_counter() - started) * 1000, 3),
        error=failure.message,
        trace_id=trace.id,
    )
    if manual:  # a click: the person who clicked hears about it; the streak is the schedule's own
        return RunReport("failed", failure.message, schedule=s)
    limit = max(1, runner.settings.schedules.max_consecutive_failures)
    retry_at = rules.backoff_until(s.trigger, tick, s.failures + 1)
    after = store.record_failure(
        runner.state, s.id, tick=tick, retry_at=retry_at, max_failures=limit, reason=failure.message
    )
    if after is None:  # deleted meanwhile
        return RunReport("failed", failure.message)
    try:
        client = runner.client_for(s.team)
    except Exception:
        log.exception("schedule %s: no Slack client to report the failure", s.id)
        return RunReport("paused" if after.paused else "failed", failure.message, schedule=after)
    _report_failure(runner, client, after, failure.message, retry_at, limit)
    return RunReport("paused" if after.paused else "failed", failure.message, schedule=after)


def _report_failure(
    runner: Runner, client: WebClient, s: Schedule, error: str, retry_at: dt.datetime, limit: int
) -> None:
    question = render.escape(s.question)
    if s.paused:
        text = (
            f":double_vertical_bar: I paused the scheduled question *{question}* after {s.failures} "
            f"failed runs in a row. Last error: {error}. <@{s.owner}> can resume it with `/ask schedules` "
            "once that is fixed."
        )
    else:
        following = rules.next_fire_time(s.trigger, retry_at - dt.timedelta(microseconds=1))
        text = (
            f":warning: The scheduled question *{question}* failed: {error}.\n"
            f"I'll try again {slack_time(following) if following else 'later'} "
            f"({s.failures} of {limit} failures in a row; at {limit} I pause it)."
        )
    message = render.Message(text=text, blocks=[render.section(text)])
    ts = _post_or_update(client, s.channel, s.error_ts, message)
    if ts and ts != s.error_ts and not s.paused:
        store.set_error_message(runner.state, s.id, ts)
    if s.paused:
        dm = (
            f"Your scheduled question *{question}* in <#{s.channel}> failed {s.failures} times in a row, "
            f"so I paused it. Last error: {error}. When it is fixed, resume it with `/ask schedules` in "
            "that channel or from my Home tab."
        )
        try:
            client.chat_postMessage(channel=s.owner, text=dm, blocks=[render.section(dm)])
        except SlackApiError as exc:
            log.warning("schedule %s: could not DM the owner: %s", s.id, exc.response.get("error"))


def _post_or_update(client: WebClient, channel: str, ts: str | None, message: render.Message) -> str | None:
    """Edit our earlier message when there is one; else post. The ts, or None when Slack refused."""
    try:
        if ts:
            try:
                client.chat_update(channel=channel, ts=ts, text=message.text, blocks=message.blocks)
                return ts
            except SlackApiError as exc:
                if exc.response.get("error") not in NOT_EDITABLE:
                    raise
        posted = client.chat_postMessage(channel=channel, text=message.text, blocks=message.blocks)
        return posted.get("ts")
    except SlackApiError as exc:
        log.warning("could not post in %s: %s", channel, exc.response.get("error"))
        return None


def _mark_recovered(client: WebClient, s: Schedule) -> None:
    text = f":white_check_mark: The scheduled question *{render.escape(s.question)}* works again."
    _post_or_update(client, s.channel, s.error_ts, render.Message(text=text, blocks=[render.section(text)]))


# ---------------------------------------------------------------- the message


def slack_time(when: dt.datetime) -> str:
    """A time every reader sees in their own timezone (Slack's date formatting)."""
    stamp = int(rules.as_utc(when).timestamp())
    fallback = rules.as_utc(when).strftime("%Y-%m-%d %H:%M UTC")
    return f"<!date^{stamp}^{{date_short_pretty}} at {{time}}|{fallback}>"


def schedule_line(s: Schedule) -> str:
    """ "every weekday at 09:00 (Europe/Berlin) · only when the result changed"."""
    parts = [s.trigger.describe()]
    if s.condition.kind != "always":
        parts.append(s.condition.describe())
    return " · ".join(parts)


def run_blocks(
    s: Schedule,
    message: render.Message,
    changes: list[str],
    missed: rules.Missed,
    manual_by: str | None = None,
) -> list[dict[str, Any]]:
    """An answer message framed as a scheduled run: what it is, the result, what changed, controls."""
    head = f":repeat: *{render.escape(s.question)}* — {render.escape(schedule_line(s))} · <@{s.owner}>'s schedule"
    if manual_by:
        head += f" · run now by <@{manual_by}>"
    extra = []
    if changes:
        extra.append(render.context("*Since the last run:* " + render.escape("\n".join(changes))))
    if missed.count:
        extra.append(render.context(f":hourglass: {missed.note()}"))
    controls = render.actions(
        f"schedule_run:{s.id}",
        render.button("Pause schedule", "schedule_pause", str(s.id)),
        render.button("Run now", "schedule_run", str(s.id)),
    )
    body, buttons = message.blocks[:-1], message.blocks[-1:]
    room = render.MAX_BLOCKS - 1 - len(extra) - len(buttons) - 1
    return [render.context(head), *body[:room], *extra, *buttons, controls]


def post_result(
    runner: Runner,
    client: WebClient,
    s: Schedule,
    outcome: Outcome,
    changes: list[str],
    missed: rules.Missed,
    manual_by: str | None = None,
) -> str:
    """Post the run at the top of the channel, its CSV and chart in the thread under it; the ts."""
    table_rows = max(1, min(runner.settings.slack.table_rows, 99))
    message = render.answer_message(outcome, table_rows=table_rows)
    text = render.clip(f"{s.question} — {message.text}", render.MAX_TEXT)
    try:
        posted = client.chat_postMessage(
            channel=s.channel, text=text, blocks=run_blocks(s, message, changes, missed, manual_by)
        )
    except SlackApiError as exc:
        if exc.response.get("error") not in BLOCK_ERRORS:
            raise
        message = render.answer_message(outcome, table_rows=table_rows, use_table=False)
        posted = client.chat_postMessage(
            channel=s.channel, text=text, blocks=run_blocks(s, message, changes, missed, manual_by)
        )
    ts = posted["ts"]
    files = result_files(outcome, with_csv=message.wants_csv) if outcome.rows else []
    if files:
        try:
            client.files_upload_v2(channel=s.channel, thread_ts=ts, file_uploads=files)
        except Exception as exc:  # the result is out; a missing file is noted in the log only
            log.warning("schedule %s: file upload failed: %s", s.id, exc)
    return ts


# ---------------------------------------------------------------- the scheduler

_active: Runner | None = None  # the runner of the worker that leads; read by `fire`
_active_lock = threading.Lock()


def fire(schedule_id: int) -> None:
    """The APScheduler job (stored by reference as `bot.worker:fire`)."""
    with _active_lock:
        runner = _active
    if runner is None:
        log.warning("schedule %s fired with no active worker; skipped", schedule_id)
        return
    run_schedule(runner, schedule_id)


class Worker:
    """Waits for the lease, then runs the scheduler and keeps its jobs in line with the table."""

    def __init__(
        self,
        askbase: Askbase,
        settings: Settings,
        client_for: Callable[[str], WebClient],
        *,
        worker_id: str | None = None,
    ) -> None:
        self.id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"
        self.settings = settings
        self.runner = Runner(askbase, settings, client_for, worker_id=self.id)
        self.scheduler: BackgroundScheduler | None = None
        self._renewed = 0.0

    @property
    def poll_s(self) -> float:
        return max(0.05, float(self.settings.schedules.poll_s))

    @property
    def lease_s(self) -> float:
        return max(self.poll_s * 2, float(self.settings.schedules.lease_s))

    @property
    def leading(self) -> bool:
        return self.scheduler is not None

    def run(self, stop: threading.Event) -> None:
        """Until `stop` is set: lead when possible, sync every poll, hand over on the way out."""
        log.info("worker %s started; waiting for the scheduler lease", self.id)
        try:
            while not stop.is_set():
                self.step()
                stop.wait(self.poll_s)
        finally:
            self.stop(release=True)

    def step(self) -> None:
        """One heartbeat: take or renew the lease, then sync the jobs (or step down)."""
        engine = self.runner.state
        try:
            if not self.leading:
                if store.acquire_lease(engine, self.id, self.lease_s):
                    self._renewed = time.monotonic()
                    self._lead()
                return
            if not store.renew_lease(engine, self.id, self.lease_s):
                log.warning("worker %s lost the scheduler lease; stepping down", self.id)
                self.stop(release=False)
                return
            self._renewed = time.monotonic()
            self.sync()
        except Exception:
            log.exception("worker %s: scheduler heartbeat failed", self.id)
            if self.leading and time.monotonic() - self._renewed > self.lease_s:
                self.stop(release=False)  # our lease has run out by now: someone else may lead

    def _lead(self) -> None:
        global _active
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
            _active = self.runner
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
        wanted = {s.job_id: s for s in store.active(self.runner.state)}
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
        global _active
        scheduler, self.scheduler = self.scheduler, None
        if scheduler is not None:
            with _active_lock:
                if _active is self.runner:
                    _active = None
            try:
                scheduler.shutdown(wait=wait)
            except Exception:
                log.exception("worker %s: scheduler shutdown failed", self.id)
        if release:
            try:
                store.release_lease(self.runner.state, self.id)
            except Exception:
                log.exception("worker %s: could not release the lease", self.id)


def _log_event(event: JobEvent) -> None:
    if event.code == EVENT_JOB_MISSED:
        log.warning("job %s missed its run time beyond the grace period; skipped", event.job_id)
    elif event.code == EVENT_JOB_MAX_INSTANCES:
        log.warning("job %s is still running from its last tick; this tick skipped", event.job_id)
    else:
        log.error("job %s raised: %s", event.job_id, getattr(event, "exception", None))


# ---------------------------------------------------------------- Slack clients and the command


def slack_clients(settings: Settings, askbase: Askbase) -> Callable[[str], WebClient]:
    """A Slack client per team: the bot token, or each workspace's OAuth installation."""
    from bot.slack_app import oauth_configured, web_client

    token = settings.slack.bot_token.get_secret_value() if settings.slack.bot_token else ""
    if token:
        client = web_client(settings, token)
        return lambda _team: client
    if not oauth_configured(settings):
        raise ValueError("Set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET.")
    from slack_sdk.oauth.installation_store.sqlalchemy import SQLAlchemyInstallationStore

    installations = SQLAlchemyInstallationStore(
        client_id=settings.slack.client_id or "", engine=askbase.state
    )
    clients: dict[str, WebClient] = {}

    def client_for(team: str) -> WebClient:
        bot = installations.find_bot(enterprise_id=None, team_id=team or None)
        if bot is None or not bot.bot_token:
            raise RunFailure("Askbase is not installed in this workspace any more", "slack")
        if team not in clients or clients[team].token != bot.bot_token:
            clients[team] = web_client(settings, bot.bot_token)
        return clients[team]

    return client_for


def run_worker(args: argparse.Namespace, settings: Settings) -> int:
    askbase = Askbase(settings)
    try:
        client_for = slack_clients(settings, askbase)
    except ValueError as exc:
        print(f"The worker posts to Slack: {exc}", file=sys.stderr)
        askbase.close()
        return 2
    worker = Worker(askbase, settings, client_for)
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
