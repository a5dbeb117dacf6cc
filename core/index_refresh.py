"""Building and refreshing value indexes: the one way `python -m bot index` and the worker do it.

`index_database` is what `python -m bot index build|refresh` runs for each database: through
`Askbase.operating` (the operator's access decided first, the statements attributed to `index`,
one audit row with the number of values indexed, or what failed), after re-reading the catalog if
the schema moved, under the index's lock.

The worker (bot/worker.py) refreshes on a schedule: a database whose `index_refresh` is a cron
expression (`databases.<name>.index_refresh`, in `index_refresh_timezone`) has its index refreshed
at each of its fire times, through the same `index_database` path. Three plain functions, each
taking the time, so a test moves time instead of sleeping:

  `index_schedules(settings)`  the databases that have a schedule, their cron read (a bad one is a
                               `IndexScheduleError` naming the database and the setting)
  `due(schedules, now, last)`  which of them are due at `now`: their latest fire time is later
                               than the tick refreshed last, and not older than the grace
  `refresh_due(app, ...)`      the job: refresh each database due at `now`, once per tick

Once per tick, whoever runs it. An index lives in the var dir (`core/values/store.py index_path`),
so what two processes must not do at once is write the same folder: each build or refresh holds a
lock file beside it (`<index>.lock`, `flock`: released by the kernel when a process dies, so a
crash never leaves it held) and, within a process, `core.demo_file.build_lock`. The tick a
scheduled refresh stands for is recorded beside the index (`<index>.refresh.json`) under that
lock, so a second worker that gets the lock afterwards finds the tick done, and one that finds it
held skips the tick (`busy`) rather than waiting. Workers with separate var dirs keep separate
indexes, and each refreshes its own.

A refresh that fails is logged in one line (the error as a person may see it, secrets removed),
recorded as failed, and not tried again until the next tick; nothing here raises into the worker.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.askbase import Askbase
from core.database import Database
from core.db_errors import public_error
from core.redact import redact
from core.schedules.errors import ScheduleError
from core.schedules.triggers import TriggerSpec, as_utc, cron_spec, latest_fire_time, next_fire_time
from core.settings import Settings
from core.values import IndexStats, ProgressFn, build_index, index_path, refresh_index
from core.values.lock import index_lock

log = logging.getLogger(__name__)

Action = Literal["build", "refresh"]
SCHEDULED = "index refresh (scheduled)"  # what the audit row of a scheduled refresh shows
SOURCE = "index"  # whom the statements and the audit row are attributed to, as the command's


# ------------------------------------------------------------------ one build or refresh


def record_path(db: Database) -> Path:
    """Where the tick of `db`'s last scheduled refresh is recorded, beside its index folder."""
    path = index_path(db)
    return path.with_name(f"{path.name}.refresh.json")


def index_database(
    app: Askbase,
    name: str,
    action: Action = "refresh",
    progress: ProgressFn | None = None,
    *,
    on_start: Callable[[Database], None] | None = None,
    on_wait: Callable[[Database], None] | None = None,
) -> IndexStats:
    """Build or refresh `name`'s value index as the operator: `python -m bot index`'s path.

    Waits for a build or refresh of the same index running elsewhere (`on_wait` is told). Raises
    what `Askbase.operating` raises (AccessRefused, UnknownDatabase, the database's errors), each
    audited.
    """
    db = app.database(name)
    with index_lock(db, on_wait=None if on_wait is None else lambda: on_wait(db)):
        return _index(app, name, action, progress, action_text=f"index {action}", on_start=on_start)


def _index(
    app: Askbase,
    name: str,
    action: Action,
    progress: ProgressFn | None,
    *,
    action_text: str,
    on_start: Callable[[Database], None] | None = None,
) -> IndexStats:
    """The work itself, the index's lock held by the caller."""
    with app.operating(action_text, db=name, source=SOURCE) as run:
        db = run.database
        if on_start is not None:
            on_start(db)
        db.refresh()  # a long-lived process re-reads the catalog when the schema moved
        stats = (build_index if action == "build" else refresh_index)(db, progress)
        run.rows = stats.values
    return stats


# ------------------------------------------------------------------ schedules


class IndexScheduleError(ValueError):
    """A database's `index_refresh` (or its timezone) that cannot be read; names both."""


@dataclass(frozen=True)
class IndexSchedule:
    """A database whose value index the worker refreshes, and when."""

    database: str
    spec: TriggerSpec

    def describe(self) -> str:
        return self.spec.describe()


@dataclass(frozen=True)
class Due:
    """A database due for a refresh, and the tick (fire time) the refresh stands for."""

    schedule: IndexSchedule
    tick: dt.datetime

    @property
    def database(self) -> str:
        return self.schedule.database


RefreshStatus = Literal["refreshed", "failed", "busy", "done"]


@dataclass(frozen=True)
class Refreshed:
    """What one scheduled refresh did.

    refreshed: the index is up to date (`stats.rewritten` False when nothing had changed);
    failed: `error` says why, as a person may read it (next tick tries again);
    busy: another thread or process was building or refreshing the index; this tick is left to it;
    done: the tick was refreshed already (by another worker that got the lock first).
    """

    database: str
    tick: dt.datetime
    status: RefreshStatus
    stats: IndexStats | None = None
    error: str = ""


