"""The outcome of a question: an answer, a clarifying question, or an error a person can act on."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import uuid
from dataclasses import dataclass, field
from typing import Any, Literal

from core.definitions.model import Definition
from core.trace import Trace

Status = Literal["answer", "clarify", "error"]
Mode = Literal["llm", "keyword"]

# Why an outcome is an error, for logs, the audit log and adapters that word it their own way.
# Closed: a new kind is added here first, so every place that branches on kinds can be found.
ErrorKind = Literal[
    # before anything runs
    "question",  # empty or too long
    "access",  # the asker may not query this database (core/access.py)
    "database",  # could not be opened
    "unknown_database",  # not configured (any more): a channel or a schedule still names it
    "dialect",  # no guard for this SQL dialect
    # writing the SQL
    "llm",  # the LLM failed and keyword mode was not allowed to answer
    "llm_refused",  # the LLM declined the question
    "link",  # no table could be linked to the question
    "keyword_abstain",  # keyword mode would have to guess, so it declined
    "keyword_internal",  # keyword mode failed on the question (a bug, logged)
    "clarify_none",  # after 👎: nothing left to ask
    # running it (core/run.py)
    "sql",  # the SQL never fitted the view it was written over
    "guard",  # the guard refused the SQL
    # the database failed the query (core.execute.QueryError.kind)
    "timeout",
    "syntax",
    "readonly",
    "connection",
    "permission",
    "too_large",  # a value larger than a result may hold (core/bounds.py)
    "other",
    # the adapters
    "internal",  # an unexpected failure, logged with the trace id
    "busy",  # no worker free to answer
    "condition",  # a schedule's post condition could not be evaluated
    "slack",  # Slack refused to post the result
]


@dataclass(frozen=True)
class Option:
    label: str  # plain words shown on the button
    value: str  # what choosing it means to the engine (a reading, a column, a value)


@dataclass(frozen=True)
class Clarification:
    question: str
    options: tuple[Option, ...]
    kind: str = "AmbQuestion"  # AmbQuestion | AmbTableColumn | AmbOutput | AmbValue
    id: str = field(default_factory=lambda: uuid.uuid4().hex[:12])


@dataclass(frozen=True)
class Reuse:
    """Where an answer came from when no SQL was written for it (core/trusted.py): a verified
    query's SQL (with the new question's values), and/or the cached result of the same question."""

    verified_id: int | None = None
    verified_by: str = ""  # the adapter's user id of the analyst
    verified_at: dt.datetime | None = None
    verifier_name: str = ""  # their display name where the chat stored one (Teams)
    match: str = ""  # how the question matched the verified one, for Details
    cached_at: dt.datetime | None = None  # a repeated question: when the result was computed
    cached_from: str = ""  # the trace id of the answer it repeats

    @property
    def verified(self) -> bool:
        return self.verified_id is not None

    @property
    def cached(self) -> bool:
        return self.cached_at is not None

    def audit_text(self) -> str:
        """The audit log's `reused_from`: 'verified #3', 'cache 1a2b3c4d5e6f', or both."""
        parts = []
        if self.cached:
            parts.append(f"cache {self.cached_from}".strip())
        if self.verified:
            parts.append(f"verified #{self.verified_id}")
        return " of ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "verified_id": self.verified_id,
            "verified_by": self.verified_by or None,
            "verified_at": self.verified_at.isoformat() if self.verified_at else None,
            "verifier_name": self.verifier_name or None,
            "match": self.match or None,
            "cached_at": self.cached_at.isoformat() if self.cached_at else None,
            "cached_from": self.cached_from or None,
        }


@dataclass(frozen=True)
class Outcome:
    """What became of a question (or of stored SQL run again); built once, never changed —
    a step that says more makes a new one with `dataclasses.replace`."""

    status: Status
    question: str
    database: str = ""
    mode: Mode = "llm"
    answer: str = ""  # one sentence
    sql: str = ""
    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    truncated: bool = False
    interpretation: str = ""  # keyword mode: the reading, in plain words
    clarification: Clarification | None = None
    error: str = ""  # for a person: what failed and what to try
    error_kind: ErrorKind | None = None  # set exactly when status is "error"
    trace: Trace = field(default_factory=Trace)
    exported_rows: int | None = None  # rows streamed to a CSV file (Askbase.rerun with csv_path)
    reuse: Reuse | None = None  # answered from a verified query or the answer cache, not by new SQL
    # what the asker is told about their question beside the outcome, whatever its status (e.g. a
    # secret removed from it before it was stored or sent anywhere: core/redact.py SECRET_NOTE)
    notes: tuple[str, ...] = ()
    # the business definitions the answer used (core/definitions/used.py), said under it
    using: tuple[Definition, ...] = ()
    # readings the answer relied on that no definition fixed, in words ("'existing' read as
    # status = 'Operational'"), said under it with a way to correct them (core/definitions)
    assumptions: tuple[str, ...] = ()

    @classmethod
    def failed(
        cls,
        question: str,
        kind: ErrorKind,
        error: str,
        *,
        database: str = "",
        mode: Mode = "llm",
        sql: str = "",
        interpretation: str = "",
        trace: Trace | None = None,
    ) -> Outcome:
        """An error: what failed, in a person's words, and its kind — always set together."""
        return cls(
            status="error",
            question=question,
            database=database,
            mode=mode,
            sql=sql,
            interpretation=interpretation,
            error=error,
            error_kind=kind,
            trace=trace if trace is not None else Trace(),
        )

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def to_json(self, with_trace: bool = True) -> dict[str, Any]:
        """The `--json` contract of DESIGN.md."""
        data: dict[str, Any] = {
            "status": self.status,
            "mode": self.mode,
            "question": self.question,
            "database": self.database,
            "answer": self.answer,
            "sql": self.sql,
            "columns": list(self.columns),
            "rows": [[json_value(v) for v in row] for row in self.rows],
            "row_count": self.row_count,
            "truncated": self.truncated,
            "interpretation": self.interpretation,
            "clarification": None,
            "error": self.error or None,
            "reuse": self.reuse.to_json() if self.reuse else None,
            "notes": list(self.notes),
            "using": [{"name": d.name, "kind": d.kind, "credit": d.credit()} for d in self.using],
            "assumptions": list(self.assumptions),
        }
        if self.clarification:
            c = self.clarification
            data["clarification"] = {
                "id": c.id,
                "kind": c.kind,
                "question": c.question,
                "options": [{"label": o.label, "value": o.value} for o in c.options],
            }
        if with_trace:
            data["trace"] = self.trace.to_dict()
        return data


def json_value(value: Any) -> Any:
    """Database values as JSON: dates as ISO text, decimals as numbers, bytes as base64."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() and abs(value) < 2**53 else float(value)
    if isinstance(value, dt.datetime | dt.date | dt.time):
        return value.isoformat()
    if isinstance(value, dt.timedelta):
        return value.total_seconds()
    if isinstance(value, bytes | bytearray | memoryview):
        return base64.b64encode(bytes(value)).decode()
    return str(value)
