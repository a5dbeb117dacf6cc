"""The question pipeline, and the only place that orchestrates one: it checks the question, picks
the mode, runs it, and asks back (core/clarify/policy.py) as one of its steps.

- LLM mode: understand → retrieve → link → view → [ask back] → generate → expand → guard →
  execute → revise (on error or empty result) → Outcome. LLM calls on the happy path: understand
  and generate (plus link on large or ambiguous schemas), so at most 3.
- Keyword mode (no LLM, or the LLM failed; core/keyword): its tied readings are asked about, or
  settled with the best one when the clarification rules say not to ask.
- After a 👎 (`Request.after_rejection`): retrieve → link → view over what the question and the
  rejected SQL touched, then one Summarize–Review–Ask round (LLM), or keyword mode's near
  readings (no LLM) — a clarifying question, or "nothing left to ask".

Each stage is a plain function in its own module; this module only wires them, records the trace,
and turns failures into outcomes a person can act on.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import sqlalchemy as sa

from core.answer import Clarification, ErrorKind, Mode, Outcome
from core.catalog import Catalog
from core.clarify.candidates import pin
from core.clarify.policy import (
    MAX_SETTLED,
    NOTHING_TO_ASK,
    ask_about_rejection,
    before_generating,
    may_ask,
    sql_tables,
    why_not_ask,
    with_own_words,
)
from core.clarify.transcript import Transcript, describe, with_answers
from core.database import Database
from core.db_errors import public_error
from core.examples import most_similar
from core.generate import Context, generate, revise
from core.guard import UnknownDialectError, normalize_dialect
from core.keyword import answer_keyword
from core.keyword.readings import decode_all
from core.link import LinkError, Linking, link
from core.llm import LLM, LLMError, LLMRefused
from core.request import MAX_QUESTION_CHARS, Request
from core.retrieval import Keywords
from core.retrieve import retrieve
from core.run import Run, outcome_of, run_over_view
from core.settings import EngineSettings
from core.trace import Trace
from core.understand import Understanding, understand
from core.view import build_view, sample_rows

log = logging.getLogger(__name__)

MAX_VIEW_COLUMNS = 120  # beyond this the view keeps only the columns the question matched
NO_LLM_NOTE = (
    " With an LLM configured (set OPENAI_API_KEY, and OPENAI_BASE_URL for Azure, vLLM or "
    "Ollama) Askbase can answer free-form questions like this one."
)


def answer(db: Database, request: Request, settings: EngineSettings, llm: LLM | None) -> Outcome:
    """Answer with the LLM; without one, or when it fails (and `fallback_to_keyword` is on), in
    keyword mode (core/keyword), labelled so; the failed LLM attempt stays in the trace."""
    trace = Trace(question=request.question, database=db.name)

    def failed(kind: ErrorKind, message: str) -> Outcome:
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
    transcript = request.transcript
    if transcript.exchanges or transcript.rejected_sql:
        with trace.stage("clarified") as st:  # read back when this answer gets a 👎 (core/clarify)
            st.outputs = {"transcript": transcript.to_json()}

    if request.after_rejection:
        return _after_rejection(db, request, settings, llm, trace)
    if llm is None:
        outcome = _keyword(db, request, settings, trace)
        if outcome.error_kind == "keyword_abstain":
            return replace(outcome, error=outcome.error + NO_LLM_NOTE)
        return outcome
    try:
        return _with_llm(db, llm, request, settings, trace)
    except LLMRefused as exc:
        return failed("llm_refused", str(exc))
    except LLMError as exc:
        if not settings.fallback_to_keyword:
            return failed("llm", str(exc))
        log.warning("LLM failed (%s); answering in keyword mode", exc)
        with trace.stage("fallback") as st:
            st.outputs = {"reason": str(exc), "mode": "keyword"}
        outcome = _keyword(db, request, settings, trace)
        why = f"The LLM failed ({exc}), so this was answered in keyword mode."
        if outcome.status == "error":
            return replace(outcome, error=f"{why} {outcome.error}")
        return replace(outcome, interpretation=f"{why} {outcome.interpretation}".strip())


# ---------------------------------------------------------------------------------------------
# LLM mode


def _with_llm(db: Database, llm: LLM, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """Run the LLM pipeline. Raises LLMError when the LLM fails, so the caller can fall back."""
    catalog = db.catalog
    transcript = request.transcript
    notify = request.on_stage or _quiet

    notify("understand")
    with trace.stage("understand") as st:
        asked = with_answers(request.question, transcript.exchanges)
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
        # the person's clarification choices are the only readings of their words
        retrieval = pin(
            retrieve(understanding.question, understanding.keywords, db), decode_all(transcript.choices)
        )
        st.outputs = retrieval.summary()
    notify("link")
    with trace.stage("link") as st:
        try:
            linking = link(
                understanding,
                retrieval,
                catalog,
                llm,
                llm_min_tables=settings.link_llm_min_tables,
                graph=db.graph.restricted(db.config.deny_tables, db.config.deny_columns),
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
    notify("view")
    with trace.stage("view") as st:
        view = build_view(
            db, linking.tables, _pruned_columns(catalog, linking), question=understanding.question
        )
        samples = sample_rows(db, view, settings.sample_rows)
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
    clarification = before_generating(
        request.question,
        transcript,
        settings,
        llm,
        catalog=catalog,
        understanding=understanding,
        retrieval=retrieval,
        linking=linking,
        view=view,
        samples=samples,
        trace=trace,
    )
    if clarification is not None:
        return _asking(db, request.question, clarification, "llm", trace)
    ctx = Context(
        view=view,
        samples=samples,
        retrieval=retrieval,
        examples=most_similar(understanding.question, request.examples, settings.few_shot_examples),
        history=request.history,
        dialect=catalog.dialect,
        today=request.today,
        clarifications=describe(transcript.exchanges, transcript.rejected_sql),
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
    return outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="llm",
        task="; ".join(understanding.main_task),
    )


def _pruned_columns(catalog: Catalog, linking: Linking) -> dict[str, tuple[str, ...]] | None:
    """All columns of the linked tables when they fit in a prompt; only the matched ones (plus keys)
    for very wide tables, as CHESS prunes its schema."""
    width = sum(len(t.columns) for t in (catalog.table(n) for n in linking.tables) if t is not None)
    return None if width <= MAX_VIEW_COLUMNS else dict(linking.columns)


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


# ---------------------------------------------------------------------------------------------
# keyword mode


def _keyword(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """Keyword mode with the clarification rules applied.

    Answers given in the person's own words that matched no option are added to the question, so
    keyword mode reads them; when that does not help, the question is read alone. A question the
    rules say not to ask (clarifying is off, past the round limit, asked already) is answered with
    its first reading instead, and the answer says which reading it took.
    """
    worded = with_own_words(request.question, request.transcript)
    asked = replace(request, question=worded) if worded != request.question else request
    outcome = answer_keyword(db, asked, settings, trace)
    if asked is not request and outcome.status == "error":
        asked = request  # the words did not help: read the question alone
        outcome = answer_keyword(db, asked, settings, trace)
    outcome = replace(outcome, question=request.question)
    taken: list[str] = []
    for _ in range(MAX_SETTLED):
        c = outcome.clarification
        if outcome.status != "clarify" or c is None or not c.options:
            break
        why = why_not_ask(c, asked.transcript, settings)
        if why is None:
            break
        first = c.options[0]
        taken.append(f"I took {first.label} ({why})")
        with trace.stage("clarify") as st:
            st.outputs = {"not_asked": c.question, "took": first.label, "why": why}
        asked = replace(asked, transcript=asked.transcript.assuming(first.value))
        outcome = replace(answer_keyword(db, asked, settings, trace), question=request.question)
    if taken and outcome.status == "answer":
        said = " ".join([outcome.interpretation, *(f"{t}." for t in taken)]).strip()
        outcome = replace(outcome, interpretation=said)
    return outcome


# ---------------------------------------------------------------------------------------------
# after 👎


def _after_rejection(
    db: Database, request: Request, settings: EngineSettings, llm: LLM | None, trace: Trace
) -> Outcome:
    """A clarifying question about the rejected answer (status "clarify"), or that there is
    nothing left to ask (status "error", error_kind "clarify_none")."""

    def nothing(mode: Mode) -> Outcome:
        return Outcome(
            status="error",
            question=request.question,
            database=db.name,
            mode=mode,
            error=NOTHING_TO_ASK,
            error_kind="clarify_none",
            trace=trace,
        )

    if not may_ask(settings, request.transcript):
        with trace.stage("clarify") as st:
            st.outputs = {"stopped": "clarifying is off or the question limit is reached"}
        return nothing("llm" if llm is not None else "keyword")
    if llm is not None:
        try:
            clarification = _rejection_round(db, request.question, request.transcript, settings, llm, trace)
        except LLMError as exc:
            log.warning("clarification after a rejection failed: %s", exc)
        else:
            if clarification is None:
                return nothing("llm")
            return _asking(db, request.question, clarification, "llm", trace)
    # no LLM (or it failed): keyword mode asks about the nearest other reading of a word
    outcome = _keyword(db, request, settings, trace)
    if outcome.status == "clarify" and outcome.clarification is not None:
        return outcome
    return nothing("keyword")


def _rejection_round(
    db: Database, question: str, transcript: Transcript, settings: EngineSettings, llm: LLM, trace: Trace
) -> Clarification | None:
    """retrieve → link → view over the tables the question and the rejected SQL touched, then
    one Summarize–Review–Ask round about them."""
    catalog = db.catalog
    with trace.stage("retrieve") as st:
        retrieval = pin(retrieve(question, Keywords(), db), decode_all(transcript.choices))
        st.outputs = retrieval.summary()
    with trace.stage("link") as st:
        try:
            linking = link(Understanding(question=question), retrieval, catalog, None)
        except LinkError:
            linking = Linking(tables=())
        tables = list(dict.fromkeys([*linking.tables, *sql_tables(transcript.rejected_sql, catalog)]))
        st.outputs = {"tables": tables}
    if not tables:
        return None
    with trace.stage("view") as st:
        view = build_view(db, tables, question=question)
        samples = sample_rows(db, view, settings.sample_rows)
        st.outputs = {"tables": view.tables, "joins": view.explain()}
    return ask_about_rejection(
        question,
        transcript,
        llm,
        catalog=catalog,
        retrieval=retrieval,
        linking=linking,
        view=view,
        samples=samples,
        trace=trace,
    )


# ---------------------------------------------------------------------------------------------


def _asking(db: Database, question: str, clarification: Clarification, mode: Mode, trace: Trace) -> Outcome:
    return Outcome(
        status="clarify",
        question=question,
        database=db.name,
        mode=mode,
        clarification=clarification,
        trace=trace,
    )


def _quiet(_stage: str) -> None:
    """No progress reporting (the CLI, benchmarks)."""
