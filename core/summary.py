"""The one-sentence answer shown above the table."""

from __future__ import annotations

import decimal
import math
from collections.abc import Sequence
from typing import Any

from core.answer import json_value


def format_value(value: Any) -> str:
    if value is None:
        return "nothing (NULL)"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float | decimal.Decimal):
        number = float(value)
        return f"{number:,.0f}" if number.is_integer() else f"{number:,.2f}"
    return str(value)


def display(value: Any) -> str:
    """A value as a table cell reads to a person: 16960997.45, not 16960997.44999997."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "NaN" if math.isnan(value) else format(value, ".12g")
    return " ".join(str(json_value(value)).split())


def humanize(column: str) -> str:
    words = column.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else "Value"


def summarize(
    main_task: str, columns: Sequence[str], rows: Sequence[tuple[Any, ...]], truncated: bool
) -> str:
    if not rows:
        return "No rows match the question."
    task = main_task.strip().rstrip(".")
    if len(rows) == 1 and len(columns) == 1:
        return f"{task or humanize(columns[0])}: {format_value(rows[0][0])}."
    if len(rows) == 1:
        pairs = ", ".join(f"{humanize(c)} {format_value(v)}" for c, v in zip(columns, rows[0], strict=False))
        return f"{task + ': ' if task else ''}{pairs}."
    count = f"{len(rows):,}{'+' if truncated else ''} rows"
    if len(columns) == 2 and isinstance(rows[0][1], int | float | decimal.Decimal):
        return f"{task + ' — ' if task else ''}{count}; first: {format_value(rows[0][0])} ({format_value(rows[0][1])})."
    return f"{task + ' — ' if task else ''}{count}."
