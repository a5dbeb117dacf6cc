"""Running SQL safely, and what a person is told about the run.

Every path that runs SQL comes through here — the LLM pipeline, keyword mode, and stored SQL run
again (CSV downloads, schedules; core/askbase.py `Askbase.rerun`) — so the guard policy and the
limits are built one way, each run is recorded the same way in the trace (expand → guard →
execute), and one mapping (`outcome_of`) turns every kind of run into the Outcome a person sees.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from core.answer import ErrorKind, Mode, Outcome
from core.data_rules import rules_policy
from core.database import Database
from core.definitions.expand import ExpansionError
from core.definitions.expand import expand as expand_definitions
from core.definitions.model import Definition, Definitions
from core.execute import Limits, QueryError, ResultSet, execute, export_csv
from core.expand import ExpandError, expand
from core.guard import GuardPolicy, Verdict, check
from core.joins import View
from core.settings import EngineSettings
from core.summary import summarize
from core.trace import Trace

UNWRITABLE = "I could not write a query that runs for this question"


def guard_policy(db: Database, settings: EngineSettings) -> GuardPolicy:
    """The database's rules (followed through its views, core/data_rules.py) and the caps."""
    return replace(rules_policy(db), limit=settings.default_limit, value_cap=settings.byte_cap)


def limits_for(db: Database, settings: EngineSettings) -> Limits:
    return Limits(
        row_cap=db.config.row_cap or settings.row_cap,
        byte_cap=settings.byte_cap,
        timeout_s=db.config.statement_timeout_s or settings.statement_timeout_s,
    )


def check_for(db: Database, sql: str, settings: EngineSettings) -> Verdict:
    """The guard's verdict on `sql` for this database (its dialect, deny-lists and LIMIT)."""
    return check(sql, db.catalog.dialect, guard_policy(db, settings))


@dataclass(frozen=True)
class Exported:
    """A result streamed to a CSV file instead of memory."""

    rows: int
    truncated: bool


@dataclass(frozen=True)
class Run:
    """What became of some SQL. Exactly one of the last five says how it ended."""

    sql: str  # the SQL as far as it got: expanded, or guarded and run
    result: ResultSet | None = None  # it ran (possibly with no rows)
    exported: Exported | None = None  # it ran into a CSV file
    error: QueryError | None = None  # the database refused or failed it
    refused: str = ""  # the guard's reason ("writes data (DELETE)")
    unfit: str = ""  # it does not fit the view (unknown column, unparsable)
    expanded: tuple[Definition, ...] = ()  # business definitions it named like tables (core/definitions)


def run_over_view(
    db: Database,
    sql: str,
    view: View | None,
    settings: EngineSettings,
    trace: Trace,
    notify: Callable[[str], None] | None = None,
    definitions: Definitions | None = None,
) -> Run:
    """expand → guard → execute SQL written over base tables, `view` (the join recipe) and the
    business definitions named like tables (each name expanded where used), one trace stage each."""
    named: tuple[Definition, ...] = ()
    with trace.stage("expand") as st:
        try:
            if definitions:
                real = db.catalog.memo("table_names", lambda: {t.name.lower() for t in db.catalog.tables})
                sql, named = expand_definitions(sql, definitions, real, db.catalog.dialect)
            expanded = expand(sql, view, db.catalog.dialect)
            st.outputs = {"sql": expanded}
            if named:
                st.outputs["definitions"] = [d.name for d in named]
        except (ExpandError, ExpansionError) as exc:
            st.outputs = {"error": str(exc)}
            return Run(sql=sql, unfit=str(exc))
    return replace(_guarded(db, expanded, settings, trace, notify), expanded=named)


def run_stored(
    db: Database, sql: str, settings: EngineSettings, trace: Trace, csv_path: Path | None = None
) -> Run:
    """guard → execute SQL written before over the base tables (a stored answer, a schedule).

    The stored SQL is never trusted: the guard checks it again, so a rule added since applies.
    With `csv_path` the rows stream to that file instead of memory.
    """
    return _guarded(db, sql, settings, trace, csv_path=csv_path)


def _guarded(
    db: Database,
    sql: str,
    settings: EngineSettings,
    trace: Trace,
    notify: Callable[[str], None] | None = None,
    csv_path: Path | None = None,
) -> Run:
    if notify is not None:
        notify("guard")
    with trace.stage("guard") as st:
        verdict = check_for(db, sql, settings)
        st.outputs = {"allowed": verdict.allowed, "reason": verdict.reason}
    if not verdict.allowed:
        return Run(sql=sql, refused=verdict.reason)
    if notify is not None:
        notify("execute")
    limits = limits_for(db, settings)
    with trace.stage("execute") as st:
        try:
            if csv_path is not None:
                count, truncated = export_csv(db, verdict.sql, csv_path, limits)
                st.outputs = {"rows": count, "truncated": truncated, "csv": True}
                return Run(sql=verdict.sql, exported=Exported(count, truncated))
            result = execute(db, verdict.sql, limits)
        except QueryError as exc:
            st.outputs = {"error": exc.message, "kind": exc.kind}
            return Run(sql=verdict.sql, error=exc)
        st.outputs = {"rows": result.row_count, "truncated": result.truncated, "db_ms": result.ms}
        if result.masked:
            st.outputs["masked"] = list(result.masked)
    return Run(sql=verdict.sql, result=result)


def outcome_of(
    run: Run,
    *,
    question: str,
    database: str,
    trace: Trace,
    mode: Mode = "llm",
    task: str = "",
    interpretation: str = "",
    stored: bool = False,
) -> Outcome:
    """What a person is told about a run, whichever mode wrote the SQL.

    `task` is what the answer sentence is about (the LLM's main task); `interpretation` is the
    reading keyword mode took, kept on errors too so the person sees what was tried; `stored`:
    the SQL was written and allowed before, so a refusal means a rule changed since.
    """

    def failed(kind: ErrorKind, message: str) -> Outcome:
        return Outcome.failed(
            question,
            kind,
            message,
            database=database,
            mode=mode,
            sql=run.sql,
            interpretation=interpretation,
            trace=trace,
        )

    if run.result is not None:
        result = run.result
        return Outcome(
            status="answer",
            question=question,
            database=database,
            mode=mode,
            answer=summarize(task, result.columns, result.rows, result.truncated),
            sql=run.sql,
            columns=result.columns,
            rows=result.rows,
            truncated=result.truncated,
            interpretation=interpretation,
            trace=trace,
        )
    if run.exported is not None:
        return Outcome(
            status="answer",
            question=question,
            database=database,
            mode=mode,
            sql=run.sql,
            truncated=run.exported.truncated,
            exported_rows=run.exported.rows,
            interpretation=interpretation,
            trace=trace,
        )
    if run.error is not None:
        return failed(run.error.kind, query_error_message(run.error))
    if run.refused:
        if stored:
            return failed("guard", f"The query is not allowed any more: it {run.refused}.")
        return failed("guard", f"The query was refused because it {run.refused}.")
    return failed("sql", f"{UNWRITABLE} ({run.unfit}). Try rephrasing it more specifically.")


def query_error_message(error: QueryError) -> str:
    """What a person is told when the database fails a query."""
    if error.kind == "timeout":
        return (
            "The query took too long and was stopped. Try a narrower question (a shorter period, one group)."
        )
    if error.kind == "connection":
        return (
            "The database could not be reached. Try again in a minute; if it persists, tell the bot's admins."
        )
    if error.kind == "permission":
        return "The database refused access to some of the data this question needs."
    return f"The database rejected the query: {error.message}"
