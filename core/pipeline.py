"""The question pipeline: understand → retrieve → link → view → generate → expand → guard → execute
→ revise (on error or empty result) → Outcome.

Each stage is a plain function in its own module; this module only wires them, records the trace,
and turns failures into outcomes a person can act on. LLM calls on the happy path: understand and
generate (plus link on large or ambiguous schemas), so at most 3.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from core.answer import Outcome
from core.catalog import Catalog
from core.clarify.transcript import Exchange, Transcript, describe, with_answers
from core.conversation import Turn
from core.database import Database
from core.db_errors import public_error
from core.examples import Example, most_similar
from core.execute import Limits, QueryError, execute
from core.generate import Context, generate, revise
from core.guard import UnknownDialectError, normalize_dialect
from core.joins import View
from core.link import LinkError, Linking, link
from core.llm import LLM, LLMError, LLMRefused
from core.retrieve import retrieve
from core.run import Run, query_error_message, run_over_view
from core.settings import EngineSettings
from core.summary import summarize
from core.trace import Trace
from core.understand import understand
from core.view import build_view

log = logging.getLogger(__name__)

StageCallback = Callable[[str], None]
MAX_QUESTION_CHARS = 2000
MAX_VIEW_COLUMNS = 120  # beyond this the view keeps only the columns the question matched


@dataclass(frozen=True)
class Request:
    """A question and everything around it that is not the database."""

    question: str
    history: Sequence[Turn] = ()
    examples: Sequence[Example] = ()
    today: dt.date | None = None
    on_stage: StageCallback | None = None  # progress for chat adapters ("writing SQL…")
    # Option values of clarifications the person already answered (core/keyword/readings.py):
    # keyword mode pins those words to the chosen reading and does not ask about them again.
    choices: Sequence[str] = ()
    # The clarification transcript (core/clarify): questions asked back with the answers, and
    # SQL the person rejected (👎). The SQL writer sees both; no question is asked twice.
    clarifications: Sequence[Exchange] = ()
    rejected_sql: Sequence[str] = ()
    # Ask about near (not only tied) readings too: after 👎 in keyword mode (core/clarify).
    ask_alternatives: bool = False


def _pruned_columns(catalog: Catalog, linking: Linking) -> dict[str, tuple[str, ...]] | None:
    """All columns of the linked tables when they fit in a prompt; only the matched ones (plus keys)
    for very wide tables, as CHESS prunes its schema."""
    width = sum(len(t.columns) for t in (catalog.table(n) for n in linking.tables) if t is not None)
    return None if width <= MAX_VIEW_COLUMNS else dict(linking.columns)


def sample_rows(db: Database, view: View, n: int) -> list[tuple]:
    """A few rows of the view for the prompt; a slow or failing sample never stops the question."""
    if n <= 0:
        return []
    dialect = db.catalog.dialect
    try:
        return execute(db, view.select().limit(n).sql(dialect=dialect), Limits(row_cap=n, timeout_s=5)).rows
    except QueryError as exc:
        log.info("no sample rows for the view: %s", exc.message)
        return []


def answer_with_llm(
    db: Database, llm: LLM, request: Request, settings: EngineSettings, trace: Trace
) -> Outcome:
    """Run the LLM pipeline. Raises LLMError when the LLM fails, so the caller can fall back."""
    catalog = db.catalog
    dialect = catalog.dialect
    notify = request.on_stage or (lambda _stage: None)

    notify("understand")
    with trace.stage("understand") as st:
        asked = with_answers(request.question, request.clarifications)
        understanding = understand(asked, request.history, llm, catalog.description)
        st.outputs = {
            "question": understanding.question,
            "main_task": list(understanding.main_task),
            "sub_tasks": list(understanding.sub_tasks),
            "objects": list(understanding.keywords.objects),
            "values": list(understanding.keywords.values),
        }
    notify("retrieve")
    with trace.stage("retrieve") as st:
        retrieval = retrieve(understanding.question, understanding.keywords, db)
        if request.choices:  # the person's clarification choices are the only readings of their words
            from core.clarify.candidates import pin
            from core.keyword.readings import decode_all

            retrieval = pin(retrieval, decode_all(request.choices))
        st.outputs = retrieval.summary()
    with trace.stage("link") as st:
        try:
            linking = link(
                understanding, retrieval, catalog, llm, llm_min_tables=settings.link_llm_min_tables
            )
        except LinkError as exc:
            st.outputs = {"error": str(exc)}
            return Outcome(
                status="error",
                question=request.question,
                database=db.name,
                error=f"I could not tell which data the question is about: {exc}. "
                "Try naming what you want counted or listed, e.g. 'clients' or 'payments'.",
                error_kind="link",
                trace=trace,
            )
        st.outputs = {
            "tables": list(linking.tables),
            "reasons": linking.reasons,
            "used_llm": linking.used_llm,
        }
    with trace.stage("view") as st:
        view = build_view(db, linking.tables, _pruned_columns(catalog, linking))
        samples = sample_rows(db, view, settings.sample_rows)
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
    if settings.clarify != "off":
        from core.clarify.policy import before_generating

        clarification = before_generating(
            request,
            settings,
            llm,
            db=db,
            understanding=understanding,
            retrieval=retrieval,
            linking=linking,
            view=view,
            samples=samples,
            trace=trace,
        )
        if clarification is not None:
            return Outcome(
                status="clarify",
                question=request.question,
                database=db.name,
                mode="llm",
                clarification=clarification,
                trace=trace,
            )
    ctx = Context(
        view=view,
        samples=samples,
        retrieval=retrieval,
        examples=most_similar(understanding.question, request.examples, settings.few_shot_examples),
        history=request.history,
        dialect=dialect,
        today=request.today,
        clarifications=describe(request.clarifications, request.rejected_sql),
    )
    notify("generate")
    with trace.stage("generate") as st:
        candidate = generate(understanding, ctx, llm)
        st.outputs = {"sql": candidate.sql}

    for round_no in range(settings.max_revisions + 1):
        run = run_over_view(db, candidate.sql, view, settings, trace, notify)
        problem = _problem(run, settings.revise_on_empty)
        if not problem or round_no == settings.max_revisions:
            break
        if run.error is not None and run.error.kind in ("connection", "timeout", "permission"):
            break  # rewriting the SQL will not fix these
        notify("revise")
        with trace.stage("revise") as st:
            revised = revise(understanding, ctx, candidate, problem, llm)
            st.outputs = {"round": round_no + 1, "problem": problem, "sql": revised.sql}
        if run.result is not None and revised.sql.strip() == candidate.sql.strip():
            break  # the model holds that the empty result is the answer
        candidate = revised

    outcome = Outcome(status="answer", question=request.question, database=db.name, mode="llm", trace=trace)
    outcome.sql = run.sql
    if run.result is None:
        outcome.status = "error"
        if run.error is not None:
            outcome.error_kind = run.error.kind
            outcome.error = query_error_message(run.error)
        else:
            outcome.error_kind = "sql"
            outcome.error = (
                "I could not write a query that runs for this question. Try rephrasing it more specifically."
            )
        return outcome
    result = run.result
    outcome.columns, outcome.rows, outcome.truncated = result.columns, result.rows, result.truncated
    outcome.answer = summarize(
        "; ".join(understanding.main_task), result.columns, result.rows, result.truncated
    )
    return outcome


def _problem(run: Run, revise_vacuous: bool) -> str:
    """What the reviser is told about a run; empty when the run is the answer."""
    if run.unfit:
        return f"The query does not fit the table: {run.unfit}"
    if run.refused:
        return f"The query was refused because it {run.refused}. Only one read-only SELECT is allowed."
    if run.error is not None:
        return f"Running it failed with this error: {run.error.message}"
    if run.result is not None and run.result.vacuous and revise_vacuous:
        got = "no rows" if run.result.empty else "only zero or NULL"
        return (
            f"It ran but returned {got}. Check the filters against the stored values and the join "
            "semantics; if that is truly the right answer, return the same query unchanged."
        )
    return ""


def answer(db: Database, request: Request, settings: EngineSettings, llm: LLM | None) -> Outcome:
    """Answer with the LLM; without one, or when it fails (and `fallback_to_keyword` is on), in
    keyword mode (core/keyword), labelled so; the failed LLM attempt stays in the trace."""
    trace = Trace(question=request.question, database=db.name)

    def failed(kind: str, message: str) -> Outcome:
        return Outcome(
            status="error",
            question=request.question,
            database=db.name,
            error=message,
            error_kind=kind,
            trace=trace,
        )

    if not request.question.strip():
        return failed("question", "Ask a question about the data, for example 'How many clients are there?'")
    if len(request.question) > MAX_QUESTION_CHARS:
        return failed(
            "question",
            f"The question is {len(request.question):,} characters long; keep it under {MAX_QUESTION_CHARS:,}.",
        )
    try:
        db.catalog  # noqa: B018 — opens the database; a wrong URL or a down server surfaces here
    except (sa.exc.SQLAlchemyError, OSError, ValueError) as exc:
        log.warning("database %s could not be opened: %s", db.name, exc)
        return failed("database", f"The database '{db.name}' could not be opened: {public_error(exc)}")
    try:
        normalize_dialect(db.catalog.dialect)
    except UnknownDialectError:
        return failed(
            "dialect",
            f"Askbase cannot check SQL for the '{db.catalog.dialect}' dialect yet, so it runs no query on "
            f"'{db.name}'. Supported: SQLite, PostgreSQL, MySQL/MariaDB.",
        )
    from core.clarify.policy import keyword_answer
    from core.keyword import answer_keyword  # keyword mode builds on this module's helpers

    if request.clarifications or request.rejected_sql:
        with trace.stage("clarified") as st:  # read back when this answer gets a 👎 (core/clarify)
            st.outputs = {"transcript": Transcript.of(request.clarifications, request.rejected_sql).to_json()}

    if llm is None:
        outcome = keyword_answer(db, request, settings, trace, answer_keyword)
        if outcome.error_kind == "keyword_abstain":
            outcome.error += (
                " With an LLM configured (set OPENAI_API_KEY, and OPENAI_BASE_URL for Azure, vLLM or "
                "Ollama) Askbase can answer free-form questions like this one."
            )
        return outcome
    try:
        return answer_with_llm(db, llm, request, settings, trace)
    except LLMRefused as exc:
        return failed("llm_refused", str(exc))
    except LLMError as exc:
        if not settings.fallback_to_keyword:
            return failed("llm", str(exc))
        log.warning("LLM failed (%s); answering in keyword mode", exc)
        with trace.stage("fallback") as st:
            st.outputs = {"reason": str(exc), "mode": "keyword"}
        outcome = keyword_answer(db, request, settings, trace, answer_keyword)
        why = f"The LLM failed ({exc}), so this was answered in keyword mode."
        if outcome.status == "error":
            outcome.error = f"{why} {outcome.error}"
        else:
            outcome.interpretation = f"{why} {outcome.interpretation}".strip()
        return outcome
