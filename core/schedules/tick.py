"""One run of a schedule, with no chat in it: run the stored SQL for its tick, decide, record.

`run_tick` takes the schedule's id, the time, and what it needs from the chat it posts in (`Chat`:
who the owner is there, and how the chat words a failure), and returns a `Tick` — what was
recorded, and what the chat should show now: a result to post, a failure to report, an earlier
failure message to mark as recovered. A result to post is recorded once the chat says it got out
(`delivered` / `undelivered`): a result nobody saw must not count as seen, or "only when changed"
would never post it.

The SQL goes through `Askbase.rerun` (access → guard → execute → audit): the owner's permissions
as they are today, the guard's rules as they are today, and one audit row for every run that
reaches the engine. Ticks that are skipped (deleted, paused, backing off) or already ran reach
nothing and record nothing.

A tick runs once: its run is first claimed in the run table (store.claim_run), so two workers that
both fire it — a stalled leader waking up late — give one run. A failing scheduled run backs off
(doubling, at most a day) and after `max_consecutive_failures` in a row pauses the schedule; a
manual run ("Run now") fails only for whoever clicked, and leaves the schedule's streak alone.
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from dataclasses import dataclass, field, replace
from typing import Literal, Protocol

from core.access import Principal
from core.answer import Outcome
from core.askbase import Askbase
from core.schedules import store
from core.schedules.conditions import ConditionError, should_post
from core.schedules.diff import describe_diff, diff
from core.schedules.missed import Missed, missed_runs
from core.schedules.results import Snapshot, fingerprint, snapshot
from core.schedules.store import Schedule
from core.schedules.triggers import as_utc, backoff_until, latest_fire_time

log = logging.getLogger(__name__)

TickStatus = Literal["skipped", "duplicate", "ready", "posted", "quiet", "failed", "paused"]
# Why a run failed. The engine's kinds (Outcome.error_kind: access, database, guard, timeout,
# connection, …) pass through; these are the run's own:
CONDITION = "condition"  # the condition cannot be checked on this result
UNREACHABLE = "unreachable"  # the chat cannot be reached for this schedule (e.g. uninstalled)
DELIVERY = "delivery"  # the chat refused the post; `detail` is its error code
INTERNAL = "internal"  # a bug; the log has the details


@dataclass(frozen=True)
class Failure:
    """Why a run failed, in plain words (the engine's, or the condition's); the chat words it."""

    kind: str
    detail: str = ""


class ChatUnavailable(Exception):
    """Raised by `Chat.principal` when the chat cannot be reached for this schedule; the message
    is recorded as the run's error."""


class Chat(Protocol):
    """What a run needs from the chat it posts in, without knowing which chat that is."""

    def principal(self, schedule: Schedule) -> Principal:
        """The owner, in the schedule's channel, with what access rules may name (user groups)."""
        ...

    def explain(self, schedule: Schedule, failure: Failure) -> str:
        """The failure in the chat's own words and markup: recorded, and shown in the channel."""
        ...


@dataclass(frozen=True)
class Result:
    """A run's result: the answer, what changed since the last run, the missed ticks it covers."""

    outcome: Outcome
    changes: tuple[str, ...]
    missed: Missed
    post: bool  # the condition holds (a manual run posts anyway)
    why: str  # the decision, for the run record: "changed", "no rows", "count > 0 held"…
    manual_by: str | None  # who pressed "Run now" (None for a scheduled run)
    fingerprint: str
    snapshot: Snapshot


@dataclass(frozen=True)
class Notice:
    """A failure of a scheduled run to say in the channel (and to the owner, when it paused it)."""

    text: str  # Chat.explain's words
    limit: int  # failures in a row that pause the schedule
    retry_at: dt.datetime | None  # ticks before this are skipped; None once paused


