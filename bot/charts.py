"""A chart for the answers that read better as one: a time series or a category → number breakdown.

`chart_spec` decides (pure, cheap, testable); `render_png` draws with matplotlib's Agg canvas
through the object API — no display, no pyplot global state, safe on worker threads; `alt_text`
says in words what the chart shows, for screen readers and notifications. Results that are not one
of the two shapes (several rows per x, ids, free text) get no chart: a wrong chart is worse than
none.

What makes a chart honest and readable is taken from the result's shape (core/result_shape.py):
counts and sums start at zero (56 → 113 must not look tenfold), numbers carry thousands separators
and the catalog's unit, category codes are spelled out as the catalog decodes them ("ACT" →
"active"), the grid stays behind the bars, and the PNG is drawn at twice the usual resolution so it
stays sharp on high-density screens. Platform-neutral: the Slack and Teams adapters both use it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from bot.extras import installed
from core.result_shape import ID_NAMES, ResultShape, plain_shape
from core.summary import NumberStyle, as_time, is_time_column, number_style, number_text, time_labels, trend
from core.units import with_unit

if TYPE_CHECKING:
    from matplotlib.axis import Axis

MAX_BARS = 30
MAX_POINTS = 2000
MAX_LABEL = 28
WIDTH_IN, HEIGHT_IN, DPI = 8.0, 4.5, 200  # 1600 × 900 pixels: 2× a usual 800 × 450 chart
BAR_COLOR = "#2f6db5"
LINE_COLOR = "#2f6db5"
GRID_COLOR = "#d9dde3"


@dataclass(frozen=True)
class ChartSpec:
    kind: Literal["line", "bar"]
    x: int  # column index of the x axis (time or category)
    y: int  # column index of the number
    title: str
    xlabel: str
    ylabel: str  # with the unit: "Credit (€)"
    unit: str = ""
    zero_baseline: bool = False  # counts and sums: the value axis starts at zero
    codes: tuple[tuple[str, str], ...] = ()  # category code → what it means (the catalog's values)


def _number(value: Any) -> bool:
    return isinstance(value, int | float | decimal.Decimal) and not isinstance(value, bool)


def chart_spec(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "", shape: ResultShape | None = None
) -> ChartSpec | None:
    if len(columns) < 2 or len(rows) < 2 or len(rows) > MAX_POINTS or not installed("charts"):
        return None  # without matplotlib (the `charts` extra) no answer gets a chart
    shape = shape if shape is not None and len(shape) == len(columns) else plain_shape(columns)
    width = len(columns)
    values = [[r[i] for r in rows] for i in range(width)]
    numeric = [
        all(v is None or _number(v) for v in col) and any(v is not None for v in col) for col in values
    ]
    measures = [
        i for i in range(width) if numeric[i] and not ID_NAMES.search(columns[i]) and not shape[i].identifier
    ]
    for x in range(width):
        xs = values[x]
        if any(v is None for v in xs) or len(set(map(str, xs))) != len(xs):
            continue  # one y per x, or the chart would mix series
        ys = [i for i in measures if i != x]
        if not ys:
            continue
        y = next((i for i in ys if i > x), ys[0])
        if is_time_column(shape[x], xs):
            kind: Literal["line", "bar"] = "line"
        elif not numeric[x] and all(isinstance(v, str) for v in xs) and len(xs) <= MAX_BARS:
            kind = "bar"
        else:
            continue
        measure = shape[y]
        nonnegative = all(v is None or float(v) >= 0 for v in values[y])
        return ChartSpec(
            kind=kind,
            x=x,
            y=y,
            title=_title(title, measure.header, shape[x].header),
            xlabel=shape[x].titled,
            ylabel=measure.titled,
            unit=measure.unit,
            zero_baseline=measure.additive or (kind == "bar" and nonnegative),
            codes=tuple((str(k), str(v)) for k, v in shape[x].codes.items()),
        )
    return None


def _title(question: str, y: str, x: str) -> str:
    text = " ".join(question.split())
    if not text:
        return f"{y} by {x[:1].lower()}{x[1:]}"
    return text if len(text) <= 80 else text[:79] + "…"


def _sentence(text: str) -> str:
    text = text.strip().rstrip(":")
    return text if text.endswith((".", "?", "!")) else text + "."


def _clip(label: str) -> str:
    return label if len(label) <= MAX_LABEL else label[: MAX_LABEL - 1] + "…"


def category_labels(spec: ChartSpec, xs: Sequence[Any]) -> list[str]:
    """Category values as people read them: codes the catalog decodes ("ACT" → "active") are spelled
    out — all of them or none, when a meaning would not fit a label ("smb" stays "smb")."""
    codes = dict(spec.codes)
    meanings = [codes.get(str(x)) for x in xs]
    if codes and all(m is not None and len(m) <= MAX_LABEL for m in meanings):
        return [str(m) for m in meanings]
    return [_clip(str(x)) for x in xs]


def _points(spec: ChartSpec, rows: Sequence[Sequence[Any]]) -> list[tuple[Any, float]]:
    points = [(r[spec.x], float(r[spec.y])) for r in rows if r[spec.y] is not None]
    if spec.kind == "line":
        points.sort(key=lambda p: as_time(p[0]) or p[0])
    return points


def _style(spec: ChartSpec, rows: Sequence[Sequence[Any]]) -> NumberStyle:
    return number_style([r[spec.y] for r in rows])


def alt_text(spec: ChartSpec, rows: Sequence[Sequence[Any]]) -> str:
    """What the chart shows, in a sentence: the trend of a time series, the extremes of a breakdown."""
    points = _points(spec, rows)
    style = _style(spec, rows)
    measure = spec.ylabel.split(" (")[0]
    if not points:
        return f"{spec.title}: no values to chart."
    if spec.kind == "line":
        labels = time_labels([p[0] for p in points]) or [str(p[0]) for p in points]
        text = f"Line chart: {_sentence(spec.title)} {measure} {trend(labels, [p[1] for p in points], spec.unit, style)}."
    else:
        labels = category_labels(spec, [p[0] for p in points])
        high = max(range(len(points)), key=lambda i: points[i][1])
        low = min(range(len(points)), key=lambda i: points[i][1])

        def value(i: int) -> str:
            return with_unit(number_text(points[i][1], style), spec.unit)

        by = spec.xlabel[:1].lower() + spec.xlabel[1:]
        text = (
            f"Bar chart: {_sentence(spec.title)} {measure} by {by}, {len(points)} bars: "
            f"highest {labels[high]} ({value(high)}), lowest {labels[low]} ({value(low)})."
        )
    return text[:1000]


def render_png(spec: ChartSpec, rows: Sequence[Sequence[Any]], dpi: int = DPI) -> bytes:
    """The chart as a PNG; `dpi` sets its size (8 × 4.5 inches: 1600 × 900 pixels at the default;
    a smaller one fits inside a Teams card)."""
    from matplotlib.dates import DateFormatter  # imported here: ~0.5 s, only when a chart is drawn
    from matplotlib.figure import Figure
    from matplotlib.ticker import FuncFormatter, MaxNLocator

    points = _points(spec, rows)
    style = _style(spec, rows)
    ticks = FuncFormatter(lambda v, _pos: number_text(v, _tick_style(style, v)))
    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=dpi, layout="constrained")
    ax = fig.add_subplot()
    ax.set_axisbelow(True)  # the grid stays behind bars and lines
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    value_axis: Axis = ax.yaxis
    if spec.kind == "line":
        xs = [as_time(x) or x for x, _ in points]
        ax.plot(
            xs,  # type: ignore[arg-type]  # dates too (matplotlib's date converter); its stubs say numbers
            [y for _, y in points],
            color=LINE_COLOR,
            linewidth=2,
            marker="o" if len(points) <= 40 else None,
            markersize=4,
        )
        if xs and isinstance(xs[0], dt.datetime):
            if all(x.day == 1 for x in xs):  # months: "Jan 2024", not "2024-01"
                ax.xaxis.set_major_formatter(DateFormatter("%b %Y"))
            fig.autofmt_xdate()
        ax.set_xlabel(spec.xlabel)
        ax.set_ylabel(spec.ylabel)
        if spec.zero_baseline:
            ax.set_ylim(bottom=0)
        ax.grid(True, axis="y", color=GRID_COLOR, linewidth=0.8)
    else:
        labels = category_labels(spec, [x for x, _ in points])
        heights = [y for _, y in points]
        if len(labels) > 8 or max((len(s) for s in labels), default=0) > 12:
            ax.barh(labels[::-1], heights[::-1], color=BAR_COLOR)
            ax.set_xlabel(spec.ylabel)
            ax.set_ylabel(spec.xlabel)
            value_axis = ax.xaxis
            ax.grid(True, axis="x", color=GRID_COLOR, linewidth=0.8)
            if spec.zero_baseline:
                ax.set_xlim(left=0)
        else:
            ax.bar(labels, heights, color=BAR_COLOR)
            ax.set_xlabel(spec.xlabel)
            ax.set_ylabel(spec.ylabel)
            ax.grid(True, axis="y", color=GRID_COLOR, linewidth=0.8)
            if spec.zero_baseline:
                ax.set_ylim(bottom=0)
    value_axis.set_major_formatter(ticks)
    if style.decimals == 0:
        value_axis.set_major_locator(MaxNLocator(integer=True))
    ax.set_title(spec.title, loc="left", fontsize=12, fontweight="bold")
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    return buffer.getvalue()


def _tick_style(style: NumberStyle, value: float) -> NumberStyle:
    """Tick labels: whole numbers without decimals (1,000 not 1,000.00), fractions as the data are."""
    if float(value).is_integer():
        return NumberStyle(decimals=0, separators=style.separators)
    return NumberStyle(decimals=max(1, style.decimals or 0), separators=style.separators)


@dataclass(frozen=True)
class Chart:
    png: bytes
    alt: str
    spec: ChartSpec


def chart_for(
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    title: str = "",
    shape: ResultShape | None = None,
    dpi: int = DPI,
) -> Chart | None:
    spec = chart_spec(columns, rows, title, shape)
    return Chart(render_png(spec, rows, dpi), alt_text(spec, rows), spec) if spec else None


def chart_png(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], title: str = "", shape: ResultShape | None = None
) -> bytes | None:
    chart = chart_for(columns, rows, title, shape)
    return chart.png if chart else None
