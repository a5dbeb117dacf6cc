"""A verified query and its parameters, as stored and as the matcher and the adapters read them."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from core.verified.reading import SlotKind


@dataclass(frozen=True)
class Param:
    """A value of the verified question that may change: which words, and which SQL literals."""

    name: str  # what people read: "city", "year", "limit"
    kind: SlotKind
    text: str  # as the verified question says it ("Lyon", "March 2025")
    start: int  # character offsets in the verified question
    end: int
    literals: tuple[int, ...]  # the SQL literals it stands for (core/verified/literals.py)
    originals: tuple[str, ...]  # their text, checked before anything is substituted
    table: str = ""  # kind "value": the column whose stored value it is
    column: str = ""
    value: str = ""  # kind "value": the stored value
    when: tuple[int, ...] = ()  # other kinds: (n,), (Y,), (Y, M), (Y, Q), (Y, M, D)

    @property
    def label(self) -> str:
        return f"⟨{self.table}.{self.column}⟩".lower() if self.kind == "value" else f"⟨{self.kind}⟩"

    @property
    def shown(self) -> str:
        return self.value if self.kind == "value" else self.text

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "text": self.text,
            "start": self.start,
            "end": self.end,
            "literals": list(self.literals),
            "originals": list(self.originals),
            "table": self.table,
            "column": self.column,
            "value": self.value,
            "when": list(self.when),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Param:
        return cls(
            name=str(data["name"]),
            kind=data["kind"],
            text=str(data["text"]),
            start=int(data["start"]),
            end=int(data["end"]),
            literals=tuple(int(i) for i in data.get("literals", ())),
            originals=tuple(str(t) for t in data.get("originals", ())),
            table=str(data.get("table", "")),
            column=str(data.get("column", "")),
            value=str(data.get("value", "")),
            when=tuple(int(i) for i in data.get("when", ())),
        )


@dataclass(frozen=True)
class VerifiedQuery:
    """A question → SQL pair an analyst vouched for, on one database."""

    id: int
    database: str
    question: str
    sql: str
    dialect: str
    params: tuple[Param, ...] = ()
    # False when the question speaks of a moving period ("this year") but the SQL fixed its dates:
    # it is then only shown to the SQL writer as an example, never answered from.
    reusable: bool = True
    note: str = ""  # why it is not reusable
    verified_by: str = ""  # the chat's user id of the analyst
    verified_at: dt.datetime = field(default_factory=lambda: dt.datetime.now(dt.UTC))
    verifier_name: str = ""  # their display name, for chats that cannot show a user id as one (Teams)
    signature: str = ""  # the catalog signature it last ran against
    stale_reason: str = ""  # set when it stopped passing the guard or running; not reused then
    stale_at: dt.datetime | None = None
    active: bool = True  # False once unverified
    team: str = ""
    channel: str = ""

    @property
    def stale(self) -> bool:
        return bool(self.stale_reason)

    def describe_params(self) -> str:
        return ", ".join(f"{p.name} ({p.shown})" for p in self.params) or "none"
