"""Scheduled questions and their runs, in the state database.

A chat adapter (any web process) creates, pauses, resumes and deletes rows here; the worker that
holds the lease (lease.py) turns the active rows into APScheduler jobs, and every run is recorded
here (tick.py). A run first *claims* its tick — (schedule, scheduled time) is unique — so two
workers that both believe they lead still give one run per tick.

All times are stored in UTC. SQLite hands them back naive; `as_utc` (core/state/rows.py `stored_utc`
for optional ones) makes them aware again.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Literal

import sqlalchemy as sa

from core.redact import scrub_question
from core.schedules.conditions import Condition
from core.schedules.results import Snapshot
from core.schedules.triggers import TriggerSpec, as_utc
from core.state.rows import all_rows, first_row, new_id, stored_utc, utcnow
from core.state.schema import schedule_runs, schedules

Platform = Literal["slack", "teams"]

RUNS_KEPT = 500  # per schedule; older run records are pruned as new ones are claimed


@dataclass(frozen=True)
class Schedule:
    id: int
    team: str
    channel: str
    owner: str
    question: str
    sql: str
    database: str
    trigger: TriggerSpec
    condition: Condition
    paused: bool
    paused_reason: str
    revision: int
    failures: int
    retry_at: dt.datetime | None
    error_ts: str | None
    last_tick: dt.datetime | None
    last_run_at: dt.datetime | None
    last_status: str | None
    last_rows: int | None
    last_fingerprint: str | None
    last_result: Snapshot | None
    source_trace: str | None
    created_at: dt.datetime
    updated_at: dt.datetime
    platform: Platform = "slack"  # the chat it posts in
    address: dict[str, Any] | None = (
        None  # how that chat is reached unprompted (Teams: a conversation reference)
    )

    @property
    def job_id(self) -> str:
        return f"schedule-{self.id}"

    @property
    def job_name(self) -> str:
        """Changes when the timing changes, so the worker knows to replace the job."""
        return f"schedule {self.id} r{self.revision}"


def _schedule(row: Any) -> Schedule:
    m = row._mapping
    return Schedule(
        id=m["id"],
        team=m["team"],
        channel=m["channel"],
        owner=m["owner"],
        question=m["question"],
        sql=m["sql"],
        database=m["database"],
        trigger=TriggerSpec.from_json(m["trigger"]),
        condition=Condition.from_json(m["condition"]),
        paused=bool(m["paused"]),
        paused_reason=m["paused_reason"] or "",
        revision=m["revision"],
        failures=m["failures"],
        retry_at=stored_utc(m["retry_at"]),
        error_ts=m["error_ts"],
        last_tick=stored_utc(m["last_tick"]),
        last_run_at=stored_utc(m["last_run_at"]),
        last_status=m["last_status"],
        last_rows=m["last_rows"],
        last_fingerprint=m["last_fingerprint"],
        last_result=Snapshot.from_json(m["last_result"]),
        source_trace=m["source_trace"],
        created_at=as_utc(m["created_at"]),
        updated_at=as_utc(m["updated_at"]),
        platform="teams" if m["platform"] == "teams" else "slack",
        address=m["address"] if isinstance(m["address"], dict) else None,
    )


def create(
    engine: sa.Engine,
    *,
    team: str,
    channel: str,
    owner: str,
    question: str,
    sql: str,
    database: str,
    trigger: TriggerSpec,
    condition: Condition | None = None,
    source_trace: str | None = None,
    now: dt.datetime | None = None,
    platform: Platform = "slack",
    address: dict[str, Any] | None = None,
) -> Schedule:
    """Store a new schedule; an interval is counted from now."""
    now = as_utc(now or utcnow())
    values = {
        "team": team,
        "channel": channel,
        "owner": owner,
        "question": scrub_question(question)[0],  # stored without secrets, whoever hands it over
        "sql": sql,
        "database": database,
        "trigger": trigger.anchored(now).to_json(),
        "condition": (condition or Condition()).to_json(),
        "paused": False,
        "revision": 1,
        "failures": 0,
        "last_tick": now,
        "source_trace": source_trace,
        "created_at": now,
        "updated_at": now,
        "platform": platform,
        "address": address,
    }
    with engine.begin() as conn:
        schedule_id = new_id(conn.execute(schedules.insert().values(**values)))
    found = get(engine, schedule_id)
    assert found is not None
    return found


def get(engine: sa.Engine, schedule_id: int) -> Schedule | None:
    return first_row(engine, sa.select(schedules).where(schedules.c.id == schedule_id), _schedule)


def _list(engine: sa.Engine, *where: Any) -> list[Schedule]:
    return all_rows(engine, sa.select(schedules).where(*where).order_by(schedules.c.id), _schedule)


def for_channel(engine: sa.Engine, team: str, channel: str, platform: Platform = "slack") -> list[Schedule]:
    return _list(
        engine, schedules.c.team == team, schedules.c.channel == channel, schedules.c.platform == platform
    )


def for_owner(engine: sa.Engine, owner: str, team: str | None = None) -> list[Schedule]:
    where = [schedules.c.owner == owner]
    if team is not None:
        where.append(schedules.c.team == team)
    return _list(engine, *where)


def active(engine: sa.Engine) -> list[Schedule]:
    return _list(engine, schedules.c.paused == sa.false())


def _update(engine: sa.Engine, schedule_id: int, **values: Any) -> Schedule | None:
    with engine.begin() as conn:
        conn.execute(
            schedules.update().where(schedules.c.id == schedule_id).values(updated_at=utcnow(), **values)
        )
    return get(engine, schedule_id)


def pause(engine: sa.Engine, schedule_id: int, reason: str = "") -> Schedule | None:
    return _update(engine, schedule_id, paused=True, paused_reason=reason)


def resume(engine: sa.Engine, schedule_id: int, now: dt.datetime | None = None) -> Schedule | None:
    """Run again from the next tick: failures forgiven, the paused time not counted as missed."""
    return _update(
        engine,
        schedule_id,
        paused=False,
        paused_reason=None,
        failures=0,
        retry_at=None,
        error_ts=None,
        last_tick=as_utc(now or utcnow()),
    )


def delete(engine: sa.Engine, schedule_id: int) -> bool:
    with engine.begin() as conn:
        conn.execute(schedule_runs.delete().where(schedule_runs.c.schedule_id == schedule_id))
        return bool(conn.execute(schedules.delete().where(schedules.c.id == schedule_id)).rowcount)


# ---------------------------------------------------------------- runs


def claim_run(
    engine: sa.Engine,
    schedule_id: int,
    scheduled_for: dt.datetime,
    *,
    manual: bool = False,
    worker: str = "",
    now: dt.datetime | None = None,
) -> int | None:
    """Take the run of one tick; None when another run already has it."""
    try:
        with engine.begin() as conn:
            run_id = new_id(
                conn.execute(
                    schedule_runs.insert().values(
                        schedule_id=schedule_id,
                        scheduled_for=as_utc(scheduled_for),
                        manual=manual,
                        worker=worker,
                        started_at=as_utc(now or utcnow()),
                        status="running",
                    )
                )
            )
    except sa.exc.IntegrityError:
        return None
    _prune_runs(engine, schedule_id)
    return run_id


def _prune_runs(engine: sa.Engine, schedule_id: int) -> None:
    """Keep the latest RUNS_KEPT run records of a schedule (an every-minute one makes 1,440 a day)."""
    keep = RUNS_KEPT
    with engine.begin() as conn:
        cutoff = conn.execute(
            sa.select(schedule_runs.c.id)
            .where(schedule_runs.c.schedule_id == schedule_id)
            .order_by(schedule_runs.c.id.desc())
            .offset(keep)
            .limit(1)
        ).scalar()
        if cutoff is not None:
            conn.execute(
                schedule_runs.delete().where(
                    schedule_runs.c.schedule_id == schedule_id, schedule_runs.c.id <= cutoff
                )
            )


def finish_run(
    engine: sa.Engine,
    run_id: int,
    *,
    status: str,
    rows: int | None = None,
    ms: float | None = None,
    error: str | None = None,
    note: str | None = None,
    trace_id: str | None = None,
    message_ts: str | None = None,
) -> None:
    with engine.begin() as conn:
        conn.execute(
            schedule_runs.update()
            .where(schedule_runs.c.id == run_id)
            .values(
                finished_at=utcnow(),
                status=status,
                rows=rows,
                ms=ms,
                error=error,
                note=note,
                trace_id=trace_id,
                message_ts=message_ts,
            )
        )


@dataclass(frozen=True)
class Run:
    """One run of a schedule, as recorded: the tick it stood for and how it ended."""

    id: int
    schedule_id: int
    scheduled_for: dt.datetime  # the tick (or, for a manual run, the click)
    manual: bool
    worker: str
    started_at: dt.datetime
    finished_at: dt.datetime | None
    status: str  # running | posted | quiet | failed
    rows: int | None
    ms: float | None
    error: str | None
    note: str | None
    trace_id: str | None
    message_ts: str | None


def runs(engine: sa.Engine, schedule_id: int, limit: int = 50) -> list[Run]:
    """The latest runs first."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(schedule_runs)
            .where(schedule_runs.c.schedule_id == schedule_id)
            .order_by(schedule_runs.c.scheduled_for.desc(), schedule_runs.c.id.desc())
            .limit(limit)
        ).all()
    return [
        Run(
            id=m["id"],
            schedule_id=m["schedule_id"],
            scheduled_for=as_utc(m["scheduled_for"]),
            manual=bool(m["manual"]),
            worker=m["worker"] or "",
            started_at=as_utc(m["started_at"]),
            finished_at=stored_utc(m["finished_at"]),
            status=m["status"],
            rows=m["rows"],
            ms=m["ms"],
            error=m["error"],
            note=m["note"],
            trace_id=m["trace_id"],
            message_ts=m["message_ts"],
        )
        for m in (r._mapping for r in rows)
    ]


