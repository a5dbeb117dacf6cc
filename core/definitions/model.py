"""What a business definition is: a named piece of meaning the schema does not hold.

Why one record for five kinds: a definition is declared in YAML, imported from dbt or OSI,
taught in chat or learned from a clarification, and whichever way it comes it is stored,
versioned, reviewed, shown ("Using: loss ratio (defined by @ana, 3 Nov)") and retired the same
way. The kind says which fields mean something:

- entity: a business thing over tables — `table` with an optional `filter` ("in-force policies"),
  or `sql`, a whole SELECT ("agents": the parties with role 'AG' on an agreement). A query may
  name it like a table; it is expanded to that SELECT before the guard (core/definitions/expand.py).
- metric: an aggregate `sql` ("SUM(amount)") over `table` (a table or an entity), with an optional
  `filter`, the `grain` it is usually computed per, a `unit` and a `format`; or a ratio of two
  metrics (`numerator` / `denominator`). At a grain it can be named like a table too: one row per
  grain with the value in a column named like the metric.
- filter: a named condition `sql` on `table` ("operational": Status = 'Operational').
- relationship: how `table` joins `to` (`sql` is the ON condition, `via` the tables in between),
  through a supertype or a role table.
- instruction: a rule in words (`text`), for the SQL writer.

Every definition has a `scope` (the whole database, or a channel, a team, a person: what chat
teaches is often local) and a `provenance` (where it came from, who owns it, when, which version).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from typing import Any, Literal, get_args

Kind = Literal["entity", "metric", "filter", "relationship", "instruction"]
Source = Literal["yaml", "dbt", "osi", "taught", "learned"]
Status = Literal["active", "proposed", "retired", "rejected"]
KINDS: tuple[Kind, ...] = get_args(Kind)
SOURCES: tuple[Source, ...] = get_args(Source)

_WORD = re.compile(r"[^a-z0-9]+")


def ref_of(name: str) -> str:
    """The SQL name of a definition: 'Loss ratio' → loss_ratio, '% churn' → churn."""
    ref = _WORD.sub("_", name.lower()).strip("_")
    return ref if ref and not ref[0].isdigit() else f"d_{ref}"


@dataclass(frozen=True)
class Scope:
    """Where a definition applies: the whole database ("" everywhere), or one channel, team or person."""

    channel: str = ""
    team: str = ""
    user: str = ""

    @property
    def everywhere(self) -> bool:
        return not (self.channel or self.team or self.user)

    @property
    def rank(self) -> int:
        """More specific scopes win over broader ones: person > channel > team > everywhere."""
        return 3 if self.user else 2 if self.channel else 1 if self.team else 0

    def applies(self, user: str | None, channel: str | None, team: str | None) -> bool:
        return (
            (not self.user or self.user == user)
            and (not self.channel or self.channel == channel)
            and (not self.team or self.team == team)
        )

    def describe(self) -> str:
        if self.user:
            return f"for <@{self.user}>"
        if self.channel:
            return f"in <#{self.channel}>"
        if self.team:
            return f"in team {self.team}"
        return "everywhere"


@dataclass(frozen=True)
class Provenance:
    source: Source = "yaml"
    owner: str = ""  # who wrote or approved it: a chat user id, a name, a dbt owner
    date: str = ""  # ISO date it was written or approved
    version: int = 1
    origin: str = ""  # the file, dbt node or trace it came from


@dataclass(frozen=True)
class Definition:
    kind: Kind
    name: str
    description: str = ""
    synonyms: tuple[str, ...] = ()
    table: str = (
        ""  # entity: its base table; metric, filter: the table or entity it is over; relationship: from
    )
    sql: str = ""  # entity: a SELECT; metric: the aggregate; filter: the condition; relationship: ON
    filter: str = ""  # entity, metric: a condition on `table`
    grain: tuple[str, ...] = ()  # metric: the columns of `table` it is computed per
    numerator: str = ""  # ratio metric: the metrics' names
    denominator: str = ""
    unit: str = ""
    format: str = ""
    to: str = ""  # relationship: the other side
    via: tuple[str, ...] = ()  # relationship: tables on the path
    text: str = ""  # instruction: the rule in words
    values: tuple[tuple[str, str], ...] = ()  # stored value → meaning (dbt accepted_values, OSI)
    scope: Scope = field(default_factory=Scope)
    provenance: Provenance = field(default_factory=Provenance)
    id: int | None = None  # its row in the state database, for what is stored there
    status: Status = "active"

    @property
    def ref(self) -> str:
        return ref_of(self.name)

    @property
    def ratio(self) -> bool:
        return self.kind == "metric" and bool(self.numerator and self.denominator)

    @property
    def named_like_table(self) -> bool:
        """Can a query select from it by its ref (entities, metrics at a grain)?"""
        return self.kind == "entity" or (self.kind == "metric" and bool(self.grain) and not self.ratio)

    @property
    def words(self) -> tuple[str, ...]:
        """What people call it: its name and synonyms."""
        return (self.name, *self.synonyms)

    def credit(self) -> str:
        """'loss ratio (defined by @ana, 3 Nov)' — the line under an answer names it so."""
        who = self.provenance.owner
        by = f"<@{who}>" if re.fullmatch(r"[UW][A-Z0-9]{2,}", who or "") else who
        parts = [f"defined by {by}" if by else "", _short_date(self.provenance.date)]
        if self.provenance.source in ("dbt", "osi"):
            parts.insert(0, f"from {self.provenance.source}")
        said = ", ".join(p for p in parts if p)
        return f"{self.name} ({said})" if said else self.name

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        return {k: v for k, v in data.items() if v not in ("", (), [], None) or k in ("kind", "name")}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Definition:
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in known}
        for key in ("synonyms", "grain", "via"):
            if key in values:
                values[key] = tuple(str(v) for v in values[key] or ())
        if "values" in values:
            values["values"] = tuple((str(k), str(v)) for k, v in values["values"] or ())
        if isinstance(values.get("scope"), dict):
            values["scope"] = Scope(**values["scope"])
        if isinstance(values.get("provenance"), dict):
            values["provenance"] = Provenance(**values["provenance"])
        if values.get("kind") not in KINDS:
            raise ValueError(f"unknown kind of definition: {values.get('kind')!r}")
        return cls(**values)


def _short_date(iso: str) -> str:
    """'2026-11-03' → '3 Nov'."""
    m = re.fullmatch(r"(\d{4})-(\d{2})-(\d{2}).*", iso or "")
    if not m:
        return ""
    months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    return f"{int(m.group(3))} {months[int(m.group(2)) - 1]}"


@dataclass(frozen=True)
class Definitions:
    """The definitions in force for one question: of one database, seen from one scope."""

    items: tuple[Definition, ...] = ()

    def __iter__(self) -> Iterator[Definition]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def __bool__(self) -> bool:
        return bool(self.items)

    def by_ref(self, ref: str) -> Definition | None:
        return next((d for d in self.items if d.ref == ref_of(ref)), None)

    def of_kind(self, *kinds: Kind) -> tuple[Definition, ...]:
        return tuple(d for d in self.items if d.kind in kinds)

    def for_asker(self, user: str | None, channel: str | None, team: str | None) -> Definitions:
        """The active definitions that apply where and to whom; of two with one name, the more
        specific scope wins, then the later version."""
        best: dict[tuple[str, str], Definition] = {}
        for d in self.items:
            if d.status != "active" or not d.scope.applies(user, channel, team):
                continue
            key = (d.kind, d.ref) if d.kind != "instruction" else (d.kind, f"{d.ref}:{d.text}")
            held = best.get(key)
            if held is None or (d.scope.rank, d.provenance.version, d.provenance.date) >= (
                held.scope.rank,
                held.provenance.version,
                held.provenance.date,
            ):
                best[key] = d
        return Definitions(tuple(best.values()))

    def fingerprint(self) -> str:
        """Changes whenever a definition in force changes: part of the answer cache's key."""
        text = json.dumps(sorted(json.dumps(d.to_json(), sort_keys=True, default=str) for d in self.items))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def plus(self, more: Iterable[Definition]) -> Definitions:
        return Definitions((*self.items, *more))


def using_text(using: Iterable[Definition]) -> str:
    """'Using: loss ratio (defined by <@U123>, 3 Nov), agent (from dbt)' — the line under an answer."""
    credits = [d.credit() for d in using]
    return f"Using: {', '.join(credits)}" if credits else ""


def with_provenance(d: Definition, **changes: Any) -> Definition:
    return replace(d, provenance=replace(d.provenance, **changes))
