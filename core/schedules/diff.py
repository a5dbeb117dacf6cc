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
from dataclasses import dataclass, replace
from typing import Any

from core.schedules.results import Snapshot, as_number
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
    partial: bool = False  # a snapshot was a preview: only `compared_rows` rows, or long values cut
    compared_rows: tuple[int, int] | None = None  # rows each snapshot kept, when one left rows out
    values_cut: bool = False  # some long texts were compared by their start only

    @property
    def unchanged(self) -> bool:
        """Nothing changed — known only when both snapshots were whole."""
        return (
            not self.partial
            and not self.first
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
    old_rows, new_rows = previous.rows, current.rows
    old_all, new_all = len(old_rows) == previous.row_count, len(new_rows) == current.row_count
    base = Diff(
        row_counts=counts,
        partial=not (previous.complete and current.complete),
        values_cut=previous.cut or current.cut,
        compared_rows=None if old_all and new_all else (len(old_rows), len(new_rows)),
    )
    if [c.lower() for c in previous.columns] != [c.lower() for c in current.columns]:
        return replace(base, columns_changed=True)
    measure = _measures(current.columns, old_rows, new_rows)
    keys = tuple(i for i, m in enumerate(measure) if not m)
    values = [i for i, m in enumerate(measure) if m]

    def key(row: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(row[i] for i in keys)

    # A snapshot that kept only its first rows (core/previews.py) cannot tell that a row is gone
    # (it may be among those left out): rows are "removed" only when the new result was kept
    # whole, "added" only when the old one was.
    old_keys = [key(r) for r in old_rows]
    new_keys = [key(r) for r in new_rows]
    keyed = len(set(old_keys)) == len(old_keys) and len(set(new_keys)) == len(new_keys)
    if not keyed:  # no usable key: compare whole rows as a multiset
        old, new = Counter(old_rows), Counter(new_rows)
        return replace(
            base,
            added=tuple((new - old).elements()) if old_all else (),
            removed=tuple((old - new).elements()) if new_all else (),
        )
    before = dict(zip(old_keys, old_rows, strict=True))
    after = dict(zip(new_keys, new_rows, strict=True))
    changes = []
    for k, row in after.items():
        if k not in before:
            continue
        for i in values:
            a, b = as_number(before[k][i]), as_number(row[i])
            if a is not None and b is not None and a != b:
                changes.append(Change(k, current.columns[i], a, b))
    return replace(
        base,
        added=tuple(after[k] for k in after if k not in before) if old_all else (),
        removed=tuple(before[k] for k in before if k not in after) if new_all else (),
        changes=tuple(changes),
        key_columns=keys,
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
        if not lines:
            lines.append("No change in what I compared.")
        lines.append(compared_note(d))
    return lines


def compared_note(d: Diff) -> str:
    """What a comparison of previews covered (core/previews.py), so nobody takes it for the whole."""
    parts = []
    if d.compared_rows is not None:
        old, new = d.compared_rows
        both = f"the first {old:,} rows" if old == new else f"the first {old:,} rows before and {new:,} now"
        parts.append(both)
    if d.values_cut:
        parts.append("the start of long values")
    return f"(compared on {' and '.join(parts) or 'a preview'} only)"