def index_schedules(settings: Settings) -> tuple[IndexSchedule, ...]:
    """Every configured database with an `index_refresh`, by name. Raises IndexScheduleError naming
    the database and the setting when one cannot be read (the settings refuse it at load too)."""
    found = []
    for name, config in sorted(settings.databases.items()):
        expression = (config.index_refresh or "").strip()
        if not expression:
            continue
        try:
            spec = cron_spec(expression, config.index_refresh_timezone)
        except ScheduleError as exc:
            raise IndexScheduleError(
                f"databases.{name}.index_refresh ({expression!r}, timezone "
                f"{config.index_refresh_timezone!r}) cannot be read: {exc}"
            ) from None
        found.append(IndexSchedule(name, spec))
    return tuple(found)


def due(
    schedules: Sequence[IndexSchedule],
    now: dt.datetime,
    last: Mapping[str, dt.datetime | None],
    *,
    grace_s: float,
) -> list[Due]:
    """The databases due at `now`: their latest fire time at or before `now` is later than the tick
    refreshed (or tried) last (`last`, by database) and at most `grace_s` old — a tick missed by
    more, while no worker ran, waits for the next one, as scheduled questions do."""
    now = as_utc(now)
    found = []
    for schedule in schedules:
        tick = latest_fire_time(schedule.spec, now)
        if tick is None or (now - tick).total_seconds() > grace_s:
            continue
        previous = last.get(schedule.database)
        if previous is None or as_utc(previous) < tick:
            found.append(Due(schedule, tick))
    return found


def last_ticks(app: Askbase, schedules: Sequence[IndexSchedule]) -> dict[str, dt.datetime | None]:
    """The tick each database's index was last refreshed (or tried) for, from its record."""
    return {s.database: _recorded_tick(app.database(s.database)) for s in schedules}


def next_tick(schedule: IndexSchedule, now: dt.datetime) -> dt.datetime | None:
    return next_fire_time(schedule.spec, now)


def refresh_due(
    app: Askbase, schedules: Sequence[IndexSchedule], now: dt.datetime, *, grace_s: float
) -> list[Refreshed]:
    """The worker's job: refresh every database due at `now`, one after another. Never raises."""
    try:
        pending = due(schedules, now, last_ticks(app, schedules), grace_s=grace_s)
    except Exception as exc:  # a record or the var dir that cannot be read: the next poll tries again
        log.error("value index schedules: cannot tell which are due: %s", _words(app, exc))
        return []
    return [refresh_scheduled(app, item, now) for item in pending]


def refresh_scheduled(app: Askbase, item: Due, now: dt.datetime) -> Refreshed:
    """Refresh one database for one tick, unless another holds its index or did the tick already."""
    name, tick = item.database, item.tick
    try:
        db = app.database(name)
        with index_lock(db, wait=False) as held:
            if not held:
                log.info(
                    "value index of '%s': another build or refresh is running; tick %s left to it",
                    name,
                    _when(tick),
                )
                return Refreshed(name, tick, "busy")
            recorded = _recorded_tick(db)
            if recorded is not None and recorded >= tick:
                return Refreshed(name, tick, "done")
            try:
                stats = _index(app, name, "refresh", None, action_text=SCHEDULED)
            except Exception as exc:
                error = _words(app, exc)
                _record(db, tick, now, "failed")
                nxt = next_tick(item.schedule, now)
                log.error(
                    "value index of '%s': the refresh due %s failed: %s; next try %s",
                    name,
                    _when(tick),
                    error,
                    _when(nxt) if nxt else "never (the schedule fires no more)",
                )
                return Refreshed(name, tick, "failed", error=error)
            _record(db, tick, now, "refreshed")
    except Exception as exc:  # the lock or the record could not be written: the var dir
        error = _words(app, exc)
        log.error("value index of '%s': the refresh due %s failed: %s", name, _when(tick), error)
        return Refreshed(name, tick, "failed", error=error)
    log.info(
        "value index of '%s' refreshed for %s: %s values from %s columns%s, %.1f s",
        name,
        _when(tick),
        f"{stats.values:,}",
        stats.columns,
        "" if stats.rewritten else " (nothing changed)",
        stats.seconds,
    )
    return Refreshed(name, tick, "refreshed", stats=stats)


def _recorded_tick(db: Database) -> dt.datetime | None:
    path = record_path(db)
    try:
        return as_utc(dt.datetime.fromisoformat(json.loads(path.read_text())["tick"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning(
            "value index of '%s': unreadable refresh record %s (%s); taken as none", db.name, path, exc
        )
        return None


def _record(db: Database, tick: dt.datetime, now: dt.datetime, status: str) -> None:
    """Write the record beside the index at once (a reader sees the old one or the new one)."""
    path = record_path(db)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = {
        "database": db.name,
        "tick": as_utc(tick).isoformat(),
        "status": status,
        "at": as_utc(now).isoformat(),
    }
    tmp.write_text(json.dumps(data))
    os.replace(tmp, path)


def _words(app: Askbase, exc: BaseException) -> str:
    """An error as a log line may show it: its first line, no hosts or paths, no secrets."""
    return redact(f"{type(exc).__name__}: {public_error(exc)}", app.secrets) or type(exc).__name__


def _when(moment: dt.datetime) -> str:
    return as_utc(moment).strftime("%Y-%m-%d %H:%M UTC")