def record_success(
    engine: sa.Engine,
    schedule_id: int,
    *,
    tick: dt.datetime | None,
    status: str,
    rows: int,
    fingerprint: str,
    result: Snapshot,
    now: dt.datetime | None = None,
) -> None:
    """A run worked: forget the failures, keep the result to compare the next run with."""
    values: dict[str, Any] = {
        "failures": 0,
        "retry_at": None,
        "error_ts": None,
        "last_run_at": as_utc(now or utcnow()),
        "last_status": status,
        "last_rows": rows,
        "last_fingerprint": fingerprint,
        "last_result": result.to_json(),
    }
    if tick is not None:
        values["last_tick"] = as_utc(tick)
    with engine.begin() as conn:
        conn.execute(
            schedules.update().where(schedules.c.id == schedule_id).values(updated_at=utcnow(), **values)
        )


def record_failure(
    engine: sa.Engine,
    schedule_id: int,
    *,
    tick: dt.datetime | None,
    retry_at: dt.datetime | None,
    max_failures: int,
    reason: str,
    now: dt.datetime | None = None,
) -> Schedule | None:
    """Count a failed run; the schedule pauses itself at `max_failures` in a row."""
    now = as_utc(now or utcnow())
    with engine.begin() as conn:
        key = schedules.c.id == schedule_id
        conn.execute(
            schedules.update()
            .where(key)
            .values(failures=schedules.c.failures + 1, updated_at=now, last_run_at=now, last_status="failed")
        )
        failures = conn.execute(sa.select(schedules.c.failures).where(key)).scalar()
        if failures is None:
            return None
        values: dict[str, Any] = {"retry_at": as_utc(retry_at) if retry_at else None}
        if tick is not None:
            values["last_tick"] = as_utc(tick)
        if failures >= max_failures:
            values.update(paused=True, paused_reason=reason, retry_at=None)
        conn.execute(schedules.update().where(key).values(**values))
    return get(engine, schedule_id)


def set_error_message(engine: sa.Engine, schedule_id: int, ts: str | None) -> None:
    with engine.begin() as conn:
        conn.execute(schedules.update().where(schedules.c.id == schedule_id).values(error_ts=ts))
