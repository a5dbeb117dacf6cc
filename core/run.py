"""Running SQL safely: the guard with the database's policy, then the read-only executor.

Every path that runs SQL comes through here — the LLM pipeline, keyword mode, scheduled runs and
CSV downloads — so the guard policy and the limits are built one way, and SQL written over a view
goes through the same expand → guard → execute stages, recorded the same way in every trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.database import Database
from core.execute import Limits, QueryError, ResultSet, execute
from core.expand import ExpandError, expand
from core.guard import GuardPolicy, Verdict, check
from core.joins import View
from core.settings import EngineSettings
from core.trace import Trace


def guard_policy(db: Database, settings: EngineSettings) -> GuardPolicy:
    catalog = db.catalog
    return GuardPolicy(
        limit=settings.default_limit,
        deny_tables=frozenset(t.lower() for t in db.config.deny_tables),
        deny_columns=frozenset(c.lower() for c in db.config.deny_columns),
        # the columns in order: the guard resolves column lists (`AS x(a, b)`) with them
        table_columns=catalog.memo(
            "guard_table_columns",
            lambda: {t.name.lower(): tuple(c.name.lower() for c in t.columns) for t in catalog.tables},
        ),
    )


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
class Run:
    """What became of SQL written over a view. Exactly one of the last four says how it ended."""

    sql: str  # the SQL as far as it got: expanded, or guarded and run
    result: ResultSet | None = None  # it ran (possibly with no rows)
    error: QueryError | None = None  # the database refused or failed it
    refused: str = ""  # the guard's reason ("writes data (DELETE)")
    unfit: str = ""  # it does not fit the view (unknown column, unparsable)


def run_over_view(
    db: Database,
    sql: str,
    view: View,
    settings: EngineSettings,
    trace: Trace,
    notify: Callable[[str], None] | None = None,
) -> Run:
    """expand → guard → execute SQL written over `view`, one trace stage each."""
    dialect = db.catalog.dialect
    with trace.stage("expand") as st:
        try:
            expanded = expand(sql, view, dialect)
            st.outputs = {"sql": expanded}
        except ExpandError as exc:
            st.outputs = {"error": str(exc)}
            return Run(sql=sql, unfit=str(exc))
    with trace.stage("guard") as st:
        verdict = check(expanded, dialect, guard_policy(db, settings))
        st.outputs = {"allowed": verdict.allowed, "reason": verdict.reason}
    if not verdict.allowed:
        return Run(sql=expanded, refused=verdict.reason)
    if notify is not None:
        notify("execute")
    with trace.stage("execute") as st:
        try:
            result = execute(db, verdict.sql, limits_for(db, settings))
        except QueryError as exc:
            st.outputs = {"error": exc.message, "kind": exc.kind}
            return Run(sql=verdict.sql, error=exc)
        st.outputs = {"rows": result.row_count, "truncated": result.truncated, "db_ms": result.ms}
        if result.masked:
            st.outputs["masked"] = list(result.masked)
    return Run(sql=verdict.sql, result=result)


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
