"""A run's result as a schedule keeps it between runs: JSON values, a fingerprint, a `Snapshot`.

The fingerprint answers "did the result change?" (the `changed` condition) for any size of
result; the snapshot is what the next run is compared with to say what changed (diff.py). Both
are stored on the schedule's row after a run that worked. The snapshot is a preview
(core/previews.py): the first SNAPSHOT_ROWS rows that fit in `state.preview_bytes`, long texts cut
to their start — and it says so (`cut`, `row_count`), so the diff says what it compared.
"""

from __future__ import annotations

import decimal
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.answer import json_value
from core.previews import rows_preview

SNAPSHOT_ROWS = 500  # rows of the last result kept for "what changed"


def as_number(value: Any) -> float | None:
    """A database value as a float when it is a number (booleans are not), else None."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float | decimal.Decimal):
        return float(value)
    return None


def _plain(rows: Sequence[Sequence[Any]]) -> list[list[Any]]:
    return [[json_value(v) for v in row] for row in rows]


def fingerprint(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """Equal for equal results (column names, values, row order)."""
    text = json.dumps([list(columns), _plain(rows)], default=str, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Snapshot:
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]  # JSON values: the leading rows that fit the preview budget
    row_count: int  # rows of the whole result
    cut: bool = False  # some long texts in `rows` are only their start (core.previews.marker)

    @property
    def complete(self) -> bool:
        """Every row, every value whole: a comparison with it is a comparison of the results."""
        return not self.cut and len(self.rows) == self.row_count

    def to_json(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "row_count": self.row_count,
            "cut": self.cut,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Snapshot | None:
        if not data:
            return None
        rows = tuple(tuple(r) for r in data["rows"])
        return cls(tuple(data["columns"]), rows, int(data["row_count"]), bool(data.get("cut")))


def snapshot(columns: Sequence[str], rows: Sequence[Sequence[Any]], *, budget: int) -> Snapshot:
    """What is kept of a result for the next run's comparison: at most `budget` bytes of rows."""
    kept = rows_preview(_plain(rows[:SNAPSHOT_ROWS]), budget)
    return Snapshot(tuple(columns), kept.rows, len(rows), kept.values_cut)
