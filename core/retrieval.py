"""What retrieval found: schema names, stored values and catalog descriptions matching a question.

These are the retrieve stage's result types, read by linking, clarification, the SQL writer's
prompt and the value index (which produces `ValueMatch`es). They live apart from the stage
(core/retrieve.py) and import nothing of Askbase's, so any stage may use them without depending
on how retrieval is done.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Keywords:
    """What to look up: object words (tables/columns) and filter values (LAIA-SQL §4.1)."""

    objects: tuple[str, ...] = ()
    values: tuple[str, ...] = ()


@dataclass(frozen=True)
class SchemaMatch:
    keyword: str
    table: str
    column: str | None  # None: the table itself
    score: float  # 0..1
    via: str = "name"  # name | synonym | description


@dataclass(frozen=True)
class ValueMatch:
    keyword: str
    table: str
    column: str
    value: str  # the stored spelling
    score: float  # 0..1
    via: str = "value"  # value: found among stored values | meaning: the catalog says the code means this
    meaning: str = ""  # for via="meaning": the catalog's meaning of the stored code


@dataclass(frozen=True)
class DescriptionHit:
    table: str
    column: str | None
    text: str
    score: float
    value: str | None = None  # set when the text explains one stored value (a code's meaning)


@dataclass
class Retrieval:
    schema: list[SchemaMatch] = field(default_factory=list)
    values: list[ValueMatch] = field(default_factory=list)
    descriptions: list[DescriptionHit] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # e.g. "no value index: searched directly"

    def tables(self) -> list[str]:
        """Tables touched by any match, best first."""
        scored: dict[str, float] = {}
        for table, score in [
            *((m.table, m.score) for m in self.schema),
            *((m.table, m.score) for m in self.values),
        ]:
            scored[table] = max(scored.get(table, 0.0), score)
        return sorted(scored, key=lambda t: -scored[t])

    def summary(self) -> dict[str, Any]:
        """What matched and how well, in words, for the trace."""

        def where(table: str, column: str | None) -> str:
            return f"{table}.{column}" if column else table

        return {
            "schema": [
                f"{m.keyword!r} → {where(m.table, m.column)} ({m.via}, {m.score:.2f})" for m in self.schema
            ],
            "values": [
                f"{m.keyword!r} → {m.table}.{m.column} = {m.value!r}"
                + (f" ('{m.meaning}')" if m.meaning else "")
                + f" ({m.via}, {m.score:.2f})"
                for m in self.values
            ],
            "descriptions": [
                f"{where(d.table, d.column)}: {d.text} ({d.score:.2f})" for d in self.descriptions
            ],
            "notes": list(self.notes),
        }
