"""When a schedule fires: `TriggerSpec` (an interval or a cron rule in a timezone) and its fire times.

A spec is JSON-storable (the `trigger` column) and turns into one of APScheduler's own triggers
(`TriggerSpec.trigger()`), so the worker's scheduler and the arithmetic here — the tick a run
belongs to, the ticks it missed, how long to back off — can never disagree. Crontab lines are read
with crontab's weekday numbers (0 and 7 = Sunday) and translated, because APScheduler 3 counts 0 as
Monday (its issue #286).

Times go in and come out aware and in UTC (`as_utc`); SQLite hands them back naive.
"""

from __future__ import annotations

import datetime as dt
import itertools
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from core.schedules.errors import ScheduleError

UTC = dt.UTC
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # APScheduler's order: 0 = Monday
DAY_LABELS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
CRONTAB_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab's order: 0 = Sunday
MAX_BACKOFF = dt.timedelta(days=1)
FIRE_TIMES_LIMIT = 1000  # fire_times lists at most this many unless told otherwise


@dataclass(frozen=True)
class TriggerSpec:
    """When a schedule fires. Interval: every `seconds` from `anchor`; cron: APScheduler fields."""

    kind: Literal["interval", "cron"]
    label: str  # how a person reads it: "every weekday at 09:00"
    timezone: str = "UTC"
    seconds: int = 0
    anchor: str = ""  # ISO UTC; the interval's fire times are anchor + k × seconds
    minute: str = "0"
    hour: str = "*"
    day: str = "*"
    month: str = "*"
    day_of_week: str = "*"

    def trigger(self) -> BaseTrigger:
        if self.kind == "interval":
            start = dt.datetime.fromisoformat(self.anchor) if self.anchor else None
            return IntervalTrigger(seconds=self.seconds, start_date=start, timezone=UTC)
        return CronTrigger(
            minute=self.minute,
            hour=self.hour,
            day=self.day,
            month=self.month,
            day_of_week=self.day_of_week,
            timezone=ZoneInfo(self.timezone),
        )

    def describe(self) -> str:
        return self.label if self.kind == "interval" else f"{self.label} ({self.timezone})"

    def anchored(self, when: dt.datetime) -> TriggerSpec:
        """An interval counted from `when` (whole seconds); cron rules need no anchor."""
        if self.kind != "interval":
            return self
        return replace(self, anchor=as_utc(when).replace(microsecond=0).isoformat())

    def in_timezone(self, timezone: str) -> TriggerSpec:
        return replace(self, timezone=check_timezone(timezone))

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TriggerSpec:
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def as_utc(value: dt.datetime) -> dt.datetime:
    """Aware UTC; a naive time (what SQLite gives back) is taken to be UTC already."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def check_timezone(name: str) -> str:
    name = (name or "").strip()
    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(
            f"'{name}' is not a timezone I know. Use a name like Europe/Berlin, America/New_York or UTC."
        ) from None
    return name


def interval_spec(seconds: int, timezone: str = "UTC") -> TriggerSpec:
    if seconds <= 0:
        raise ScheduleError("An interval must be at least one second.")
    return TriggerSpec("interval", _interval_label(seconds), check_timezone(timezone), seconds=seconds)


def _interval_label(seconds: int) -> str:
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if seconds % size == 0:
            n = seconds // size
            return f"every {unit}" if n == 1 else f"every {n} {unit}s"
    return "every second" if seconds == 1 else f"every {seconds} seconds"


def _clock_text(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def check_clock(hour: int, minute: int) -> None:
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ScheduleError(f"{hour}:{minute:02d} is not a time of day. Write it like 9:00, 17:30 or 8am.")


def daily_spec(hour: int, minute: int, timezone: str = "UTC") -> TriggerSpec:
    check_clock(hour, minute)
    return TriggerSpec(
        "cron",
        f"every day at {_clock_text(hour, minute)}",
        check_timezone(timezone),
        minute=str(minute),
        hour=str(hour),
    )


def weekly_spec(days: Sequence[int], hour: int, minute: int, timezone: str = "UTC") -> TriggerSpec:
    """`days`: 0 = Monday … 6 = Sunday."""
    check_clock(hour, minute)
    chosen = sorted(set(days))
    if not chosen or any(d not in range(7) for d in chosen):
        raise ScheduleError("Choose at least one day of the week.")
    at = _clock_text(hour, minute)
    if chosen == [0, 1, 2, 3, 4]:
        label = f"every weekday at {at}"
    elif chosen == [5, 6]:
        label = f"every weekend day at {at}"
    elif len(chosen) == 7:
        label = f"every day at {at}"
    else:
        label = f"weekly on {', '.join(DAY_LABELS[d] for d in chosen)} at {at}"
    return TriggerSpec(
        "cron",
        label,
        check_timezone(timezone),
        minute=str(minute),
        hour=str(hour),
        day_of_week="*" if len(chosen) == 7 else ",".join(DAYS[d] for d in chosen),
    )


def monthly_spec(day: int, hour: int, minute: int, timezone: str = "UTC") -> TriggerSpec:
    check_clock(hour, minute)
    if not 1 <= day <= 31:
        raise ScheduleError(f"{day} is not a day of the month.")
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return TriggerSpec(
        "cron",
        f"monthly on the {day}{suffix} at {_clock_text(hour, minute)}",
        check_timezone(timezone),
        minute=str(minute),
        hour=str(hour),
        day=str(day),
    )


CRON_FIELD = re.compile(r"^[\d*/,\-a-z]+$", re.I)


def cron_spec(expression: str, timezone: str = "UTC") -> TriggerSpec:
    """A crontab line: minute hour day-of-month month day-of-week (0 or 7 = Sunday, as in crontab)."""
    fields = expression.strip().strip("`'\"").split()
    if len(fields) != 5 or not all(CRON_FIELD.match(f) for f in fields):
        raise ScheduleError(
            "A cron expression has five fields: minute hour day-of-month month day-of-week, "
            "e.g. `0 9 * * 1-5` (weekdays at 9:00)."
        )
    minute, hour, day, month, weekday = fields
    spec = TriggerSpec(
        "cron",
        f"cron `{' '.join(fields)}`",
        check_timezone(timezone),
        minute=minute,
        hour=hour,
        day=day,
        month=month,
        day_of_week=_crontab_weekdays(weekday),
    )
    try:
        spec.trigger()
    except ValueError as exc:
        raise ScheduleError(f"I can't read the cron expression `{' '.join(fields)}`: {exc}.") from None
    return spec


def _crontab_weekdays(field_text: str) -> str:
    """Crontab's day-of-week field (0/7 = Sunday, names, ranges, steps) as APScheduler day names."""
    if field_text in ("*", "?"):
        return "*"
    names = {name: i for i, name in enumerate(CRONTAB_DAYS)}

    def number(token: str) -> int:
        token = token.lower()[:3]
        if token in names:
            return names[token]
        if token.isdigit() and int(token) <= 7:
            return int(token) % 7
        raise ScheduleError(f"'{token}' is not a day of the week in `{field_text}` (use 0-7 or sun-sat).")

    days: set[int] = set()
    for item in field_text.split(","):
        part, _, step_text = item.partition("/")
        step = int(step_text) if step_text.isdigit() and int(step_text) > 0 else 1
        if step_text and not (step_text.isdigit() and int(step_text) > 0):
            raise ScheduleError(f"'{item}' has a step I can't read in `{field_text}`.")
        if part == "*":
            first, last = 0, 6
        elif "-" in part:
            low, high = part.split("-", 1)
            first, last = number(low), number(high)
            if high.strip() == "7":
                last = 7
        else:
            first = last = number(part)
        if last < first:
            last += 7
        days.update(d % 7 for d in range(first, last + 1, step))
    if len(days) == 7:
        return "*"
    # crontab Sunday=0 … Saturday=6 → APScheduler Monday=0 … Sunday=6
    return ",".join(DAYS[(d - 1) % 7] for d in sorted(days, key=lambda d: (d - 1) % 7))


