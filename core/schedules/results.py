"""A run's result as a schedule keeps it between runs: JSON values, a fingerprint, a `Snapshot`.

The fingerprint answers "did the result change?" (the `changed` condition) for any size of
result; the snapshot (the first SNAPSHOT_ROWS rows) is what the next run is compared with to say
what changed (diff.py). Both are stored on the schedule's row after a run that worked.
"""

from __future__ import annotations

import decimal
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.answer import json_value

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
    rows: tuple[tuple[Any, ...], ...]  # JSON values, the first SNAPSHOT_ROWS rows
    row_count: int

    @property
    def complete(self) -> bool:
        return len(self.rows) == self.row_count

    def to_json(self) -> dict[str, Any]:
        return {
            "columns": list(self.columns),
            "rows": [list(r) for r in self.rows],
            "row_count": self.row_count,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Snapshot | None:
        if not data:
            return None
        return cls(tuple(data["columns"]), tuple(tuple(r) for r in data["rows"]), int(data["row_count"]))


def snapshot(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> Snapshot:
    return Snapshot(tuple(columns), tuple(tuple(r) for r in _plain(rows[:SNAPSHOT_ROWS])), len(rows))
