"""When a run posts: always, only when there are rows, only when the result changed, or only when a
test on a column holds ("count > 0", "status = 'late'").

`should_post` decides on the run's result and says why, for the run record; a condition that can
no longer be checked (its column is gone) is a `ConditionError`, which fails the run with a message
saying what the result has instead.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from core.answer import json_value
from core.schedules.errors import ScheduleError
from core.schedules.results import as_number
from core.summary import format_value

ConditionKind = Literal["always", "not_empty", "changed", "column"]
_OPS: dict[str, Callable[[Any, Any], bool]] = {
    ">": operator.gt,
    ">=": operator.ge,
    "<": operator.lt,
    "<=": operator.le,
    "=": operator.eq,
    "==": operator.eq,
    "!=": operator.ne,
    "<>": operator.ne,
}
_COLUMN_CONDITION = re.compile(
    r"^\s*(?P<col>[A-Za-z_][\w.]*|\"[^\"]+\"|`[^`]+`)\s*(?P<op>>=|<=|!=|<>|==|=|>|<)\s*(?P<val>.+?)\s*$"
)


@dataclass(frozen=True)
class Condition:
    kind: ConditionKind = "always"
    column: str = ""
    op: str = ""
    value: float | str | None = None

    def describe(self) -> str:
        if self.kind == "not_empty":
            return "only when there are rows"
        if self.kind == "changed":
            return "only when the result changed"
        if self.kind == "column":
            value = self.value if isinstance(self.value, str) else format_value(self.value)
            return f"only when {self.column} {self.op} {value}"
        return "every run"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Condition:
        if not data:
            return cls()
        return cls(**{k: v for k, v in data.items() if k in cls.__dataclass_fields__})


def parse_condition(text: str) -> Condition:
    """`count > 0`, `status = 'late'`, `total >= 1000.5` — a test on one column of the result."""
    match = _COLUMN_CONDITION.match(text or "")
    if not match:
        raise ScheduleError(
            "Write the condition as a column, a comparison and a value, e.g. `count > 0` or `status = 'late'`."
        )
    column = match.group("col").strip('"`')
    raw = match.group("val").strip()
    value: float | str
    if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "'\"":
        value = raw[1:-1]
    else:
        try:
            value = float(raw)
        except ValueError:
            value = raw
    return Condition("column", column, match.group("op"), value)


class ConditionError(ValueError):
    """The condition cannot be checked on this result (e.g. the column is gone)."""


@dataclass(frozen=True)
class Decision:
    post: bool
    why: str  # for the run record: "no rows", "unchanged", "count > 0 held"…


def _holds(cell: Any, op: str, value: float | str | None) -> bool:
    if cell is None:
        return False
    compare = _OPS[op]
    if isinstance(value, float):
        number = as_number(cell)
        if number is None:
            try:
                number = float(str(cell))
            except ValueError:
                return False
        return compare(number, value)
    return compare(str(json_value(cell)), str(value))


def should_post(
    condition: Condition,
    columns: Sequence[str],
    rows: Sequence[Sequence[Any]],
    fingerprint: str,
    previous_fingerprint: str | None,
) -> Decision:
    if condition.kind == "not_empty":
        return Decision(bool(rows), "rows" if rows else "no rows")
    if condition.kind == "changed":
        if previous_fingerprint is None:
            return Decision(True, "first result")
        changed = fingerprint != previous_fingerprint
        return Decision(changed, "changed" if changed else "unchanged")
    if condition.kind == "column":
        names = [c.lower() for c in columns]
        wanted = condition.column.lower()
        if wanted not in names:
            wanted = wanted.rsplit(".", 1)[-1]
        if wanted not in names:
            raise ConditionError(
                f"The result has no column '{condition.column}' to test (it has: {', '.join(columns)})."
            )
        i = names.index(wanted)
        held = any(_holds(row[i], condition.op, condition.value) for row in rows)
        text = condition.describe().removeprefix("only when ")
        return Decision(held, f"{text} {'held' if held else 'did not hold'}")
    return Decision(True, "always")
