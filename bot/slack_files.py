"""The files that go with an answer: the CSV of the whole result and, where one helps, a chart PNG."""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Sequence
from typing import Any

from bot.charts import chart_png
from core.answer import Outcome, json_value

log = logging.getLogger(__name__)


def csv_bytes(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    writer.writerows([json_value(v) for v in row] for row in rows)
    return buffer.getvalue().encode("utf-8")


def slug(text: str, limit: int = 40) -> str:
    words = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return words[:limit].rstrip("-") or "result"


def result_files(outcome: Outcome, *, with_csv: bool) -> list[dict[str, Any]]:
    """`file_uploads` entries for files_upload_v2: the CSV when asked for, a chart when one fits."""
    files: list[dict[str, Any]] = []
    name = f"{slug(outcome.question)}-{outcome.trace.id}"
    if with_csv:
        files.append(
            {
                "filename": f"{name}.csv",
                "content": csv_bytes(outcome.columns, outcome.rows),
                "title": f"{outcome.question[:200]} ({outcome.row_count:,} rows)",
            }
        )
    try:
        png = chart_png(outcome.columns, outcome.rows, outcome.question)
    except Exception:  # a chart is a bonus: never lose the answer or the CSV over it
        log.exception("trace %s: the chart could not be drawn", outcome.trace.id)
        png = None
    if png:
        files.append(
            {
                "filename": f"{name}.png",
                "content": png,
                "title": f"Chart: {outcome.question[:200]}",
                "alt_txt": f"Chart of {', '.join(outcome.columns[:2])}"[:1000],
            }
        )
    return files