@dataclass(frozen=True)
class Tick:
    """What one run did, and what the chat should show now.

    status: skipped | duplicate (nothing recorded); ready (`result` is to be posted, then
    `delivered` or `undelivered`); posted | quiet (recorded); failed | paused (recorded, with a
    `notice` for a scheduled run).
    """

    status: TickStatus
    detail: str = ""  # why: "deleted", "backing off", the decision, or the failure's words
    schedule: Schedule | None = None  # as the run found it; after a failure, as it is now
    run_id: int | None = None
    at: dt.datetime | None = None  # the tick the run stands for (a manual run: the click)
    now: dt.datetime | None = None
    result: Result | None = None
    notice: Notice | None = None
    recovered_ts: str | None = None  # an earlier failure message, to mark as working again
    message_ts: str | None = None
    started: float = field(default=0.0, repr=False, compare=False)  # perf_counter, for the run's ms

    @property
    def rows(self) -> int:
        return self.result.outcome.row_count if self.result else 0

    @property
    def manual(self) -> bool:
        return self.result is not None and self.result.manual_by is not None


class _Failed(Exception):
    def __init__(self, failure: Failure, trace_id: str | None = None) -> None:
        super().__init__(failure.detail)
        self.failure = failure
        self.trace_id = trace_id


def run_tick(
    askbase: Askbase,
    schedule_id: int,
    chat: Chat,
    *,
    now: dt.datetime,
    manual_by: str | None = None,
    worker: str = "",
) -> Tick:
    """Run a schedule once for the tick that is due at `now` (or, `manual_by` someone, right now).

    What goes wrong with the query or the condition is recorded and returned; only a state
    database that is down raises (APScheduler logs it; the next tick tries again).
    """
    now = as_utc(now)
    manual = manual_by is not None
    s = store.get(askbase.state, schedule_id)
    if s is None:
        return Tick("skipped", "deleted", now=now)
    if s.paused and not manual:
        return Tick("skipped", "paused", s, now=now)
    at = now if manual else (latest_fire_time(s.trigger, now) or now)
    if not manual and s.retry_at is not None and at < s.retry_at:
        log.info("schedule %s: backing off until %s; tick %s skipped", s.id, s.retry_at, at)
        return Tick("skipped", "backing off", s, at=at, now=now)
    run_id = store.claim_run(askbase.state, s.id, at, manual=manual, worker=worker, now=now)
    if run_id is None:
        return Tick("duplicate", f"tick {at.isoformat()} already ran", s, at=at, now=now)
    tick = Tick("ready", schedule=s, run_id=run_id, at=at, now=now, started=time.perf_counter())
    missed = Missed(0) if manual else missed_runs(s.trigger, s.last_tick, at)
    try:
        result = _result(askbase, s, chat, missed, manual_by)
    except _Failed as failed:
        return _fail(askbase, chat, tick, failed.failure, failed.trace_id, manual=manual)
    except Exception:
        log.exception("schedule %s: run %s failed", s.id, run_id)
        return _fail(askbase, chat, tick, Failure(INTERNAL), None, manual=manual)
    tick = replace(tick, result=result, detail=result.why)
    if result.post or manual:
        return tick
    return _succeeded(askbase, tick, message_ts=None)


def delivered(askbase: Askbase, tick: Tick, message_ts: str) -> Tick:
    """The result of a `ready` tick is in the channel: record the run as posted."""
    _check_ready(tick)
    return _succeeded(askbase, tick, message_ts=message_ts)


def undelivered(askbase: Askbase, chat: Chat, tick: Tick, failure: Failure) -> Tick:
    """The chat refused the result of a `ready` tick: the run failed like any other."""
    result = _check_ready(tick)
    return _fail(askbase, chat, tick, failure, result.outcome.trace.id, manual=tick.manual)


def _check_ready(tick: Tick) -> Result:
    if tick.status != "ready" or tick.result is None:
        raise ValueError(f"tick is {tick.status}, not ready to post")
    return tick.result


