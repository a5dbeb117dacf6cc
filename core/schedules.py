"""Recurring questions, the pure part: when a schedule fires, whether a run posts, what changed.

A schedule is a `TriggerSpec` (an interval or a cron rule in a timezone, JSON-storable), a
`Condition` (always / not empty / changed / a test on a column) and the validated SQL it re-runs.
People write schedules the way they say them — "every weekday at 9:00", "every 15 minutes",
"weekly on mon,wed at 8:30", "monthly on the 1st at 7am", or a crontab line — and
`split_schedule` reads that prefix off `/ask schedule …`, leaving the question.

Fire times come from APScheduler's own triggers (`TriggerSpec.trigger()`), so the worker's
scheduler and the arithmetic here (`latest_fire_time`, the missed-run count, backoff) can never
disagree. Crontab lines are read with crontab's weekday numbers (0 and 7 = Sunday) and translated,
because APScheduler 3 counts 0 as Monday (its issue #286).

Between runs a `Snapshot` of the result (the first SNAPSHOT_ROWS rows) is kept; `diff` tells
rows added or removed and numbers up or down, keyed on the non-numeric columns.
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import itertools
import json
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from typing import Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from core import access
from core.answer import json_value
from core.settings import Settings
from core.summary import format_value

UTC = dt.UTC
DAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")  # APScheduler's order: 0 = Monday
DAY_LABELS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
CRONTAB_DAYS = ("sun", "mon", "tue", "wed", "thu", "fri", "sat")  # crontab's order: 0 = Sunday
SNAPSHOT_ROWS = 500  # rows of the last result kept for "what changed"
MAX_BACKOFF = dt.timedelta(days=1)
COUNT_CAP = 1000  # missed runs are counted up to this many


class ScheduleError(ValueError):
    """A schedule or condition we cannot read; the message says how to write it."""


# ---------------------------------------------------------------- when it fires


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


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _check_clock(hour: int, minute: int) -> None:
    if not (0 <= hour <= 23 and 0 <= minute <= 59):
        raise ScheduleError(f"{hour}:{minute:02d} is not a time of day. Write it like 9:00, 17:30 or 8am.")


def daily_spec(hour: int, minute: int, timezone: str = "UTC") -> TriggerSpec:
    _check_clock(hour, minute)
    return TriggerSpec(
        "cron",
        f"every day at {_clock(hour, minute)}",
        check_timezone(timezone),
        minute=str(minute),
        hour=str(hour),
    )


def weekly_spec(days: Sequence[int], hour: int, minute: int, timezone: str = "UTC") -> TriggerSpec:
    """`days`: 0 = Monday … 6 = Sunday."""
    _check_clock(hour, minute)
    chosen = sorted(set(days))
    if not chosen or any(d not in range(7) for d in chosen):
        raise ScheduleError("Choose at least one day of the week.")
    at = _clock(hour, minute)
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
    _check_clock(hour, minute)
    if not 1 <= day <= 31:
        raise ScheduleError(f"{day} is not a day of the month.")
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return TriggerSpec(
        "cron",
        f"monthly on the {day}{suffix} at {_clock(hour, minute)}",
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


# ---------------------------------------------------------------- reading "/ask schedule …"

_DAY_WORDS = {
    "mon": 0, "monday": 0, "mondays": 0,
    "tue": 1, "tues": 1, "tuesday": 1, "tuesdays": 1,
    "wed": 2, "weds": 2, "wednesday": 2, "wednesdays": 2,
    "thu": 3, "thur": 3, "thurs": 3, "thursday": 3, "thursdays": 3,
    "fri": 4, "friday": 4, "fridays": 4,
    "sat": 5, "saturday": 5, "saturdays": 5,
    "sun": 6, "sunday": 6, "sundays": 6,
}  # fmt: skip
_DAY = "(?:" + "|".join(sorted(_DAY_WORDS, key=len, reverse=True)) + ")"
_DAY_RANGE = rf"{_DAY}(?:\s*-\s*{_DAY})?"
_DAY_LIST = rf"{_DAY_RANGE}(?:\s*(?:,|/|&|\band\b)\s*{_DAY_RANGE})*"
_TIME = (
    r"(?:(?P<h>\d{1,2})(?:[:.h](?P<m>\d{2}))?\s*(?P<ampm>(?:am|pm)\b|a\.m\.|p\.m\.)?|(?P<word>noon|midnight))"
)
_AT = rf"\s+at\s+{_TIME}"
_UNIT = r"(?P<unit>seconds?|secs?|s|minutes?|mins?|m|hours?|hrs?|h|days?|d)"
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_TZ = re.compile(r"^\s*(?:in\s+)?(?P<tz>UTC|GMT|[A-Za-z]+(?:/[A-Za-z0-9_+\-]+){1,2})\b")

_PATTERNS: list[tuple[str, re.Pattern[str]]] = [
    ("cron", re.compile(r"^cron\s+[`'\"]?(?P<cron>(?:\S+\s+){4}[^\s`'\"]+)[`'\"]?", re.I)),
    ("cron", re.compile(r"^`(?P<cron>(?:\S+\s+){4}[^\s`]+)`", re.I)),
    ("interval", re.compile(rf"^every\s+(?P<n>\d+)\s*{_UNIT}\b", re.I)),
    ("interval", re.compile(r"^every\s+(?P<unit>second|minute|hour)\b", re.I)),
    ("hourly", re.compile(r"^hourly\b", re.I)),
    ("monthly", re.compile(rf"^(?:every\s+month|monthly)\s+on\s+the\s+(?P<dom>\d{{1,2}})(?:st|nd|rd|th)?{_AT}", re.I)),
    ("days", re.compile(rf"^(?:(?:every|each|on)\s+)?(?P<days>day|weekday|weekdays|workday|workdays|weekend|weekends|weekend\s+day|weekend\s+days){_AT}", re.I)),
    ("days", re.compile(rf"^(?P<days>daily){_AT}", re.I)),
    ("week", re.compile(rf"^(?:weekly\s+on\s+|every\s+week\s+on\s+|(?:every|each|on)\s+)(?P<list>{_DAY_LIST}){_AT}", re.I)),
    ("week", re.compile(rf"^(?P<list>{_DAY_LIST}){_AT}", re.I)),
]  # fmt: skip

_NO_TIME = re.compile(
    rf"^(?:(?:every|each|on)\s+)?(?:day|daily|weekday|weekdays|weekend|weekly|{_DAY_LIST})\b", re.I
)

_CONDITION_WORDS: list[tuple[str, re.Pattern[str]]] = [
    ("changed", re.compile(r"^(?:only\s+)?(?:when|if)\s+(?:it\s+|the\s+result\s+)?(?:has\s+)?(?:changed|changes)\b", re.I)),
    ("not_empty", re.compile(r"^(?:only\s+)?(?:when|if)\s+(?:it\s+|the\s+result\s+)?(?:is\s+)?(?:not\s+empty|non-?empty|has\s+rows|there\s+are\s+rows)\b", re.I)),
    ("column", re.compile(r"^(?:only\s+)?(?:when|if)\s+(?P<cond>[A-Za-z_][\w.]*\s*(?:>=|<=|!=|<>|==|=|>|<)\s*(?:-?\d+(?:\.\d+)?|'[^']*'|\"[^\"]*\"|\w+))", re.I)),
]  # fmt: skip

USAGE = (
    "Write when first, then the question, e.g. `/ask schedule every weekday at 9:00 how many open "
    "incidents per team?` — also `every 15 minutes`, `daily at 7am`, `weekly on mon,wed at 8:30`, "
    "`monthly on the 1st at 9:00`, `cron 0 9 * * 1-5`; add `only when changed`, `only when not empty` "
    "or `only when count > 0` before the question to post only then."
)


def _time_of(match: re.Match[str]) -> tuple[int, int]:
    if match.group("word"):
        return (12, 0) if match.group("word").lower() == "noon" else (0, 0)
    hour, minute = int(match.group("h")), int(match.group("m") or 0)
    ampm = (match.group("ampm") or "").replace(".", "").lower()
    if ampm:
        if not 1 <= hour <= 12:
            raise ScheduleError(f"{hour}{ampm} is not a time of day.")
        hour = hour % 12 + (12 if ampm == "pm" else 0)
    _check_clock(hour, minute)
    return hour, minute


def _day_numbers(text: str) -> list[int]:
    days: list[int] = []
    for part in re.split(r"\s*(?:,|/|&|\band\b)\s*", text.lower().strip()):
        if not part:
            continue
        first, _, last = (p.strip() for p in part.partition("-"))
        start = _DAY_WORDS[first]
        end = _DAY_WORDS[last] if last else start
        span = (end - start) % 7
        days.extend((start + i) % 7 for i in range(span + 1))
    return days


def _spec_from(kind: str, match: re.Match[str], timezone: str) -> TriggerSpec:
    groups = match.groupdict()
    if kind == "cron":
        return cron_spec(groups["cron"], timezone)
    if kind == "hourly":
        return TriggerSpec("cron", "every hour", check_timezone(timezone), minute="0")
    if kind == "interval":
        unit = groups["unit"].lower()
        n = int(groups.get("n") or 1)
        return interval_spec(n * _UNIT_SECONDS[unit[0]], timezone)
    hour, minute = _time_of(match)
    if kind == "monthly":
        return monthly_spec(int(groups["dom"]), hour, minute, timezone)
    if kind == "days":
        word = re.sub(r"\s+", " ", groups["days"].lower())
        if word in ("day", "daily"):
            return daily_spec(hour, minute, timezone)
        if word.startswith(("weekday", "workday")):
            return weekly_spec(range(5), hour, minute, timezone)
        return weekly_spec((5, 6), hour, minute, timezone)
    return weekly_spec(_day_numbers(groups["list"]), hour, minute, timezone)


_SCHEDULE_START = re.compile(
    rf"^(?:`|every\b|each\b|daily\b|weekly\b|hourly\b|monthly\b|cron\b|on\s+{_DAY}|{_DAY}\b|weekdays?\b)",
    re.I,
)


def looks_like_schedule(text: str) -> bool:
    """Whether `/ask schedule …` starts like a schedule (else it is a question about schedules)."""
    return bool(_SCHEDULE_START.match(text.strip()))


def read_schedule(text: str, timezone: str = "UTC") -> tuple[TriggerSpec, str]:
    """The schedule at the start of `text` and what follows it; ScheduleError when there is none."""
    text = text.strip()
    for kind, pattern in _PATTERNS:
        match = pattern.match(text)
        if match:
            spec = _spec_from(kind, match, timezone)
            rest = text[match.end() :]
            tz = _TZ.match(rest)
            if tz and spec.kind == "cron":
                try:
                    spec = spec.in_timezone(tz.group("tz"))
                    rest = rest[tz.end() :]
                except ScheduleError:
                    pass  # not a timezone after all: part of the question
            return spec, rest.strip()
    if _NO_TIME.match(text):
        raise ScheduleError(f"Say at what time, e.g. `every weekday at 9:00 …`. {USAGE}")
    raise ScheduleError(f"I can't tell when to ask. {USAGE}")


def parse_schedule(text: str, timezone: str = "UTC") -> TriggerSpec:
    """A whole text that is only a schedule (a form field)."""
    spec, rest = read_schedule(text, timezone)
    if rest:
        raise ScheduleError(f"I don't understand '{rest}' after the schedule. {USAGE}")
    return spec


def split_schedule(text: str, timezone: str = "UTC") -> tuple[TriggerSpec, Condition, str]:
    """`/ask schedule WHEN [only when …] QUESTION` → (when, condition, question)."""
    spec, rest = read_schedule(text, timezone)
    rest = rest.lstrip(" ,;:-–—")
    condition = Condition()
    for kind, pattern in _CONDITION_WORDS:
        match = pattern.match(rest)
        if match:
            condition = parse_condition(match.group("cond")) if kind == "column" else Condition(kind)  # type: ignore[arg-type]
            rest = rest[match.end() :]
            break
    question = rest.lstrip(" ,;:-–—").strip()
    if not question:
        raise ScheduleError(f"What should I ask {spec.label}? {USAGE}")
    return spec, condition, question


# ---------------------------------------------------------------- fire times


def _next(trigger: BaseTrigger, after: dt.datetime) -> dt.datetime | None:
    found = trigger.get_next_fire_time(None, after + dt.timedelta(microseconds=1))
    return as_utc(found) if found else None


def next_fire_time(spec: TriggerSpec, after: dt.datetime) -> dt.datetime | None:
    """The first fire time strictly after `after`."""
    return _next(spec.trigger(), as_utc(after))


def fire_times(
    spec: TriggerSpec, after: dt.datetime, until: dt.datetime, limit: int = COUNT_CAP
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
    return tick + min(period * (2 ** max(0, failures - 1)), MAX_BACKOFF)


# ---------------------------------------------------------------- when a run posts

ConditionKind = Literal["always", "not_empty", "changed", "column"]
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    "==": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
}
_COLUMN_CONDITION = re.compile(
    r"^\s*(?P<col>[A-Za-z_][\w.]*|\"[^\"]+\"|`[^`]+`)\s*(?P<op>>=|<=|!=|<>|==|=|>|<)\s*(?P<val>.+?)\s*$"
)


@dataclass(frozen=True)
class Condition:
    kind: ConditionKind = "always"
    column: str = ""
    op: str = ""
    value: float | str | None = None

    def describe(self) -> str:
        if self.kind == "not_empty":
            return "only when there are rows"
        if self.kind == "changed":
            return "only when the result changed"
        if self.kind == "column":
            value = self.value if isinstance(self.value, str) else format_value(self.value)
            return f"only when {self.column} {self.op} {value}"
        return "every run"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Condition:
        if not data:
            return cls()
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def parse_condition(text: str) -> Condition:
    """`count > 0`, `status = 'late'`, `total >= 1000.5` — a test on one column of the result."""
    match = _COLUMN_CONDITION.match(text or "")
    if not match:
        raise ScheduleError(
            "Write the condition as a column, a comparison and a value, e.g. `count > 0` or `status = 'late'`."
        )
    column = match.group("col").strip('"`')
    raw = match.group("val").strip()
    value: float | str
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        value = raw[1:-1]
    else:
        try:
            value = float(raw)
        except ValueError:
            value = raw
    return Condition("column", column, match.group("op"), value)


class ConditionError(ValueError):
    """The condition cannot be checked on this result (e.g. the column is gone)."""


@dataclass(frozen=True)
class Decision:
    post: bool
    why: str  # for the run record: "no rows", "unchanged", "count > 0 held"…


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    return None


def _holds(cell: Any, op: str, value: float | str | None) -> bool:
    if cell is None:
        return False
    compare = _OPS[op]
    if isinstance(value, float):
        number = _number(cell)
        if number is None:
            try:
                number = float(str(cell))
            except ValueError:
                return False
        return compare(number, value)
    return compare(str(json_value(cell)), str(value))


def should_post(
    condition: Condition,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fingerprint: str,
    previous_fingerprint: str | None,
) -> Decision:
    if condition.kind == "not_empty":
        return Decision(bool(rows), "rows" if rows else "no rows")
    if condition.kind == "changed":
        if previous_fingerprint is None:
            return Decision(True, "first result")
        changed = fingerprint != previous_fingerprint
        return Decision(changed, "changed" if changed else "unchanged")
    if condition.kind == "column":
        names = [c.lower() for c in columns]
        wanted = condition.column.lower()
        if wanted not in names:
            wanted = wanted.rsplit(".", 1)[-1]
        if wanted not in names:
            raise ConditionError(
                f"The result has no column '{condition.column}' to test (it has: {', '.join(columns)})."
            )
        i = names.index(wanted)
        held = any(_holds(row[i], condition.op, condition.value) for row in rows)
        text = condition.describe().removeprefix("only when ")
        return Decision(held, f"{text} {'held' if held else 'did not hold'}")
    return Decision(True, "always")


# ---------------------------------------------------------------- what changed


def _plain(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [[json_value(v) for v in row] for row in rows]


def fingerprint(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Equal for equal results (column names, values, row order)."""
    text = json.dumps([list(columns), _plain(rows)], default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]  # JSON values, the first SNAPSHOT_ROWS rows
    row_count: int

    @property
    def complete(self) -> bool:
        return len(self.rows) == self.row_count

    def to_json(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "row_count": self.row_count,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Snapshot | None:
        if not data:
            return None
        return cls(tuple(data["columns"]), tuple(tuple(r) for r in data["rows"]), int(data["row_count"]))


def snapshot(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Snapshot:
    return Snapshot(tuple(columns), tuple(tuple(r) for r in _plain(rows[:SNAPSHOT_ROWS])), len(rows))


@dataclass(frozen=True)
class Change:
    key: tuple[Any, ...]  # the values of the key columns ("" for a one-row result)
    column: str
    old: float
    new: float


@dataclass(frozen=True)
class Diff:
    first: bool = False  # nothing to compare with
    columns_changed: bool = False
    added: tuple[tuple[Any, ...], ...] = ()
    removed: tuple[tuple[Any, ...], ...] = ()
    changes: tuple[Change, ...] = ()
    key_columns: tuple[int, ...] = ()
    row_counts: tuple[int, int] = (0, 0)
    partial: bool = False  # only the first SNAPSHOT_ROWS rows were compared

    @property
    def unchanged(self) -> bool:
        return (
            not self.first
            and not self.columns_changed
            and not (self.added or self.removed or self.changes)
            and self.row_counts[0] == self.row_counts[1]
        )


KEY_NAMES = re.compile(
    r"(^id$|_id$|^id_|_no$|^code$|(^|_)(year|quarter|month|week|day|date|hour)(_|$))", re.I
)


def _measures(columns: Sequence[str], *row_sets: Sequence[Sequence[Any]]) -> list[bool]:
    measure = []
    for i, name in enumerate(columns):
        values = [r[i] for rows in row_sets for r in rows if r[i] is not None]
        measure.append(
            bool(values) and all(_number(v) is not None for v in values) and not KEY_NAMES.search(name)
        )
    return measure


def diff(previous: Snapshot | None, current: Snapshot) -> Diff:
    """Rows added and removed, and numbers up or down, keyed on the non-numeric columns."""
    counts = (previous.row_count if previous else 0, current.row_count)
    if previous is None:
        return Diff(first=True, row_counts=counts)
    partial = not (previous.complete and current.complete)
    if [c.lower() for c in previous.columns] != [c.lower() for c in current.columns]:
        return Diff(columns_changed=True, row_counts=counts, partial=partial)
    measure = _measures(current.columns, previous.rows, current.rows)
    keys = tuple(i for i, m in enumerate(measure) if not m)
    values = [i for i, m in enumerate(measure) if m]

    def key(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(row[i] for i in keys)

    old_keys = [key(r) for r in previous.rows]
    new_keys = [key(r) for r in current.rows]
    keyed = len(set(old_keys)) == len(old_keys) and len(set(new_keys)) == len(new_keys)
    if not keyed:  # no usable key: compare whole rows as a multiset
        old, new = Counter(previous.rows), Counter(current.rows)
        return Diff(
            added=tuple((new - old).elements()),
            removed=tuple((old - new).elements()),
            row_counts=counts,
            partial=partial,
        )
    before = dict(zip(old_keys, previous.rows, strict=True))
    after = dict(zip(new_keys, current.rows, strict=True))
    changes = []
    for k, row in after.items():
        if k not in before:
            continue
        for i in values:
            a, b = _number(before[k][i]), _number(row[i])
            if a is not None and b is not None and a != b:
                changes.append(Change(k, current.columns[i], a, b))
    return Diff(
        added=tuple(after[k] for k in after if k not in before),
        removed=tuple(before[k] for k in before if k not in after),
        changes=tuple(changes),
        key_columns=keys,
        row_counts=counts,
        partial=partial,
    )


def _row_text(row: Sequence[Any], key_columns: Sequence[int]) -> str:
    cells = [row[i] for i in key_columns] if key_columns else list(row)
    text = " · ".join(format_value(v) if not isinstance(v, str) else v for v in cells[:4])
    return text if len(text) <= 80 else text[:79] + "…"


def _change_text(change: Change) -> str:
    arrow = "▲" if change.new > change.old else "▼"
    delta = change.new - change.old
    where = " · ".join(str(v) for v in change.key if v is not None)
    label = f"{where} — {change.column}" if where else change.column
    return (
        f"{label}: {format_value(_tidy(change.old))} → {format_value(_tidy(change.new))} "
        f"({arrow} {format_value(_tidy(abs(delta)))})"
    )


def _tidy(number: float) -> int | float:
    return int(number) if float(number).is_integer() else number


def describe_diff(d: Diff, limit: int = 5) -> list[str]:
    """Lines a person reads under a scheduled result: what is new since the last run."""
    if d.first:
        return ["First run — nothing to compare with yet."]
    if d.columns_changed:
        return ["The result has different columns than last time, so I can't compare the two."]
    if d.unchanged:
        return ["No change since the last run."]
    lines: list[str] = []
    if d.row_counts[0] != d.row_counts[1]:
        lines.append(f"Rows: {d.row_counts[0]:,} → {d.row_counts[1]:,}")
    for label, rows in (("added", d.added), ("removed", d.removed)):
        if rows:
            shown = ", ".join(_row_text(r, d.key_columns) for r in rows[:limit])
            more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
            lines.append(f"{len(rows)} row{'s' if len(rows) != 1 else ''} {label}: {shown}{more}")
    if d.changes:
        ups = sum(1 for c in d.changes if c.new > c.old)
        downs = len(d.changes) - ups
        if len(d.changes) > 1:
            lines.append(f"{ups} number{'s' if ups != 1 else ''} up, {downs} down")
        lines.extend(_change_text(c) for c in d.changes[:limit])
        if len(d.changes) > limit:
            lines.append(f"… and {len(d.changes) - limit} more changes")
    if d.partial:
        lines.append(f"(compared on the first {SNAPSHOT_ROWS:,} rows)")
    return lines


# ---------------------------------------------------------------- who may run it


def may_query(
    settings: Settings, database: str, *, channel: str, user: str, usergroups: Iterable[str] = ()
) -> bool:
    """The owner's database permissions, checked when a schedule is made and before every run.

    The one place schedules ask the access rules (core/access.py).
    """
    return access.may_query(settings, access.Principal.of(user, channel, usergroups), database)


@dataclass(frozen=True)
class Missed:
    """Scheduled times that passed without a run (the worker was down) and that this run stands for."""

    count: int
    since: dt.datetime | None = None
    capped: bool = False

    def note(self) -> str:
        if not self.count:
            return ""
        n = f"{self.count:,}{'+' if self.capped else ''}"
        times = "time" if self.count == 1 else "times"
        return f"The scheduler was not running at {n} scheduled {times}; this one run covers them."


def missed_runs(spec: TriggerSpec, since: dt.datetime | None, tick: dt.datetime) -> Missed:
    if since is None:
        return Missed(0)
    times = [t for t in fire_times(spec, since, tick, limit=COUNT_CAP + 1) if t < as_utc(tick)]
    return Missed(min(len(times), COUNT_CAP), as_utc(since), capped=len(times) > COUNT_CAP)
