"""A chart for the answers that read better as one: a time series or a category → number breakdown.

`chart_spec` decides (pure, cheap, testable); `render_png` draws with matplotlib's Agg canvas
through the object API — no display, no pyplot global state, safe on worker threads. Results
that are not one of the two shapes (several rows per x, ids, free text) get no chart: a wrong
chart is worse than none.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.summary import humanize

MAX_BARS = 30
MAX_POINTS = 2000
ISO_DATE = re.compile(r"^\d{4}-\d{2}(-\d{2})?([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?$")
TIME_NAMES = re.compile(r"(^|_)(date|day|week|month|year|quarter|time|at|on|period)(_|$)", re.I)
ID_NAMES = re.compile(r"(^id$|_id$|^id_|_no$|^code$|phone|zip)", re.I)


@dataclass(frozen=True)
class ChartSpec:
    kind: Literal["line", "bar"]
    x: int  # column index of the x axis (time or category)
    y: int  # column index of the number
    title: str
    xlabel: str
    ylabel: str


def _number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def as_time(value: Any) -> dt.datetime | None:
    """Dates and ISO date strings (SQLite returns dates as text) as datetimes; else None."""
    if isinstance(value, dt.datetime):
        return value.replace(tzinfo=None)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day)
    if isinstance(value, str) and ISO_DATE.match(value.strip()):
        text = value.strip()
        if len(text) == 7:  # YYYY-MM
            text += "-01"
        try:
            return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).replace(tzinfo=None)
        except ValueError:
            return None
    return None


def _is_time_column(name: str, values: Sequence[Any]) -> bool:
    if all(as_time(v) is not None for v in values):
        return True
    # years as integers ("year", 2021, 2022, ...)
    return bool(TIME_NAMES.search(name)) and all(isinstance(v, int) and 1800 <= v <= 2200 for v in values)


def chart_spec(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> ChartSpec | None:
    if len(columns) < 2 or len(rows) < 2 or len(rows) > MAX_POINTS:
        return None
    width = len(columns)
    values = [[r[i] for r in rows] for i in range(width)]
    numeric = [
        all(v is None or _number(v) for v in col) and any(v is not None for v in col) for col in values
    ]
    measures = [i for i in range(width) if numeric[i] and not ID_NAMES.search(columns[i])]
    for x in range(width):
        xs = values[x]
        if any(v is None for v in xs) or len(set(map(str, xs))) != len(xs):
            continue  # one y per x, or the chart would mix series
        ys = [i for i in measures if i != x]
        if not ys:
            continue
        y = next((i for i in ys if i > x), ys[0])
        if _is_time_column(columns[x], xs):
            kind: Literal["line", "bar"] = "line"
        elif not numeric[x] and all(isinstance(v, str) for v in xs) and len(xs) <= MAX_BARS:
            kind = "bar"
        else:
            continue
        return ChartSpec(
            kind=kind,
            x=x,
            y=y,
            title=_title(title, columns[y], columns[x]),
            xlabel=humanize(columns[x]),
            ylabel=humanize(columns[y]),
        )
    return None


def _title(question: str, y: str, x: str) -> str:
    text = " ".join(question.split())
    if not text:
        return f"{humanize(y)} by {humanize(x).lower()}"
    return text if len(text) <= 80 else text[:79] + "…"


def render_png(spec: ChartSpec, rows: Sequence[Sequence[Any]]) -> bytes:
    from matplotlib.figure import Figure  # imported here: ~0.5 s, only when a chart is drawn

    points = [(r[spec.x], r[spec.y]) for r in rows if r[spec.y] is not None]
    fig = Figure(figsize=(8, 4.5), dpi=100, layout="constrained")
    ax = fig.add_subplot()
    if spec.kind == "line":
        xy = sorted(((as_time(x) or x), float(y)) for x, y in points)
        ax.plot([p[0] for p in xy], [p[1] for p in xy], marker="o" if len(xy) <= 40 else None)
        if xy and isinstance(xy[0][0], dt.datetime):
            fig.autofmt_xdate()
    else:
        labels = [str(x) if len(str(x)) <= 28 else str(x)[:27] + "…" for x, _ in points]
        heights = [float(y) for _, y in points]
        if len(labels) > 8 or max((len(s) for s in labels), default=0) > 12:
            ax.barh(labels[::-1], heights[::-1])
            ax.set_xlabel(spec.ylabel)
            ax.set_ylabel(spec.xlabel)
        else:
            ax.bar(labels, heights)
    if not (spec.kind == "bar" and ax.get_xlabel()):
        ax.set_xlabel(spec.xlabel)
        ax.set_ylabel(spec.ylabel)
    ax.set_title(spec.title)
    ax.grid(True, alpha=0.3)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    return buffer.getvalue()


def chart_png(columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "") -> bytes | None:
    spec = chart_spec(columns, rows, title)
    return render_png(spec, rows) if spec else None
