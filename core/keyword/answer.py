"""Answer a question in keyword mode: no LLM, every stage inspectable in the trace.

retrieve (phrases → tables, columns, stored values) → interpret (cue words → query plan, or
decline, or ask back) → view (the joins) → compile (SQL over the view) → expand → guard → execute.
Used when no LLM is configured and as the fallback when the LLM fails.
"""

from __future__ import annotations

import datetime as dt
import logging

from core.answer import Clarification, Option, Outcome
from core.database import Database
from core.keyword.abstain import understood_words
from core.keyword.compile import CompileError, compile_plan
from core.keyword.explain import abstain_text, describe
from core.keyword.interpret import make_plan
from core.keyword.match import choose, content_words, discover, lexicon
from core.keyword.plan import Abstain, Ambiguity
from core.keyword.readings import decode_all
from core.keyword.shapes import read_shape
from core.pipeline import Request
from core.run import query_error_message, run_over_view
from core.settings import EngineSettings
from core.summary import summarize
from core.trace import Trace
from core.view import build_view

log = logging.getLogger(__name__)


def answer_keyword(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """The keyword-mode outcome: an answer labelled with its reading, a clarifying question, or a
    refusal that says what was understood (status "error", error_kind "keyword_abstain")."""
    try:
        return _answer(db, request, settings, trace)
    except Exception as exc:  # a reader bug must cost one question, never the bot
        log.exception("keyword mode failed on %r", request.question)
        return Outcome(
            status="error",
            question=request.question,
            database=db.name,
            mode="keyword",
            error=f"Keyword mode failed on this question ({type(exc).__name__}). Try rephrasing it.",
            error_kind="keyword_internal",
            trace=trace,
        )


def _answer(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    notify = request.on_stage or (lambda _stage: None)
    notify("keyword")
    outcome = Outcome(
        status="answer", question=request.question, database=db.name, mode="keyword", trace=trace
    )
    readings = decode_all(getattr(request, "choices", ()) or ())
    lex = lexicon(db)
    with trace.stage("retrieve") as st:
        shape = read_shape(request.question)
        matching = discover(shape, lex, readings)
        choose(matching.mentions, lex)
        st.outputs = {
            "cues": [f"{c.kind}{':' + c.arg if c.arg else ''} '{c.words}'" for c in shape.cues],
            "literals": [f"{lit.kind} '{lit.words}'" for lit in shape.literals],
            "matches": understood_words(matching),
            "unmatched": content_words(shape, matching.unmatched),
            "pinned": [r.encode() for r in readings],
        }
    with trace.stage("interpret") as st:
        near = bool(getattr(request, "ask_alternatives", False)) or settings.clarify == "always"
        plan = make_plan(shape, matching, lex, request.today or dt.date.today(), readings, near=near)
        if isinstance(plan, Abstain):
            st.outputs = {"abstain": plan.reason, "not_understood": list(plan.not_understood)}
        elif isinstance(plan, Ambiguity):
            st.outputs = {"ambiguous": plan.words, "readings": list(plan.labels)}
        else:
            st.outputs = {"reading": describe(plan), "tables": plan.tables}
    if isinstance(plan, Abstain):
        outcome.status = "error"
        outcome.error_kind = "keyword_abstain"
        outcome.error = abstain_text(plan)
        outcome.interpretation = "; ".join(plan.understood)
        return outcome
    if isinstance(plan, Ambiguity):
        outcome.status = "clarify"
        what = "value" if plan.kind == "AmbValue" else "column"
        outcome.clarification = Clarification(
            question=f"Which {what} does '{plan.words}' mean?",
            options=tuple(
                Option(label, r.encode()) for label, r in zip(plan.labels, plan.readings, strict=True)
            ),
            kind=plan.kind,
        )
        outcome.interpretation = f"'{plan.words}' can be read in {len(plan.readings)} ways"
        return outcome
    outcome.interpretation = describe(plan)
    dialect = db.catalog.dialect
    with trace.stage("view") as st:
        view = build_view(db, plan.tables)
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
        missing = [t for t in plan.tables if t.lower() not in {x.lower() for x in view.tables}]
    if missing:
        return _failed(
            outcome,
            "keyword_abstain",
            f"Keyword mode could not join {', '.join(missing)} to the other tables the question names, so it did not answer. Try asking about fewer things at once.",
        )
    with trace.stage("compile") as st:
        try:
            over_view = compile_plan(plan, view, lex, dialect)
            st.outputs = {"sql": over_view}
        except CompileError as exc:
            st.outputs = {"error": str(exc)}
            return _failed(
                outcome,
                "keyword_abstain",
                f"Keyword mode could not write this query: {exc}. Try a simpler question.",
            )
    run = run_over_view(db, over_view, view, settings, trace, notify)
    outcome.sql = run.sql
    if run.unfit:
        return _failed(outcome, "sql", f"Keyword mode wrote a query it could not expand: {run.unfit}")
    if run.refused:
        return _failed(outcome, "guard", f"The query was refused because it {run.refused}.")
    if run.error is not None:
        return _failed(outcome, run.error.kind, query_error_message(run.error))
    result = run.result
    assert result is not None
    outcome.columns, outcome.rows, outcome.truncated = result.columns, result.rows, result.truncated
    outcome.answer = summarize("", result.columns, result.rows, result.truncated)
    return outcome


def _failed(outcome: Outcome, kind: str, message: str) -> Outcome:
    outcome.status = "error"
    outcome.error_kind = kind
    outcome.error = message
    return outcome
