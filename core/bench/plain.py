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
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from sqlglot import exp

from core import prompts
from core.access import DataRules
from core.catalog import Catalog, Table
from core.database import Database
from core.execute import Limits, QueryError, ResultSet, execute
from core.generate import DIALECT_NAMES
from core.joins.identifiers import identifier, table_expr
from core.llm import LLM, Completion, LLMError
from core.replies import RefusalError, ReplyError, extract_sql
from core.run import check_for, limits_for
from core.settings import EngineSettings
from core.trace import Trace

log = logging.getLogger(__name__)

SAMPLE_ROWS = 3
SAMPLE_CELL_CHARS = 80  # example rows show the shape of values, not whole documents
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


# ---------------------------------------------------------------------------------------------
# the schema as the prompt shows it


def schema_text(db: Database, settings: EngineSettings, sample_rows: int = SAMPLE_ROWS) -> str:
    """Every table the bot may show: CREATE TABLE with declared keys, then a few example rows."""
    catalog = db.catalog
    rules = DataRules.of(db.config)
    shown = [t for t in catalog.tables if not rules.table_denied(t.name, t.schema)]
    parts = []
    for table in shown:
        columns = [c.name for c in table.columns if not rules.column_denied(table.name, c.name, table.schema)]
        if not columns:
            continue
        ddl = create_table(catalog, table, columns, {t.name.lower() for t in shown})
        rows = _sample(db, table, columns, settings, sample_rows)
        parts.append(ddl + ("\n" + sample_comment(table.name, columns, rows) if rows else ""))
    return "\n\n".join(parts)


def create_table(catalog: Catalog, table: Table, columns: Sequence[str], shown: set[str]) -> str:
    """CREATE TABLE as the database declares it: types, NOT NULL, primary key, foreign keys.

    Only foreign keys the database declares: relationships Askbase infers or reads from its
    catalog file are Askbase's knowledge, which a plain prompt does not have.
    """
    dialect = catalog.dialect
    keep = {c.lower() for c in columns}

    def name(text: str) -> str:
        return identifier(text, dialect).sql(dialect=dialect)

    lines = []
    for c in table.columns:
        if c.name.lower() in keep:
            lines.append(f"  {name(c.name)} {c.type or 'TEXT'}{'' if c.nullable else ' NOT NULL'}")
    if table.primary_key and all(k.lower() in keep for k in table.primary_key):
        lines.append(f"  PRIMARY KEY ({', '.join(name(k) for k in table.primary_key)})")
    for r in catalog.relationships:
        if (
            r.origin == "declared"
            and r.table.lower() == table.name.lower()
            and r.ref_table.lower() in shown
            and all(c.lower() in keep for c in r.columns)
        ):
            lines.append(
                f"  FOREIGN KEY ({', '.join(name(c) for c in r.columns)}) REFERENCES "
                f"{name(r.ref_table)} ({', '.join(name(c) for c in r.ref_columns)})"
            )
    head = table_expr(table.name, table.schema, table.name, dialect).sql(dialect=dialect)
    return f"CREATE TABLE {head} (\n" + ",\n".join(lines) + "\n);"


def sample_comment(table: str, columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    lines = [f"/*\n{len(rows)} example rows from table {table}:", " | ".join(columns)]
    lines += [" | ".join(_cell(v) for v in row) for row in rows]
    return "\n".join(lines) + "\n*/"


def _cell(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bytes | bytearray | memoryview):
        return "<binary>"
    text = " ".join(str(value).split())
    return text if len(text) <= SAMPLE_CELL_CHARS else text[: SAMPLE_CELL_CHARS - 3] + "..."


def _sample(
    db: Database, table: Table, columns: Sequence[str], settings: EngineSettings, n: int
) -> list[tuple[Any, ...]]:
    """The first `n` rows, through the guard and the read-only executor (so masking applies)."""
    if n <= 0:
        return []
    dialect = db.catalog.dialect
    select = exp.select(*(exp.Column(this=identifier(c, dialect)) for c in columns)).from_(
        table_expr(table.name, table.schema, table.name, dialect)
    )
    verdict = check_for(db, select.limit(n).sql(dialect=dialect), settings)
    if not verdict.allowed:
        log.info("no example rows for %s: %s", table.name, verdict.reason)
        return []
    try:
        return execute(db, verdict.sql, Limits(row_cap=n, timeout_s=5)).rows
    except QueryError as exc:
        log.info("no example rows for %s: %s", table.name, exc.message)
        return []


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
    messages = messages_for(db, question, schema if schema is not None else schema_text(db, settings), today)
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
