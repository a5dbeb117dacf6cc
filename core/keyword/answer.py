"""Answer a question in keyword mode: no LLM, every stage inspectable in the trace.

retrieve (phrases → tables, columns, stored values) → interpret (cue words → query plan, or
decline, or ask back) → view (the joins) → compile (SQL over the view) → expand → guard → execute.
Used when no LLM is configured and as the fallback when the LLM fails.
"""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import replace

from core.answer import Clarification, ErrorKind, Option, Outcome
from core.database import Database
from core.keyword.abstain import understood_words
from core.keyword.compile import CompileError, compile_plan
from core.keyword.explain import abstain_text, describe
from core.keyword.interpret import make_plan
from core.keyword.match import choose, content_words, discover, lexicon
from core.keyword.plan import Abstain, Ambiguity
from core.keyword.readings import decode_all
from core.keyword.shapes import read_shape
from core.request import Request
from core.run import outcome_of, run_over_view
from core.settings import EngineSettings
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
    readings = decode_all(request.transcript.choices)
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
        near = request.after_rejection or settings.clarify == "always"
        plan = make_plan(shape, matching, lex, request.today or dt.date.today(), readings, near=near)
        if isinstance(plan, Abstain):
            st.outputs = {"abstain": plan.reason, "not_understood": list(plan.not_understood)}
        elif isinstance(plan, Ambiguity):
            st.outputs = {"ambiguous": plan.words, "readings": list(plan.labels)}
        else:
            st.outputs = {"reading": describe(plan), "tables": plan.tables}
    if isinstance(plan, Abstain):
        return replace(
            _failed(outcome, "keyword_abstain", abstain_text(plan)), interpretation="; ".join(plan.understood)
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
        interpretation = f"'{plan.words}' can be read in {len(plan.readings)} ways"
        return replace(outcome, status="clarify", clarification=clarification, interpretation=interpretation)
    outcome = replace(outcome, interpretation=describe(plan))
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
    return outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="keyword",
        interpretation=outcome.interpretation,
    )


def _failed(outcome: Outcome, kind: ErrorKind, message: str) -> Outcome:
    return replace(outcome, status="error", error_kind=kind, error=message)
