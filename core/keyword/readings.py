"""Readings: what some words of a question mean, as a clarification option carries it.

When keyword mode finds two equally good readings of the same words ('Frankfurt' as a city or
as part of a datacenter name), it returns `Outcome(status="clarify")` whose options each carry
one `Reading`, encoded in `Option.value`. To re-ask with the person's choice, add it to the
request's transcript (its `choices` are the chosen options' values):

    outcome = answer(db, Request(question), settings, llm)
    if outcome.status == "clarify":
        picked = exchange_for(outcome.clarification, option=0)
        outcome = answer(db, Request(question, transcript=Transcript().plus(picked)), settings, llm)

Keyword mode then pins those words to that reading and does not ask about them again. The
encoding is a small JSON object, so other parts (the clarification feature, stored pending
clarifications) can read it without importing the engine.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

PREFIX = "reading:"


@dataclass(frozen=True)
class Reading:
    """`words` of the question mean `table`[.`column`] [`op` `value`]."""

    words: str  # as typed in the question ('Frankfurt')
    table: str
    column: str | None = None  # None: the words name the table itself
    value: str | None = None  # None: the words name the column (or table), not a stored value
    op: Literal["=", "contains"] = "="

    def encode(self) -> str:
        data: dict[str, str] = {"words": self.words, "table": self.table}
        if self.column:
            data["column"] = self.column
        if self.value is not None:
            data["value"] = self.value
        if self.op != "=":
            data["op"] = self.op
        return PREFIX + json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def decode(cls, text: str) -> Reading | None:
        """The reading an option value encodes; None for anything else (e.g. free text)."""
        if not text.startswith(PREFIX):
            return None
        try:
            data = json.loads(text[len(PREFIX) :])
            op = data.get("op", "=")
            return cls(
                words=str(data["words"]),
                table=str(data["table"]),
                column=data.get("column"),
                value=data.get("value"),
                op="contains" if op == "contains" else "=",
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None


def decode_all(choices: Iterable[str]) -> list[Reading]:
    return [r for r in (Reading.decode(c) for c in choices) if r is not None]
