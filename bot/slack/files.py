"""The files that go with an answer: the CSV of the whole result and, where one helps, a chart PNG.

The CSV is rounded exactly as the sentence and the table are (core/summary.py `Presentation`):
13092.37 in the table is 13092.37 in the file. NULL is an empty field, as spreadsheets expect.
The chart comes with alt text that says what it shows.
"""

from __future__ import annotations

import csv
import io
import logging
from collections.abc import Sequence
from typing import Any

from bot.answer_view import slug
from bot.charts import chart_for
from core.answer import Outcome, json_value
from core.summary import Presentation, present

log = logging.getLogger(__name__)


def csv_bytes(
    columns: Sequence[str], rows: Sequence[Sequence[Any]], presentation: Presentation | None = None
) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(columns)
    if presentation is None:
        writer.writerows([json_value(v) for v in row] for row in rows)
    else:
        writer.writerows(presentation.csv_row(row) for row in rows)
    return buffer.getvalue().encode("utf-8")


def result_files(
    outcome: Outcome, *, with_csv: bool, presentation: Presentation | None = None
) -> list[dict[str, Any]]:
    """`file_uploads` entries for files_upload_v2: the CSV when asked for, a chart when one fits."""
    presentation = presentation or present(outcome)
    files: list[dict[str, Any]] = []
    name = f"{slug(outcome.question)}-{outcome.trace.id}"
    if with_csv:
        files.append(
            {
                "filename": f"{name}.csv",
                "content": csv_bytes(outcome.columns, outcome.rows, presentation),
                "title": f"{outcome.question[:200]} ({outcome.row_count:,} rows)",
            }
        )
    try:
        chart = chart_for(outcome.columns, outcome.rows, outcome.question, presentation.shape)
    except Exception:  # a chart is a bonus: never lose the answer or the CSV over it
        log.exception("trace %s: the chart could not be drawn", outcome.trace.id)
        chart = None
    if chart is not None:
        files.append(
            {
                "filename": f"{name}.png",
                "content": chart.png,
                "title": f"Chart: {outcome.question[:200]}",
                "alt_txt": chart.alt[:1000],
            }
        )
    return files
