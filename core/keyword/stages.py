"""The stages both of keyword mode's readers take once a question is read as a Query: the join
view, the SQL written over it, and the run — each of which may still end in a decline, worded the
same whichever reader read the question."""

from __future__ import annotations

from collections.abc import Callable

from core.answer import Outcome
from core.database import Database
from core.joins import View
from core.keyword.compile import CompileError, compile_query
from core.keyword.confidence import Confidence
from core.keyword.explain import doubt_text
from core.keyword.match import Lexicon
from core.keyword.plan import Decline, Query
from core.keyword.replies import asked, failed
from core.request import Request
from core.run import Run, outcome_of, run_over_view
from core.settings import EngineSettings
from core.trace import Trace
from core.view import build_view, required

EMPTY_DOUBT = (
    "that reading matches no rows, and it may not be what you meant. If it is, the answer is none; "
    "otherwise try naming the columns or values you mean"
)


def joined(
    db: Database, request: Request, trace: Trace, query: Query, words: str, interpretation: str
) -> View | Outcome:
    """The 'view' stage: the join tree over the query's tables (each row counted, listed or
    ranked is the target's), or a decline when a table is left out."""
    with trace.stage("view") as st:
        view = build_view(db, list(query.tables), question=words)
        if query.target:
            view = required(view, query.target)
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
        missing = [t for t in query.tables if t.lower() not in {x.lower() for x in view.tables}]
    if not missing:
        return view
    return failed(
        db,
        request,
        trace,
        "keyword_abstain",
        f"Keyword mode could not join {', '.join(missing)} to the other tables the question names, "
        "so it did not answer. Try asking about fewer things at once.",
        interpretation=interpretation,
    )


def compiled(
    db: Database, request: Request, trace: Trace, lex: Lexicon, query: Query, view: View, interpretation: str
) -> str | Outcome:
    """The 'compile' stage: the query as SQL over the view, or a decline when it cannot be written."""
    with trace.stage("compile") as st:
        try:
            sql = compile_query(query, view, lex, db.catalog.dialect)
        except CompileError as exc:
            st.outputs = {"error": str(exc)}
            return failed(
                db,
                request,
                trace,
                "keyword_abstain",
                f"Keyword mode could not write this query: {exc}. Try a simpler question.",
                interpretation=interpretation,
            )
        st.outputs = {"sql": sql}
    return sql


def ran(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    query: Query,
    sql: str,
    view: View,
    notify: Callable[[str], None],
    interpretation: str,
) -> Run | Outcome:
    """The run, or a decline when it finds nothing. Why: "none" is an answer people act on, and
    from a misreading it looks like any other — on unseen schemas most of keyword mode's empty
    results were readings it got wrong ('before X or after Y' read as both). The reading and its
    SQL are shown, so a reading that is right still tells the person there are none."""
    run = run_over_view(db, sql, view, settings, trace, notify)
    rows = run.result.rows if run.result is not None else None
    if rows is not None and (not rows or (len(rows) == 1 and all(v is None for v in rows[0]))):
        return failed(
            db,
            request,
            trace,
            "keyword_abstain",
            doubt_text(query, EMPTY_DOUBT),
            interpretation=interpretation,
            sql=run.sql,
        )
    return run


def answered(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    query: Query,
    view: View,
    interpretation: str,
) -> Run | Outcome:
    """The SQL and its run, or the decline either ends in."""
    sql = compiled(db, request, trace, lex, query, view, interpretation)
    if isinstance(sql, Outcome):
        return sql
    notify = request.on_stage or (lambda _stage: None)
    return ran(db, request, settings, trace, query, sql, view, notify, interpretation)


def answer_of(db: Database, request: Request, trace: Trace, run: Run, interpretation: str) -> Outcome:
    """The keyword-mode answer of a run, labelled with its reading."""
    return outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="keyword",
        interpretation=interpretation,
    )


def judged(
    db: Database,
    request: Request,
    trace: Trace,
    query: Query,
    threshold: float,
    interpretation: str,
    measure: Callable[[], Confidence],
) -> Outcome | None:
    """The 'confidence' stage: None when the reading is sure enough; else the question back (two
    to four close readings of one phrase) or the decline that says what it doubts."""
    with trace.stage("confidence") as st:
        try:
            confidence = measure()
        except Decline as d:  # an unsound join
            st.outputs = {"declined": d.reason}
            text = doubt_text(query, d.reason)
            return failed(db, request, trace, "keyword_abstain", text, interpretation=interpretation)
        st.outputs = confidence.trace(threshold)
    if confidence.score >= threshold:
        return None
    ask = confidence.askable(threshold)
    if ask is not None:
        return asked(db, request, trace, ask.words, ask.options, interpretation)
    says = confidence.weakest.says if confidence.weakest is not None else "it is not sure of the reading"
    return failed(
        db, request, trace, "keyword_abstain", doubt_text(query, says), interpretation=interpretation
    )
