"""Date arithmetic in SQL, per dialect: time buckets, durations, month numbers, calendar order.

sqlglot transpiles most date functions (STRFTIME ↔ TO_CHAR ↔ DATE_FORMAT), so buckets are built
as sqlglot expressions; where its rendering is wrong or lossy for a dialect (QUARTER() on
PostgreSQL, DATEDIFF counting days on MySQL, DATE_TRUNC on SQLite) the expression is written
by hand for that dialect. Bucket labels are text that sorts in time order and reads the same on
every database: '2025', '2025-Q1', '2025-03', and the Monday a week starts on.
"""

from __future__ import annotations

import calendar

from sqlglot import exp

FORMATS = {"year": "%Y", "month": "%Y-%m", "day": "%Y-%m-%d"}
SECONDS = {"second": 1, "minute": 60, "hour": 3600, "day": 86400, "week": 604800}
MONTH_NAMES = tuple(calendar.month_name[1:])
WEEKDAY_NAMES = tuple(calendar.day_name)  # Monday first, as ISO counts


def bucket(column: exp.Expression, unit: str, dialect: str) -> exp.Expression:
    """The calendar `unit` (year | quarter | month | week | day) of a date, as a text label."""
    if unit in FORMATS:
        return exp.TimeToStr(this=column, format=exp.Literal.string(FORMATS[unit]))
    if unit == "quarter":
        if dialect == "sqlite":
            plus = exp.Paren(this=exp.Add(this=month_number(column.copy(), dialect), expression=_number(2)))
            number: exp.Expression = exp.Div(this=plus, expression=_number(3), typed=True)
        else:
            number = exp.Extract(this=exp.var("QUARTER"), expression=column.copy())
        year = exp.TimeToStr(this=column, format=exp.Literal.string("%Y"))
        text = exp.Cast(this=number, to=exp.DataType.build("TEXT"))
        return exp.Concat(expressions=[year, exp.Literal.string("-Q"), text], safe=True)
    if unit == "week":
        if dialect == "sqlite":
            days = [exp.Literal.string("-6 days"), exp.Literal.string("weekday 1")]
            return exp.Anonymous(this="DATE", expressions=[column, *days])
        if dialect == "mysql":
            weekday = exp.Anonymous(this="WEEKDAY", expressions=[column.copy()])
            monday: exp.Expression = exp.DateSub(this=column, expression=weekday, unit=exp.var("DAY"))
        else:
            monday = exp.DateTrunc(unit=exp.Literal.string("WEEK"), this=column)
        return exp.TimeToStr(this=monday, format=exp.Literal.string("%Y-%m-%d"))
    raise ValueError(f"unknown time bucket {unit}")


def duration(end: exp.Expression, start: exp.Expression, unit: str, dialect: str) -> exp.Expression:
    """`end` minus `start` in `unit` (second ... week), fractional (sqlglot's DATEDIFF would
    round to whole units or, on MySQL, count days whatever the unit)."""
    if dialect == "sqlite" and unit == "day":
        julian = [exp.Anonymous(this="JULIANDAY", expressions=[e]) for e in (end, start)]
        return exp.Sub(this=julian[0], expression=julian[1])
    if dialect == "sqlite":
        seconds: exp.Expression = exp.Sub(
            this=_integer(_strftime("%s", end)), expression=_integer(_strftime("%s", start))
        )
    elif dialect == "postgres":
        end, start = (exp.Cast(this=e, to=exp.DataType.build("TIMESTAMP")) for e in (end, start))
        seconds = exp.Extract(
            this=exp.var("EPOCH"), expression=exp.Paren(this=exp.Sub(this=end, expression=start))
        )
    elif dialect == "mysql":
        seconds = exp.Anonymous(this="TIMESTAMPDIFF", expressions=[exp.var("SECOND"), start, end])
    else:
        seconds = exp.DateDiff(this=end, expression=start, unit=exp.var("SECOND"))
    if unit == "second":
        return seconds
    return exp.Div(this=seconds, expression=exp.Literal.number(f"{SECONDS[unit]}.0"))


def month_number(column: exp.Expression, dialect: str) -> exp.Expression:
    """1 for January ... 12 for December."""
    if dialect == "sqlite":
        return _integer(_strftime("%m", column))
    return exp.Month(this=column)


def calendar_position(column: exp.Expression, kind: str) -> exp.Expression:
    """A month or weekday name's place in the calendar (1 for January or Monday)."""
    names = MONTH_NAMES if kind == "month" else WEEKDAY_NAMES
    case = exp.Case()
    for i, name in enumerate(names, 1):
        case = case.when(exp.EQ(this=column.copy(), expression=exp.Literal.string(name)), _number(i))
    return case


def _number(n: int) -> exp.Literal:
    return exp.Literal.number(n)


def _strftime(fmt: str, column: exp.Expression) -> exp.Expression:
    return exp.Anonymous(this="STRFTIME", expressions=[exp.Literal.string(fmt), column])


def _integer(e: exp.Expression) -> exp.Expression:
    return exp.Cast(this=e, to=exp.DataType.build("INTEGER"))