def _result(askbase: Askbase, s: Schedule, chat: Chat, missed: Missed, manual_by: str | None) -> Result:
    """Run the stored SQL as the owner, then decide whether it posts and say what changed."""
    outcome = _query(askbase, s, chat)
    try:
        seen = fingerprint(outcome.columns, outcome.rows)
        decision = should_post(s.condition, outcome.columns, outcome.rows, seen, s.last_fingerprint)
    except ConditionError as exc:
        raise _Failed(Failure(CONDITION, str(exc)), outcome.trace.id) from None
    current = snapshot(outcome.columns, outcome.rows, budget=askbase.settings.state.preview_bytes)
    return Result(
        outcome=outcome,
        changes=tuple(describe_diff(diff(s.last_result, current))),
        missed=missed,
        post=decision.post,
        why="; ".join(filter(None, [decision.why, missed.note()])),
        manual_by=manual_by,
        fingerprint=seen,
        snapshot=current,
    )


def _query(askbase: Askbase, s: Schedule, chat: Chat) -> Outcome:
    try:
        owner = chat.principal(s)
    except ChatUnavailable as exc:
        raise _Failed(Failure(UNREACHABLE, str(exc))) from None
    outcome = askbase.rerun(
        s.sql, database=s.database, principal=owner, purpose="schedule_run", question=s.question
    )
    if outcome.status != "answer":
        raise _Failed(Failure(outcome.error_kind or "other", outcome.error), outcome.trace.id)
    return outcome


def _ms(tick: Tick) -> float:
    return round((time.perf_counter() - tick.started) * 1000, 3)


def _succeeded(askbase: Askbase, tick: Tick, *, message_ts: str | None) -> Tick:
    """Forget the failures, keep the result to compare the next run with, close the run record."""
    s, result, run_id = tick.schedule, tick.result, tick.run_id
    assert s is not None and result is not None and run_id is not None
    status: TickStatus = "posted" if message_ts else "quiet"
    rows = result.outcome.row_count
    store.record_success(
        askbase.state,
        s.id,
        tick=None if tick.manual else tick.at,
        status=status,
        rows=rows,
        fingerprint=result.fingerprint,
        result=result.snapshot,
        now=tick.now,
    )
    store.finish_run(
        askbase.state,
        run_id,
        status=status,
        rows=rows,
        ms=_ms(tick),
        note=result.why,
        trace_id=result.outcome.trace.id,
        message_ts=message_ts,
    )
    log.info("schedule %s: %s (%s rows, %s)", s.id, status, rows, result.why)
    recovered = s.error_ts if s.error_ts and not tick.manual else None
    return replace(tick, status=status, message_ts=message_ts, recovered_ts=recovered)


def _fail(
    askbase: Askbase, chat: Chat, tick: Tick, failure: Failure, trace_id: str | None, *, manual: bool
) -> Tick:
    """Record a failed run; a scheduled one counts towards the streak that backs off, then pauses."""
    s, run_id, at = tick.schedule, tick.run_id, tick.at
    assert s is not None and run_id is not None and at is not None
    text = chat.explain(s, failure)
    log.warning("schedule %s: run failed (%s): %s", s.id, failure.kind, failure.detail)
    store.finish_run(askbase.state, run_id, status="failed", ms=_ms(tick), error=text, trace_id=trace_id)
    failed = replace(tick, status="failed", detail=text)
    if manual:  # a click: the person who clicked hears about it; the streak is the schedule's own
        return failed
    limit = max(1, askbase.settings.schedules.max_consecutive_failures)
    retry_at = backoff_until(s.trigger, at, s.failures + 1)
    after = store.record_failure(
        askbase.state, s.id, tick=at, retry_at=retry_at, max_failures=limit, reason=text, now=tick.now
    )
    if after is None:  # deleted meanwhile: nobody to tell
        return failed
    return replace(
        failed,
        status="paused" if after.paused else "failed",
        schedule=after,
        notice=Notice(text, limit, None if after.paused else retry_at),
    )
