"""Dates in keyword mode: the [start, end) range a year, month, day or period literal covers.

Ranges are computed here, in Python, against the question's `today`, and written into the SQL as
ISO date literals: the same text works on every dialect, and a test can pin `today`.
"""

from __future__ import annotations

import calendar
import datetime as dt

from core.keyword.shapes import Literal_


def period(today: dt.date, lit: Literal_) -> tuple[dt.date | None, dt.date | None]:
    """[lo, hi) of a year, quarter, month, day or period literal; (None, None) for a month or
    quarter of any year;
    hi is None for a rolling window ('the last 30 days': from 30 days ago on)."""
    if lit.kind == "year":
        return dt.date(lit.value, 1, 1), dt.date(lit.value + 1, 1, 1)
    if lit.kind == "month":
        year, month = lit.value
        if year is None:
            return None, None
        return dt.date(year, month, 1), add_months(dt.date(year, month, 1), 1)
    if lit.kind == "quarter":
        year, q = lit.value
        if year is None:
            return None, None
        start = dt.date(year, 3 * q - 2, 1)
        return start, add_months(start, 3)
    if lit.kind == "date":
        return lit.value, lit.value + dt.timedelta(days=1)
    unit, offset, length = lit.value
    if length == 0:
        return shift(today, unit, offset), None
    lo = shift(unit_start(today, unit), unit, offset)
    return lo, shift(lo, unit, length)


def add_months(d: dt.date, n: int) -> dt.date:
    month = d.month - 1 + n
    year = d.year + month // 12
    month = month % 12 + 1
    return dt.date(year, month, min(d.day, calendar.monthrange(year, month)[1]))


def shift(d: dt.date, unit: str, n: int) -> dt.date:
    if unit == "day":
        return d + dt.timedelta(days=n)
    if unit == "week":
        return d + dt.timedelta(weeks=n)
    if unit == "month":
        return add_months(d, n)
    if unit == "quarter":
        return add_months(d, 3 * n)
    return add_months(d, 12 * n)


def unit_start(d: dt.date, unit: str) -> dt.date:
    if unit == "week":
        return d - dt.timedelta(days=d.weekday())
    if unit == "month":
        return d.replace(day=1)
    if unit == "quarter":
        return dt.date(d.year, 3 * ((d.month - 1) // 3) + 1, 1)
    if unit == "year":
        return dt.date(d.year, 1, 1)
    return d
