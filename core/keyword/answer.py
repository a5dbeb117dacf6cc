"""Answer a question in keyword mode: no LLM, every stage inspectable in the trace.

retrieve (phrases → tables, columns, stored values) → interpret (passes over the plan → a query,
or decline, or ask back) → view (the joins) → compile (SQL over the view) → expand → guard →
execute. Used when no LLM is configured and as the fallback when the LLM fails.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Sequence
from typing import Protocol

from core.answer import Clarification, Option, Outcome
from core.database import Database
from core.keyword.abstain import understood_words
from core.keyword.compile import CompileError, compile_query
from core.keyword.confidence import assess
from core.keyword.explain import abstain_text, describe, doubt_text
from core.keyword.interpret import make_plan
from core.keyword.match import choose, content_words, discover, lexicon, names_over_cues
from core.keyword.plan import Abstain, Ambiguity, Context, Decline
from core.keyword.readings import decode_all
from core.keyword.shapes import read_shape
from core.run import query_error_message, run_over_view
from core.settings import EngineSettings
from core.summary import summarize
from core.trace import Trace
from core.view import build_view

log = logging.getLogger(__name__)


class Asked(Protocol):
    """What keyword mode reads of a request (core.pipeline.Request has it all)."""

    @property
    def question(self) -> str: ...
    @property
    def today(self) -> dt.date | None: ...
    @property
    def on_stage(self) -> Callable[[str], None] | None: ...
    @property
    def choices(self) -> Sequence[str]: ...
    @property
    def ask_alternatives(self) -> bool: ...


def answer_keyword(db: Database, request: Asked, settings: EngineSettings, trace: Trace) -> Outcome:
    """The keyword-mode outcome: an answer labelled with its reading, a clarifying question, or a
    refusal that says what was understood (status "error", error_kind "keyword_abstain")."""
    try:
        return _answer(db, request, settings, trace)
    except Exception as exc:  # a reader bug must cost one question, never the bot
        log.exception("keyword mode failed on %r", request.question)
        return _failed(
            db,
            request,
            trace,
            "keyword_internal",
            f"Keyword mode failed on this question ({type(exc).__name__}). Try rephrasing it.",
        )


def _answer(db: Database, request: Asked, settings: EngineSettings, trace: Trace) -> Outcome:
    notify = request.on_stage or (lambda _stage: None)
    notify("keyword")
    readings = decode_all(request.choices)
    lex = lexicon(db)
    with trace.stage("retrieve") as st:
        shape = names_over_cues(read_shape(request.question), lex)
        matching = choose(discover(shape, lex, readings), lex)
        st.outputs = {
            "cues": [f"{c.kind}{':' + c.arg if c.arg else ''} '{c.words}'" for c in shape.cues],
            "literals": [f"{lit.kind} '{lit.words}'" for lit in shape.literals],
            "matches": understood_words(matching),
            "unmatched": content_words(shape, matching.unmatched),
            "pinned": [r.encode() for r in readings],
        }
    with trace.stage("interpret") as st:
        near = request.ask_alternatives or settings.clarify == "always"
        ctx = Context(lex, request.today or dt.date.today(), tuple(readings))
        plan = make_plan(shape, matching, ctx, near=near)
        if isinstance(plan, Abstain):
            st.outputs = {"abstain": plan.reason, "not_understood": list(plan.not_understood)}
        elif isinstance(plan, Ambiguity):
            st.outputs = {"ambiguous": plan.words, "readings": list(plan.labels)}
        else:
            st.outputs = {"reading": describe(plan.query), "tables": list(plan.query.tables)}
    if isinstance(plan, Abstain):
        return _failed(
            db,
            request,
            trace,
            "keyword_abstain",
            abstain_text(plan),
            interpretation="; ".join(plan.understood),
        )
    if isinstance(plan, Ambiguity):
        what = "value" if plan.kind == "AmbValue" else "column"
        clarification = Clarification(
            question=f"Which {what} does '{plan.words}' mean?",
            options=tuple(
                Option(label, r.encode()) for label, r in zip(plan.labels, plan.readings, strict=True)
            ),
            kind=plan.kind,
        )
        return Outcome(
            status="clarify",
            question=request.question,
            database=db.name,
            mode="keyword",
            clarification=clarification,
            interpretation=f"'{plan.words}' can be read in {len(plan.readings)} ways",
            trace=trace,
        )
    query = plan.query
    interpretation = describe(query)
    with trace.stage("view") as st:
        view = build_view(db, list(query.tables))
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
        missing = [t for t in query.tables if t.lower() not in {x.lower() for x in view.tables}]
    if missing:
        return _failed(
            db,
            request,
            trace,
            "keyword_abstain",
            f"Keyword mode could not join {', '.join(missing)} to the other tables the question names, so it did not answer. Try asking about fewer things at once.",
            interpretation=interpretation,
        )
    with trace.stage("confidence") as st:
        try:
            confidence = assess(plan, view, ctx)
        except Decline as d:
            st.outputs = {"declined": d.reason}
            return _failed(
                db,
                request,
                trace,
                "keyword_abstain",
                doubt_text(query, d.reason),
                interpretation=interpretation,
            )
        st.outputs = confidence.trace(settings.keyword_min_confidence)
    if confidence.score < settings.keyword_min_confidence and confidence.weakest is not None:
        return _failed(
            db,
            request,
            trace,
            "keyword_abstain",
            doubt_text(query, confidence.weakest.says),
            interpretation=interpretation,
        )
    with trace.stage("compile") as st:
        try:
            over_view = compile_query(query, view, lex, db.catalog.dialect)
            st.outputs = {"sql": over_view}
        except CompileError as exc:
            st.outputs = {"error": str(exc)}
            return _failed(
                db,
                request,
                trace,
                "keyword_abstain",
                f"Keyword mode could not write this query: {exc}. Try a simpler question.",
                interpretation=interpretation,
            )
    run = run_over_view(db, over_view, view, settings, trace, notify)
    problem: tuple[str, str] | None = None
    if run.unfit:
        problem = ("sql", f"Keyword mode wrote a query it could not expand: {run.unfit}")
    elif run.refused:
        problem = ("guard", f"The query was refused because it {run.refused}.")
    elif run.error is not None:
        problem = (run.error.kind, query_error_message(run.error))
    if problem is not None:
        return _failed(db, request, trace, *problem, interpretation=interpretation, sql=run.sql)
    result = run.result
    assert result is not None
    return Outcome(
        status="answer",
        question=request.question,
        database=db.name,
        mode="keyword",
        answer=summarize("", result.columns, result.rows, result.truncated),
        sql=run.sql,
        columns=result.columns,
        rows=result.rows,
        truncated=result.truncated,
        interpretation=interpretation,
        trace=trace,
    )


def _failed(
    db: Database,
    request: Asked,
    trace: Trace,
    kind: str,
    message: str,
    *,
    interpretation: str = "",
    sql: str = "",
) -> Outcome:
    return Outcome(
        status="error",
        question=request.question,
        database=db.name,
        mode="keyword",
        error=message,
        error_kind=kind,
        interpretation=interpretation,
        sql=sql,
        trace=trace,
    )