# ---------------------------------------------------------------- fire times


def _next(trigger: BaseTrigger, after: dt.datetime) -> dt.datetime | None:
    found = trigger.get_next_fire_time(None, after + dt.timedelta(microseconds=1))
    return as_utc(found) if found else None


def next_fire_time(spec: TriggerSpec, after: dt.datetime) -> dt.datetime | None:
    """The first fire time strictly after `after`."""
    return _next(spec.trigger(), as_utc(after))


def fire_times(
    spec: TriggerSpec, after: dt.datetime, until: dt.datetime, limit: int = FIRE_TIMES_LIMIT
) -> list[dt.datetime]:
    """Fire times in (after, until], at most `limit` of them."""
    trigger = spec.trigger()
    found: list[dt.datetime] = []
    current = as_utc(after)
    end = as_utc(until)
    while len(found) < limit:
        nxt = _next(trigger, current)
        if nxt is None or nxt > end:
            break
        found.append(nxt)
        current = nxt
    return found


def latest_fire_time(spec: TriggerSpec, now: dt.datetime) -> dt.datetime | None:
    """The most recent fire time at or before `now`: the tick a run that starts now belongs to.

    Every worker computes the same tick for the same moment, which is what lets the run table
    refuse a second run of one tick.
    """
    now = as_utc(now)
    if spec.kind == "interval":
        if not spec.anchor:
            return None
        start = dt.datetime.fromisoformat(spec.anchor)
        if start > now:
            return None
        k = math.floor((now - start).total_seconds() / spec.seconds)
        return start + dt.timedelta(seconds=k * spec.seconds)
    for window in (dt.timedelta(hours=1), dt.timedelta(days=1), dt.timedelta(days=8), dt.timedelta(days=400)):
        times = fire_times(spec, now - window, now, limit=100_000)
        if times:
            return times[-1]
    return None


def min_gap_s(spec: TriggerSpec, start: dt.datetime, samples: int = 60) -> float:
    """The shortest gap between the next `samples` fire times (how often it really fires)."""
    if spec.kind == "interval":
        return float(spec.seconds)
    times = fire_times(spec, start, as_utc(start) + dt.timedelta(days=800), limit=samples)
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(times)]
    return min(gaps) if gaps else math.inf


def check_frequency(spec: TriggerSpec, min_interval_s: int, now: dt.datetime) -> None:
    """Refuse schedules that fire more often than the deployment allows, or never."""
    gap = min_gap_s(spec, now)
    if spec.kind == "cron" and next_fire_time(spec, now) is None:
        raise ScheduleError(f"{spec.describe()} never fires.")
    if gap < min_interval_s:
        raise ScheduleError(
            f"That runs every {_seconds_text(gap)}; schedules here may run at most every "
            f"{_seconds_text(min_interval_s)}."
        )


def _seconds_text(seconds: float) -> str:
    return _interval_label(int(seconds)).removeprefix("every ")


def backoff_until(spec: TriggerSpec, tick: dt.datetime, failures: int) -> dt.datetime:
    """After `failures` failed runs in a row, skip ticks until this time (doubling, at most a day)."""
    tick = as_utc(tick)
    following = next_fire_time(spec, tick)
    period = (following - tick) if following else MAX_BACKOFF
    doubling: int = 2 ** max(0, failures - 1)
    return tick + min(period * doubling, MAX_BACKOFF)
