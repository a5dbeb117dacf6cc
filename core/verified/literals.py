"""The literals of a verified query's SQL: which ones a question's words stand for, and their new text.

Everything works on sqlglot's parsed tree; a literal is named by its place in a depth-first walk
(`literal_nodes`), the same for the same SQL text. How a question's value is written in SQL varies,
so each kind of parameter knows the forms it recognises and how each moves:

- a stored value: the value itself, in another case ('lyon' under LOWER(city)), or wrapped in
  LIKE wildcards ('%Lyon%'); it must be compared with its own column;
- a year Y: 'Y' or Y, the bounds 'Y-01-01', '(Y+1)-01-01', 'Y-12-31', and 'Y-01' / 'Y-12';
- a month (Y, M): 'Y-M', its first day, the next month's first day, its last day;
- a quarter: its first day, the next quarter's first day, its last day;
- a date: that date (with any time after it);
- a number: that number, only where it is one literal of the query (never an ORDER BY position).

Dates move by whole months: a first day stays a first day and a last day stays a last day.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from sqlglot import exp

_DATE = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?((?:[ T].*)?)$")


@dataclass(frozen=True)
class Literal:
    index: int  # place in the depth-first walk of the tree
    text: str
    is_string: bool
    column: str | None  # the column it is compared with, if any
    table: str | None  # that column's table, when the query names it (aliases resolved)
    positional: bool  # ORDER BY 1 / GROUP BY 1: a position, never a value


def literal_nodes(tree: exp.Expr) -> list[exp.Literal]:
    return list(tree.find_all(exp.Literal, bfs=False))


PREDICATES = (exp.EQ, exp.NEQ, exp.In, exp.Like, exp.ILike, exp.GT, exp.GTE, exp.LT, exp.LTE, exp.Between)


def literals_of(tree: exp.Expr) -> list[Literal]:
    aliases = {t.alias_or_name.lower(): t.name.lower() for t in tree.find_all(exp.Table)}
    found = []
    for i, node in enumerate(literal_nodes(tree)):
        positional = isinstance(node.parent, exp.Ordered | exp.Group)
        column, table = _compared_column(node, aliases)
        found.append(Literal(i, str(node.this), bool(node.is_string), column, table, positional))
    return found


def _compared_column(node: exp.Literal, aliases: dict[str, str]) -> tuple[str | None, str | None]:
    child: exp.Expr = node
    parent = node.parent
    while parent is not None and not isinstance(parent, PREDICATES):
        if isinstance(parent, exp.Select | exp.Where | exp.Join | exp.Having | exp.Connector):
            return None, None
        child, parent = parent, parent.parent
    if parent is None:
        return None, None
    if isinstance(parent, exp.In | exp.Between):
        other = parent.this
    else:
        other = parent.expression if child is parent.this else parent.this
    col = other if isinstance(other, exp.Column) else (other.find(exp.Column) if other is not None else None)
    if col is None:
        return None, None
    qualifier = col.table.lower() if col.table else ""
    return col.name.lower(), aliases.get(qualifier) if qualifier else None


# ------------------------------------------------------------------ stored values


def value_form(literal: str, stored: str) -> str | None:
    """How `literal` writes the stored value: 'exact', 'lower', 'upper', with '%' wrappers; None
    when it does not write it at all."""
    prefix = "%" if literal.startswith("%") else ""
    suffix = "%" if literal.endswith("%") and len(literal) > len(prefix) else ""
    core = literal[len(prefix) : len(literal) - len(suffix)]
    for form, text in (("exact", stored), ("lower", stored.lower()), ("upper", stored.upper())):
        if core == text:
            return f"{prefix}{form}{suffix}"
    return None


def write_value(form: str, stored: str) -> str:
    prefix = "%" if form.startswith("%") else ""
    suffix = "%" if form.endswith("%") else ""
    kind = form.strip("%")
    text = stored.lower() if kind == "lower" else stored.upper() if kind == "upper" else stored
    return f"{prefix}{text}{suffix}"


# ------------------------------------------------------------------ dates


@dataclass(frozen=True)
class DateText:
    year: int
    month: int | None
    day: int | None
    rest: str  # a time after the date, kept as it is


def date_text(literal: str) -> DateText | None:
    m = _DATE.match(literal.strip())
    if m is None:
        return None
    year = int(m.group(1))
    month = int(m.group(2)) if m.group(2) else None
    day = int(m.group(3)) if m.group(3) else None
    if not 1900 <= year <= 2100 or (month is not None and not 1 <= month <= 12):
        return None
    if day is not None and (month is None or not 1 <= day <= calendar.monthrange(year, month)[1]):
        return None
    if m.group(4) and day is None:
        return None
    return DateText(year, month, day, m.group(4))


def _months(y: int, m: int) -> int:
    return y * 12 + (m - 1)


def _last_day(y: int, m: int) -> int:
    return calendar.monthrange(y, m)[1]


def claims_time(kind: str, when: tuple[int, ...], literal: Literal) -> bool:
    """Does `literal` stand for the year / month / quarter / date `when`?"""
    if literal.positional:
        return False
    if kind == "year" and literal.text == str(when[0]):
        return True
    d = date_text(literal.text) if literal.is_string else None
    if d is None:
        return False
    if kind == "year":
        (y,) = when
        if d.day is not None and d.month is not None:
            new_year = (d.month, d.day) == (1, 1) and d.year in (y, y + 1)
            return new_year or (d.year, d.month, d.day) == (y, 12, 31)
        return d.month in (1, 12) and d.year == y
    if kind == "month":
        y, m = when
        if d.month is None:
            return False
        if d.day is None:
            return (d.year, d.month) == (y, m)
        gap = _months(d.year, d.month) - _months(y, m)
        return (d.day == 1 and gap in (0, 1)) or (gap == 0 and d.day == _last_day(y, m))
    if kind == "quarter":
        y, q = when
        first = 3 * (q - 1) + 1
        if d.month is None or d.day is None:
            return False
        gap = _months(d.year, d.month) - _months(y, first)
        return (d.day == 1 and gap in (0, 3)) or (gap == 2 and d.day == _last_day(d.year, d.month))
    if kind == "date":
        return (d.year, d.month, d.day) == when
    return False


def months_between(kind: str, old: tuple[int, ...], new: tuple[int, ...]) -> int:
    if kind == "year":
        return 12 * (new[0] - old[0])
    if kind == "month":
        return _months(new[0], new[1]) - _months(old[0], old[1])
    if kind == "quarter":
        return 12 * (new[0] - old[0]) + 3 * (new[1] - old[1])
    raise ValueError(kind)


def shift(literal: str, months: int) -> str:
    """`literal` (a year, year-month or date) moved by whole months; first and last days stay so."""
    if literal.isdigit():
        return str(int(literal) + months // 12)
    d = date_text(literal)
    if d is None:
        raise ValueError(f"not a date: {literal!r}")
    if d.month is None:
        return f"{d.year + months // 12:04d}"
    total = _months(d.year, d.month) + months
    y, m = divmod(total, 12)
    m += 1
    if d.day is None:
        return f"{y:04d}-{m:02d}"
    day = _last_day(y, m) if d.day == _last_day(d.year, d.month) else min(d.day, _last_day(y, m))
    return f"{y:04d}-{m:02d}-{day:02d}{d.rest}"


def replace_date(literal: str, new: tuple[int, int, int]) -> str:
    d = date_text(literal)
    rest = d.rest if d is not None else ""
    return f"{new[0]:04d}-{new[1]:02d}-{new[2]:02d}{rest}"
