"""The replies keyword mode gives besides an answer: a decline that says why, and a question back
with the readings to choose from. Shared by the grammar's path (answer.py) and the first
reader's (first_reader.py), so both word them alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from core.answer import Clarification, ErrorKind, Option, Outcome
from core.database import Database
from core.keyword.explain import sense_label
from core.keyword.match import Sense
from core.keyword.plan import Ambiguity
from core.request import Request
from core.trace import Trace


def clarify(
    db: Database, request: Request, trace: Trace, plan: Ambiguity, interpretation: str = ""
) -> Outcome:
    what = "value" if plan.kind == "AmbValue" else "column"
    clarification = Clarification(
        question=f"Which {what} does '{plan.words}' mean?",
        options=tuple(Option(label, r.encode()) for label, r in zip(plan.labels, plan.readings, strict=True)),
        kind=plan.kind,
    )
    return Outcome(
        status="clarify",
        question=request.question,
        database=db.name,
        mode="keyword",
        clarification=clarification,
        interpretation=interpretation or f"'{plan.words}' can be read in {len(plan.readings)} ways",
        trace=trace,
    )


def asked(
    db: Database, request: Request, trace: Trace, words: str, options: Sequence[Sense], reading: str
) -> Outcome:
    """Ask which of a phrase's close readings was meant (the chosen one first)."""
    kind: Literal["AmbValue", "AmbTableColumn"] = (
        "AmbValue" if options[0].kind == "value" else "AmbTableColumn"
    )
    ambiguity = Ambiguity(
        words=words,
        kind=kind,
        readings=tuple(s.reading(words) for s in options),
        labels=tuple(sense_label(s) for s in options),
    )
    return clarify(db, request, trace, ambiguity, f"{reading} ('{words}' can be read in {len(options)} ways)")


def failed(
    db: Database,
    request: Request,
    trace: Trace,
    kind: ErrorKind,
    message: str,
    *,
    interpretation: str = "",
    sql: str = "",
) -> Outcome:
    return Outcome.failed(
        request.question,
        kind,
        message,
        database=db.name,
        mode="keyword",
        interpretation=interpretation,
        sql=sql,
        trace=trace,
    )
