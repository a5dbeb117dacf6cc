"""Asking which of two readings the person meant, when the writer's candidates disagree.

In LLM mode a clarifying question comes from the data, not from the prompt inviting one: the
writer's two candidates returned different rows and the judge (core/judge.py) says both are
reasonable readings of the question's words. The person gets the two readings as buttons, each
with what it returns when that is short ("customers in Lyon → 12"); each option's value carries
the query of that reading, so choosing it runs that query (through the guard again, like any
stored SQL) and no new query is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from core.answer import Clarification, Option
from core.clarify.sra import MAX_LABEL, MAX_QUESTION, clean_label, looks_like_sql
from core.clarify.transcript import Transcript, options_key
from core.execute import ResultSet
from core.summary import format_value

PREFIX = "sql:"
DEFAULT_QUESTION = "Your question can be read two ways. Which do you mean?"


@dataclass(frozen=True)
class Reading:
    label: str  # plain words from the judge
    sql: str  # the query of this reading, as guarded and run
    result: ResultSet


def encode(sql: str) -> str:
    return PREFIX + sql


def chosen_sql(transcript: Transcript) -> str | None:
    """The query of the reading the person just chose; None unless their last answer chose one
    (a later answer, or a rejection of that query, means a new query is written instead)."""
    asked = [e for e in transcript.exchanges if e.kind != "feedback"]
    if not asked or not asked[-1].value.startswith(PREFIX):
        return None
    sql = asked[-1].value[len(PREFIX) :].strip()
    if not sql or sql in transcript.rejected_sql or transcript.exchanges[-1] is not asked[-1]:
        return None
    return sql


def two_readings(question: str, readings: Sequence[Reading]) -> Clarification | None:
    """The clarifying question, or None when the readings cannot be shown as buttons (a label
    with SQL in it, two labels alike)."""
    options = []
    for r in readings:
        label = clean_label(r.label)
        if not label or looks_like_sql(label):
            return None
        shown = _with_result(label, r.result)
        options.append(Option(label=shown, value=encode(r.sql)))
    if len({o.label.lower() for o in options}) < len(options):
        return None
    text = " ".join(question.split()) if question and not looks_like_sql(question) else DEFAULT_QUESTION
    return Clarification(question=text[:MAX_QUESTION], options=tuple(options), kind="AmbQuestion")


def already_asked(clarification: Clarification, transcript: Transcript) -> bool:
    options = clarification.options
    return transcript.already_asked(
        clarification.question, options_key(o.value for o in options), [o.label for o in options]
    )


def _with_result(label: str, result: ResultSet) -> str:
    """The label with what the reading returns, when that fits on a button: one value, or a count of rows."""
    if len(result.rows) == 1 and len(result.columns) == 1:
        tail = f" → {format_value(result.rows[0][0])}"
    else:
        tail = f" → {len(result.rows):,}{'+' if result.truncated else ''} rows"
    return label + tail if len(label) + len(tail) <= MAX_LABEL else label
