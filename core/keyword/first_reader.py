"""The first reader: keyword mode's reading of a question the grammar places no tree for.

Why it is still here: the grammar (grammar.py → bind.py) reads most questions, and every question
it reads goes its way; this older reader (shapes.py → match.py → the passes of interpret.py,
walk.py first) answers the kinds of questions the grammar has no rule for yet, until it does
(issue 33). It runs the same stages, traced the same way: retrieve, interpret, view, confidence,
compile, run — and a tie at a LIMIT of one is declined.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from core.answer import Outcome
from core.database import Database
from core.joins import View
from core.keyword.abstain import understood_words
from core.keyword.compile import CompileError, compile_query, order_outputs
from core.keyword.confidence import assess
from core.keyword.explain import abstain_text, describe
from core.keyword.interpret import make_plan
from core.keyword.match import (
    Lexicon,
    Matching,
    choose,
    content_words,
    discover,
    names_across_stop_words,
    names_in_stop_words,
    names_over_cues,
    percent_signs,
    row_nouns_naming_a_table,
    values_over_stop_words,
)
from core.keyword.plan import Abstain, Ambiguity, Context, Plan, Query, Ref
from core.keyword.readings import Reading, decode_all
from core.keyword.replies import clarify, failed
from core.keyword.shapes import Shape, read_shape
from core.keyword.stages import answer_of, answered, joined, judged
from core.request import Request
from core.run import run_over_view
from core.settings import EngineSettings
from core.trace import Trace


def answer_first_reader(
    db: Database, request: Request, settings: EngineSettings, trace: Trace, lex: Lexicon
) -> Outcome:
    """The question read by the first reader, then the stages the grammar's path takes too."""
    readings = decode_all(request.transcript.choices)
    ctx = Context(lex, request.today or dt.date.today(), tuple(readings))
    with trace.stage("retrieve") as st:
        shape, matching = _match(request.question, lex, readings)
        st.outputs = {
            "cues": [f"{c.kind}{':' + c.arg if c.arg else ''} '{c.words}'" for c in shape.cues],
            "literals": [f"{lit.kind} '{lit.words}'" for lit in shape.literals],
            "matches": understood_words(matching),
            "unmatched": content_words(shape, matching.unmatched),
            "pinned": [r.encode() for r in readings],
        }
    plan = _planned(db, request, settings, trace, ctx, shape, matching)
    if isinstance(plan, Outcome):
        return plan
    interpretation = describe(plan.query)
    view = joined(db, request, trace, plan.query, request.question, interpretation)
    if isinstance(view, Outcome):
        return view
    threshold = settings.keyword_min_confidence
    measure = functools.partial(assess, plan, view, ctx, question=request.question)
    doubt = judged(db, request, trace, plan.query, threshold, interpretation, measure)
    if doubt is not None:
        return doubt
    return _ran(db, request, settings, trace, lex, plan.query, view, shape, interpretation)


def _planned(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    ctx: Context,
    shape: Shape,
    matching: Matching,
) -> Plan | Outcome:
    """The 'interpret' stage: the passes of interpret.py, or the decline or the question back."""
    with trace.stage("interpret") as st:
        near = request.after_rejection or settings.clarify == "always"
        plan = make_plan(shape, matching, ctx, near=near)
        if isinstance(plan, Abstain):
            st.outputs = {"abstain": plan.reason, "not_understood": list(plan.not_understood)}
        elif isinstance(plan, Ambiguity):
            st.outputs = {"ambiguous": plan.words, "readings": list(plan.labels)}
        else:
            st.outputs = {"reading": describe(plan.query), "tables": list(plan.query.tables)}
    if isinstance(plan, Abstain):
        understood = "; ".join(plan.understood)
        return failed(db, request, trace, "keyword_abstain", abstain_text(plan), interpretation=understood)
    if isinstance(plan, Ambiguity):
        return clarify(db, request, trace, plan)
    return plan


def _ran(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    query: Query,
    view: View,
    shape: Shape,
    interpretation: str,
) -> Outcome:
    """The SQL and the run; a tie at a LIMIT of one is declined ('the first one' has no single
    answer), a tie at another LIMIT is said."""
    run = answered(db, request, settings, trace, lex, query, view, interpretation)
    if isinstance(run, Outcome):
        return run
    tied = _tied_at_limit(db, query, view, lex, run.result.rows, settings, trace) if run.result else []
    asks_when = bool(shape.tokens) and shape.tokens[0].low == "when"  # the date is the answer anyway
    if tied and query.limit == 1 and not asks_when:
        names = ", ".join(str(r[0]) for r in tied)
        text = (
            f"Keyword mode (no LLM) found a tie: {names} share the first place, so 'the first one' "
            "has no single answer. Ask for the top few instead to see them all."
        )
        return failed(db, request, trace, "keyword_abstain", text, interpretation=interpretation, sql=run.sql)
    if tied:
        interpretation += f" (More rows tie with the last one shown: {len(tied)} share its value.)"
    return answer_of(db, request, trace, run, interpretation)


def _tied_at_limit(
    db: Database,
    query: Query,
    view: View,
    lex: Lexicon,
    rows: Sequence[tuple[Any, ...]],
    settings: EngineSettings,
    trace: Trace,
) -> list[tuple[Any, ...]]:
    """The rows that tie with the last one a LIMIT keeps, when more exist than it keeps ('which
    aircraft flies the most flights?' when two fly as many): found by asking for one row more,
    with the measure it ranks by shown even when the answer hides it."""
    limit = query.limit
    dialect = db.catalog.dialect
    if not limit or len(rows) < limit:
        return []
    probe = replace(query, limit=limit + 1)
    if query.hidden:  # 'which storm affected the most regions': show the count it ranks by
        probe = replace(probe, measures=(*query.measures, *query.hidden), hidden=())
    unshown = [o.key for o in query.order if isinstance(o.key, Ref) and o.key not in query.projection]
    if unshown and not (query.measures or query.groups):  # 'the customers who ordered the largest quantity'
        probe = replace(probe, projection=(*query.projection, *unshown))
    with trace.stage("ties") as st:
        try:
            more = compile_query(probe, view, lex, dialect)
        except CompileError:
            st.outputs = {"checked": False}
            return []
        keys = order_outputs(more, dialect)
        if not keys:
            st.outputs = {"checked": False}
            return []
        run = run_over_view(db, more, view, settings, Trace(question="", database=db.name))
        extra = run.result.rows if run.result is not None else []
        last = extra[limit - 1] if len(extra) > limit else None
        tied = (
            [r for r in extra if all(r[k] == last[k] for k in keys)]
            if last is not None and all(extra[limit][k] == last[k] for k in keys)
            else []
        )
        st.outputs = {"checked": run.result is not None, "tied": len(tied)}
    return tied


def _match(question: str, lex: Lexicon, readings: Sequence[Reading]) -> tuple[Shape, Matching]:
    shape = names_over_cues(read_shape(question), lex)
    shape = row_nouns_naming_a_table(percent_signs(shape, lex), lex)
    shape = names_across_stop_words(names_in_stop_words(shape, lex), lex)
    shape = values_over_stop_words(shape, lex)
    return shape, choose(discover(shape, lex, readings), lex)
