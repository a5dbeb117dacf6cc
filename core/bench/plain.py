"""The plain-prompt baseline: what people compare Askbase with, run by the benchmark in the same run.

The baseline is the prompt a competent engineer writes without Askbase (prompts/plain.md): the
whole schema as CREATE TABLE statements with the primary and foreign keys the database declares
and 3 example rows per table, the dialect and today's date, one call, and one retry that shows the
model the database's error. Everything around the prompt is Askbase's own, so the comparison
measures the prompt and nothing else: the same LLM client (model, timeouts, retries, token
accounting on the trace), the same guard and read-only execution with the same limits, and the
same deny rules and masking (denied tables and columns are neither described nor sampled).
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, field
from typing import Any, Literal

from core import prompts
from core.database import Database
from core.execute import QueryError, ResultSet, execute
from core.generate import DIALECT_NAMES
from core.llm import LLM, Completion, LLMError
from core.replies import RefusalError, ReplyError, extract_sql
from core.run import check_for, limits_for
from core.schema_text import PLAIN, schema_text
from core.settings import EngineSettings
from core.trace import Trace

log = logging.getLogger(__name__)

TASK = "plain"  # the X-Askbase-Task of its calls; its model is llm.models["plain"] or the default

# The retry is the conversation continued, as a person would do it in a chat window.
RETRY_MESSAGE = (
    "Running that query failed with this error:\n{error}\n\n"
    "Fix the query. Give the corrected query in a single ```sql code block."
)


@dataclass(frozen=True)
class PlainAnswer:
    """What the baseline made of one question; `trace` holds its LLM calls and tokens."""

    status: Literal["answer", "error"]
    sql: str = ""
    columns: tuple[str, ...] = ()
    rows: list[tuple[Any, ...]] = field(default_factory=list)
    error: str = ""
    retried: bool = False
    trace: Trace = field(default_factory=Trace)


def messages_for(
    db: Database, question: str, schema: str, today: dt.date | None = None
) -> list[dict[str, str]]:
    dialect = db.catalog.dialect
    return prompts.render(
        "plain",
        dialect=DIALECT_NAMES.get(dialect, dialect),
        schema=schema,
        today=(today or dt.date.today()).isoformat(),
        question=question,
    )


# ---------------------------------------------------------------------------------------------
# one call, one retry


@dataclass(frozen=True)
class _Attempt:
    reply: str  # what the model said (the retry continues the conversation after it)
    sql: str = ""
    result: ResultSet | None = None
    problem: str = ""  # why it gave no result: the text the retry shows the model
    final: bool = False  # a refusal or a dropped connection: retrying cannot help


def answer_plain(
    db: Database,
    question: str,
    settings: EngineSettings,
    llm: LLM,
    *,
    schema: str | None = None,
    today: dt.date | None = None,
) -> PlainAnswer:
    """Ask once; if the query does not run, ask once more with the error; never more.

    `schema`: the schema text when the caller already has it (the benchmark builds it once per
    database). An LLM that fails or refuses ends the question as an error, as in LLM mode with the
    keyword fallback off.
    """
    trace = Trace(question=question, database=db.name)
    messages = messages_for(
        db, question, schema if schema is not None else schema_text(db, settings, PLAIN), today
    )
    retried = False
    try:
        attempt = _attempt(db, llm, TASK, messages, settings, trace)
        if attempt.result is None and not attempt.final:
            retried = True
            messages = [
                *messages,
                {"role": "assistant", "content": attempt.reply},
                {"role": "user", "content": RETRY_MESSAGE.format(error=attempt.problem)},
            ]
            attempt = _attempt(db, llm, f"{TASK}:retry", messages, settings, trace)
    except LLMError as exc:  # unreachable or unusable: an error, its calls still on the trace
        return PlainAnswer(status="error", error=str(exc), retried=retried, trace=trace)
    if attempt.result is None:
        return PlainAnswer(
            status="error", sql=attempt.sql, error=attempt.problem, retried=retried, trace=trace
        )
    result = attempt.result
    return PlainAnswer(
        status="answer",
        sql=attempt.sql,
        columns=result.columns,
        rows=result.rows,
        retried=retried,
        trace=trace,
    )


def _attempt(
    db: Database,
    llm: LLM,
    task: str,
    messages: list[dict[str, str]],
    settings: EngineSettings,
    trace: Trace,
) -> _Attempt:
    with trace.stage("retry" if task.endswith(":retry") else "generate") as st:
        completion: Completion = llm.chat(task, messages)
        if completion.refusal:
            return _Attempt(reply="", problem=f"The model declined: {completion.refusal}", final=True)
        try:
            sql = extract_sql(completion.text)
        except RefusalError as exc:
            return _Attempt(reply=completion.text, problem=f"The model declined: {exc}", final=True)
        except ReplyError as exc:
            st.outputs = {"error": str(exc)}
            return _Attempt(reply=completion.text, problem=f"The reply had no SQL query: {exc}.")
        st.outputs = {"sql": sql}
    with trace.stage("guard") as st:
        verdict = check_for(db, sql, settings)
        st.outputs = {"allowed": verdict.allowed, "reason": verdict.reason}
    if not verdict.allowed:
        return _Attempt(
            reply=completion.text,
            sql=sql,
            problem=f"The query was refused because it {verdict.reason}. Only one read-only query may run.",
        )
    with trace.stage("execute") as st:
        try:
            result = execute(db, verdict.sql, limits_for(db, settings))
        except QueryError as exc:
            st.outputs = {"error": exc.message, "kind": exc.kind}
            return _Attempt(
                reply=completion.text, sql=verdict.sql, problem=exc.message, final=exc.kind == "connection"
            )
        st.outputs = {"rows": result.row_count, "truncated": result.truncated}
    return _Attempt(reply=completion.text, sql=verdict.sql, result=result)
