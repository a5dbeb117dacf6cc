"""What changed since the last run: rows added or removed, numbers up or down.

Rows are keyed on their non-numeric columns (and on numeric ones that name a key: ids, years,
dates…), so "core — open: 2 → 3 (▲ 1)" follows a team across runs; a result without a usable key
is compared as a multiset of rows. `describe_diff` turns the comparison into the lines posted
under a scheduled result.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from core.schedules.results import SNAPSHOT_ROWS, Snapshot, as_number
from core.summary import format_value


@dataclass(frozen=True)
class Change:
    key: tuple[Any, ...]  # the values of the key columns ("" for a one-row result)
    column: str
    old: float
    new: float


@dataclass(frozen=True)
class Diff:
    first: bool = False  # nothing to compare with
    columns_changed: bool = False
    added: tuple[tuple[Any, ...], ...] = ()
    removed: tuple[tuple[Any, ...], ...] = ()
    changes: tuple[Change, ...] = ()
    key_columns: tuple[int, ...] = ()
    row_counts: tuple[int, int] = (0, 0)
    partial: bool = False  # only the first SNAPSHOT_ROWS rows were compared

    @property
    def unchanged(self) -> bool:
        return (
            not self.first
            and not self.columns_changed
            and not (self.added or self.removed or self.changes)
            and self.row_counts[0] == self.row_counts[1]
        )


KEY_NAMES = re.compile(
    r"(^id$|_id$|^id_|_no$|^code$|(^|_)(year|quarter|month|week|day|date|hour)(_|$))", re.I
)


def _measures(columns: Sequence[str], *row_sets: Sequence[Sequence[Any]]) -> list[bool]:
    measure = []
    for i, name in enumerate(columns):
        values = [r[i] for rows in row_sets for r in rows if r[i] is not None]
        measure.append(
            bool(values) and all(as_number(v) is not None for v in values) and not KEY_NAMES.search(name)
        )
    return measure


def diff(previous: Snapshot | None, current: Snapshot) -> Diff:
    """Rows added and removed, and numbers up or down, keyed on the non-numeric columns."""
    counts = (previous.row_count if previous else 0, current.row_count)
    if previous is None:
        return Diff(first=True, row_counts=counts)
    partial = not (previous.complete and current.complete)
    if [c.lower() for c in previous.columns] != [c.lower() for c in current.columns]:
        return Diff(columns_changed=True, row_counts=counts, partial=partial)
    measure = _measures(current.columns, previous.rows, current.rows)
    keys = tuple(i for i, m in enumerate(measure) if not m)
    values = [i for i, m in enumerate(measure) if m]

    def key(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(row[i] for i in keys)

    old_keys = [key(r) for r in previous.rows]
    new_keys = [key(r) for r in current.rows]
    keyed = len(set(old_keys)) == len(old_keys) and len(set(new_keys)) == len(new_keys)
    if not keyed:  # no usable key: compare whole rows as a multiset
        old, new = Counter(previous.rows), Counter(current.rows)
        return Diff(
            added=tuple((new - old).elements()),
            removed=tuple((old - new).elements()),
            row_counts=counts,
            partial=partial,
        )
    before = dict(zip(old_keys, previous.rows, strict=True))
    after = dict(zip(new_keys, current.rows, strict=True))
    changes = []
    for k, row in after.items():
        if k not in before:
            continue
        for i in values:
            a, b = as_number(before[k][i]), as_number(row[i])
            if a is not None and b is not None and a != b:
                changes.append(Change(k, current.columns[i], a, b))
    return Diff(
        added=tuple(after[k] for k in after if k not in before),
        removed=tuple(before[k] for k in before if k not in after),
        changes=tuple(changes),
        key_columns=keys,
        row_counts=counts,
        partial=partial,
    )


def _row_text(row: Sequence[Any], key_columns: Sequence[int]) -> str:
    cells = [row[i] for i in key_columns] if key_columns else list(row)
    text = " · ".join(format_value(v) if not isinstance(v, str) else v for v in cells[:4])
    return text if len(text) <= 80 else text[:79] + "…"


def _change_text(change: Change) -> str:
    arrow = "▲" if change.new > change.old else "▼"
    delta = change.new - change.old
    where = " · ".join(str(v) for v in change.key if v is not None)
    label = f"{where} — {change.column}" if where else change.column
    return (
        f"{label}: {format_value(_tidy(change.old))} → {format_value(_tidy(change.new))} "
        f"({arrow} {format_value(_tidy(abs(delta)))})"
    )


def _tidy(number: float) -> int | float:
    return int(number) if float(number).is_integer() else number


def describe_diff(d: Diff, limit: int = 5) -> list[str]:
    """Lines a person reads under a scheduled result: what is new since the last run."""
    if d.first:
        return ["First run — nothing to compare with yet."]
    if d.columns_changed:
        return ["The result has different columns than last time, so I can't compare the two."]
    if d.unchanged:
        return ["No change since the last run."]
    lines: list[str] = []
    if d.row_counts[0] != d.row_counts[1]:
        lines.append(f"Rows: {d.row_counts[0]:,} → {d.row_counts[1]:,}")
    for label, rows in (("added", d.added), ("removed", d.removed)):
        if rows:
            shown = ", ".join(_row_text(r, d.key_columns) for r in rows[:limit])
            more = f" and {len(rows) - limit} more" if len(rows) > limit else ""
            lines.append(f"{len(rows)} row{'s' if len(rows) != 1 else ''} {label}: {shown}{more}")
    if d.changes:
        ups = sum(1 for c in d.changes if c.new > c.old)
        downs = len(d.changes) - ups
        if len(d.changes) > 1:
            lines.append(f"{ups} number{'s' if ups != 1 else ''} up, {downs} down")
        lines.extend(_change_text(c) for c in d.changes[:limit])
        if len(d.changes) > limit:
            lines.append(f"… and {len(d.changes) - limit} more changes")
    if d.partial:
        lines.append(f"(compared on the first {SNAPSHOT_ROWS:,} rows)")
    return lines
