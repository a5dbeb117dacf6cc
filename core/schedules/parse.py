"""Reading a schedule the way people write it: "every weekday at 9:00", "every 15 minutes",
"weekly on mon,wed at 8:30", "monthly on the 1st at 7am", "cron 0 9 * * 1-5"…

`split_schedule` reads `/ask schedule WHEN [only when …] QUESTION` into (when, condition, question);
`looks_like_schedule` tells that apart from a question that merely starts with "schedule". Every
refusal is a `ScheduleError` whose message shows how to write it (`USAGE`).
"""

from __future__ import annotations

import re

from core.schedules.conditions import Condition, ConditionKind, parse_condition
from core.schedules.errors import ScheduleError
from core.schedules.triggers import (
    TriggerSpec,
    check_clock,
    check_timezone,
    cron_spec,
    daily_spec,
    interval_spec,
    monthly_spec,
    weekly_spec,
)

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

_CONDITION_WORDS: list[tuple[ConditionKind, re.Pattern[str]]] = [
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
    check_clock(hour, minute)
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
            condition = parse_condition(match.group("cond")) if kind == "column" else Condition(kind)
            rest = rest[match.end() :]
            break
    question = rest.lstrip(" ,;:-–—").strip()
    if not question:
        raise ScheduleError(f"What should I ask {spec.label}? {USAGE}")
    return spec, condition, question
