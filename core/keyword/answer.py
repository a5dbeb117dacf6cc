"""Answer a question in keyword mode: no LLM, every stage inspectable in the trace.

retrieve (phrases → tables, columns, stored values) → interpret (passes over the plan → a query,
or decline, or ask back) → view (the joins) → compile (SQL over the view) → expand → guard →
execute. Used when no LLM is configured and as the fallback when the LLM fails.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any, Literal

from core.answer import Clarification, ErrorKind, Option, Outcome
from core.conversation import MAX_TURNS, Turn
from core.database import Database
from core.dictionary import name_words
from core.expand import ExpandError, expand
from core.joins import View
from core.keyword.abstain import understood_words
from core.keyword.bind import Bound
from core.keyword.compile import CompileError, compile_query, order_outputs
from core.keyword.confidence import assess
from core.keyword.definitions import answer_defined, said_definitions, unplaced_definitions_text
from core.keyword.explain import abstain_text, describe, doubt_text, follow_up_text, sense_label
from core.keyword.followup import FollowUp, apply, looks_like_follow_up, self_contained
from core.keyword.grammar import Reading as GrammarReading
from core.keyword.interpret import make_plan
from core.keyword.match import (
    Lexicon,
    Matching,
    Mention,
    Sense,
    choose,
    content_words,
    discover,
    lexicon,
    names_across_stop_words,
    names_in_stop_words,
    names_over_cues,
    percent_signs,
    row_nouns_naming_a_table,
    values_over_stop_words,
)
from core.keyword.plan import Abstain, Ambiguity, AmbiguousDate, Context, Decline, Plan, Query, Ref
from core.keyword.readings import Reading, decode_all
from core.keyword.shapes import Shape, read_shape
from core.plurals import plural
from core.request import Request
from core.run import check_for, outcome_of, run_over_view
from core.settings import EngineSettings
from core.trace import Trace
from core.view import build_view, required

log = logging.getLogger(__name__)

EMPTY_DOUBT = (
    "that reading matches no rows, and it may not be what you meant. If it is, the answer is none; "
    "otherwise try naming the columns or values you mean"
)


def answer_keyword(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
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


def _answer(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """The grammar's reading; a follow-up in a thread, or a question the grammar reads no tree
    for, is read by the first reader (walk.py) until the grammar covers it."""
    if request.history:
        return _answer_walk(db, request, settings, trace)
    return _answer_tree(db, request, settings, trace)


def _answer_walk(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    notify = request.on_stage or (lambda _stage: None)
    notify("keyword")
    readings = decode_all(request.transcript.choices)
    lex = lexicon(db)
    if request.definitions and not readings and not request.after_rejection:
        defined = answer_defined(db, request, lex, settings, trace)  # metrics, named filters, entities
        if defined is not None:
            return defined
        named = said_definitions(request.question, request.definitions)
        if named:  # the reading below knows no definitions: it would answer with its own meaning
            return _failed(db, request, trace, "keyword_abstain", unplaced_definitions_text(named))
    today = request.today or dt.date.today()
    ctx = Context(lex, today, tuple(readings))
    with trace.stage("retrieve") as st:
        shape, matching = _match(request.question, lex, readings)
        st.outputs = {
            "cues": [f"{c.kind}{':' + c.arg if c.arg else ''} '{c.words}'" for c in shape.cues],
            "literals": [f"{lit.kind} '{lit.words}'" for lit in shape.literals],
            "matches": understood_words(matching),
            "unmatched": content_words(shape, matching.unmatched),
            "pinned": [r.encode() for r in readings],
        }
    follow: FollowUp | None = None
    history = tuple(request.history)
    if history and looks_like_follow_up(shape, matching):
        with trace.stage("follow-up") as st:
            continued = _continue(db, lex, ctx, shape, matching, history, settings)
            st.outputs = {"previous": history[-1].question}
            if isinstance(continued, Abstain):
                st.outputs["declined"] = continued.reason
            elif continued is not None:
                st.outputs["change"] = continued.change
            else:
                st.outputs["read"] = "on its own"
        if isinstance(continued, Abstain):
            return _failed(
                db, request, trace, "keyword_abstain", follow_up_text(continued, history[-1].question)
            )
        follow = continued
    with trace.stage("interpret") as st:
        near = request.after_rejection or settings.clarify == "always"
        plan = follow.plan if follow is not None else make_plan(shape, matching, ctx, near=near)
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
        return _clarify(db, request, trace, plan)
    query = plan.query
    interpretation = describe(query)
    if follow is not None:
        interpretation = f"Follow-up to '{history[-1].question}' ({follow.change}): {interpretation}"
    with trace.stage("view") as st:
        words = request.question if follow is None else f"{history[-1].question} {request.question}"
        view = build_view(db, list(query.tables), question=words)
        if query.target:  # each row, or each row measured, is a target's
            view = required(view, query.target)
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
            confidence = assess(
                plan, view, ctx, also=(follow.own,) if follow is not None else (), question=words
            )
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
    ask = confidence.askable(settings.keyword_min_confidence)
    if confidence.score < settings.keyword_min_confidence and ask is not None:
        return _asked(db, request, trace, ask.words, ask.options, interpretation)
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
    result = run.result
    nothing = result is not None and (
        not result.rows or (len(result.rows) == 1 and all(v is None for v in result.rows[0]))
    )  # no rows, or an average or total over none of them (a row of NULLs)
    if nothing:
        # "none" is an answer people act on, and from a misreading it looks like any other: on
        # unseen schemas most of keyword mode's empty results were readings it got wrong ('before
        # X or after Y' read as both; 'at least 3 products' counted per product). The reading and
        # its SQL are shown, so a reading that is right still tells the person there are none.
        return _failed(
            db,
            request,
            trace,
            "keyword_abstain",
            doubt_text(query, EMPTY_DOUBT),
            interpretation=interpretation,
            sql=run.sql,
        )
    if result is not None:
        tied = _tied_at_limit(db, query, view, lex, result.rows, settings, trace)
        asks_when = bool(shape.tokens) and shape.tokens[0].low == "when"  # the date is the answer anyway
        if tied and query.limit == 1 and not asks_when:
            names = ", ".join(str(r[0]) for r in tied)
            return _failed(
                db,
                request,
                trace,
                "keyword_abstain",
                f"Keyword mode (no LLM) found a tie: {names} share the first place, so 'the first one' "
                "has no single answer. Ask for the top few instead to see them all.",
                interpretation=interpretation,
                sql=run.sql,
            )
        if tied:
            interpretation += f" (More rows tie with the last one shown: {len(tied)} share its value.)"
    return outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="keyword",
        interpretation=interpretation,
    )


def _answer_tree(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """The question read by the grammar: lexicon → tree → binding → view → confidence → compile
    → run, each stage in the trace; any stage may end in a decline or a question back."""
    from core.keyword.bind import SchemaNames
    from core.keyword.grammar import read

    notify = request.on_stage or (lambda _stage: None)
    notify("keyword")
    readings = decode_all(request.transcript.choices)
    lex = lexicon(db)
    if request.definitions and not readings and not request.after_rejection:
        defined = answer_defined(db, request, lex, settings, trace)  # metrics, named filters, entities
        if defined is not None:
            return defined
        named = said_definitions(request.question, request.definitions)
        if named:  # the reading below knows no definitions: it would answer with its own meaning
            return _failed(db, request, trace, "keyword_abstain", unplaced_definitions_text(named))
    with trace.stage("retrieve") as st:
        reading = read(request.question, SchemaNames(lex))
        st.outputs = {
            "lexemes": [f"{x.cat}{':' + x.arg if x.arg else ''} '{x.text}'" for x in reading.lexemes],
            "tree": repr(reading.tree) if reading.tree else "",
            "matches": placed_words(reading, lex),  # what the words name ('clients' → client)
            "pinned": [r.encode() for r in readings],
        }
    bound = _interpreted(db, request, settings, trace, lex, reading, readings)
    if isinstance(bound, Outcome):
        return bound
    query = bound.query
    view = _joined(db, request, trace, query)
    if isinstance(view, Outcome):
        return view
    doubt = _doubted(db, request, settings, trace, lex, bound, view)
    if doubt is not None:
        return doubt
    return _ran(db, request, settings, trace, lex, query, view, notify)


def _interpreted(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    reading: GrammarReading,
    readings: Sequence[Reading],
) -> Bound | Outcome:
    """The 'interpret' stage: the first tree the schema binds, or the decline or question back."""
    from core.keyword.bind import Ambiguous

    with trace.stage("interpret") as st:
        near = request.after_rejection or settings.clarify == "always"
        try:
            bound = bind_first(reading, lex, request.today or dt.date.today(), readings, near)
        except Decline as d:
            st.outputs = {"abstain": d.reason, "not_understood": list(d.words)}
            abstain = Abstain(d.reason, d.understood, d.words, suggestion(lex, reading))
            return _failed(
                db,
                request,
                trace,
                "keyword_abstain",
                abstain_text(abstain),
                interpretation="; ".join(d.understood),
            )
        except Ambiguous as amb:
            st.outputs = {"ambiguous": amb.words, "readings": [sense_label(s) for s in amb.senses]}
            return _asked(db, request, trace, amb.words, amb.senses, f"'{amb.words}'")
        except AmbiguousDate as amb:
            st.outputs = {"ambiguous": amb.words}
            options = amb.refs[:4]
            ambiguity = Ambiguity(
                words=amb.words,
                kind="AmbTableColumn",
                readings=tuple(Reading(words=amb.words, table=o.table, column=o.column) for o in options),
                labels=tuple(f"{o.table} {o.column.replace('_', ' ')}" for o in options),
            )
            return _clarify(db, request, trace, ambiguity)
        st.outputs = {"reading": describe(bound.query), "tables": list(bound.query.tables)}
    return bound


def _joined(db: Database, request: Request, trace: Trace, query: Query) -> View | Outcome:
    """The 'view' stage: the join tree over the query's tables, or a decline when one is left out."""
    with trace.stage("view") as st:
        view = build_view(db, list(query.tables), question=request.question)
        if query.target:
            view = required(view, query.target)
        st.outputs = {"tables": view.tables, "joins": view.explain(), "fans_out": view.fans_out}
        missing = [t for t in query.tables if t.lower() not in {x.lower() for x in view.tables}]
    if not missing:
        return view
    return _failed(
        db,
        request,
        trace,
        "keyword_abstain",
        f"Keyword mode could not join {', '.join(missing)} to the other tables the question names, "
        "so it did not answer. Try asking about fewer things at once.",
        interpretation=describe(query),
    )


def _doubted(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    bound: Bound,
    view: View,
) -> Outcome | None:
    """The 'confidence' stage: None when sure enough; else the question back or the decline."""
    from core.keyword.confidence import judge

    query, threshold = bound.query, settings.keyword_min_confidence
    interpretation = describe(query)
    with trace.stage("confidence") as st:
        try:
            confidence = judge(query, bound.placed(), view, lex, request.question, bound.doubts)
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
        st.outputs = confidence.trace(threshold)
    if confidence.score >= threshold:
        return None
    ask = confidence.askable(threshold)
    if ask is not None:
        return _asked(db, request, trace, ask.words, ask.options, interpretation)
    says = confidence.weakest.says if confidence.weakest is not None else "it is not sure of the reading"
    return _failed(
        db, request, trace, "keyword_abstain", doubt_text(query, says), interpretation=interpretation
    )


def _ran(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    query: Query,
    view: View,
    notify: Callable[[str], None],
) -> Outcome:
    """The 'compile' stage and the run: the answer, or a decline when it cannot be written or
    finds nothing (a reading that finds no rows is shown, not answered as none)."""
    interpretation = describe(query)
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
    result = run.result
    if result is not None and (
        not result.rows or (len(result.rows) == 1 and all(v is None for v in result.rows[0]))
    ):
        return _failed(
            db,
            request,
            trace,
            "keyword_abstain",
            doubt_text(query, EMPTY_DOUBT),
            interpretation=interpretation,
            sql=run.sql,
        )
    if result is not None and query.ties and len(result.rows) > 1:
        interpretation += f" ({len(result.rows)} tie for the first place: all are shown.)"
    return outcome_of(
        run,
        question=request.question,
        database=db.name,
        trace=trace,
        mode="keyword",
        interpretation=interpretation,
    )


def bind_first(
    reading: GrammarReading, lex: Lexicon, today: dt.date, readings: Sequence[Reading], near: bool
) -> Bound:
    """The first of the grammar's trees the schema binds, as keyword mode computes it; the first
    tree's reason when none does."""
    from core.keyword.bind import bind

    if reading.tree is None:
        raise unread(reading, lex)
    first: Decline | None = None
    for tree in reading.trees:
        try:
            bound = bind(reading.with_tree(tree), lex, today, readings, near=near)
            if bound.computable:
                raise Decline(f"it asks for {bound.computable}, which keyword mode does not compute")
            return bound
        except Decline as d:
            first = first or d
    assert first is not None
    said = next((x for x in reading.lexemes if x.cat in ("unsupported", "share", "neg")), None)
    if said is not None:  # the reason is the wording keyword mode does not compute
        what = {"share": "a ratio", "neg": "a negation"}.get(said.cat, said.arg)
        reason = f"it asks for {what} ('{said.text}'), which keyword mode does not compute here"
        raise Decline(reason, [said.text], first.understood)
    raise first


def unread(reading: GrammarReading, lex: Lexicon) -> Decline:
    """Why the grammar placed no reading: wording keyword mode does not compute, else the words
    that name nothing in this database, else how the words fit together."""
    from core.keyword.bind import parts, understood

    for x in reading.lexemes:
        if x.cat == "unsupported":
            return Decline(f"it asks for {x.arg} ('{x.text}'), which keyword mode does not compute", [x.text])
        if x.cat == "share":
            return Decline(f"it asks for a ratio ('{x.text}'), which keyword mode does not compute", [x.text])
    found = [p for x in reading.lexemes if x.cat == "np" for p in parts(reading, lex, x.phrase)]
    placed = [Mention(p.start, p.end, p.words, p.senses) for p in found if p.senses]
    unknown = [p.words for p in found if not p.senses]
    if unknown:
        return Decline("some words matched nothing in this database", unknown, understood(placed))
    negated = [x.text for x in reading.lexemes if x.cat == "neg"]
    if negated:
        return Decline(
            f"it asks for a negation ('{negated[0]}') keyword mode could not place",
            negated,
            understood(placed),
        )
    return Decline("it could not tell how the words fit together", [], understood(placed))


def placed_words(reading: GrammarReading, lex: Lexicon) -> list[str]:
    """What each phrase of the question names, best reading first ('clients' → client)."""
    from core.keyword.bind import parts, understood

    found = [p for x in reading.lexemes if x.cat == "np" for p in parts(reading, lex, x.phrase)]
    return understood([Mention(p.start, p.end, p.words, p.senses) for p in found if p.senses])


def suggestion(lex: Lexicon, reading: GrammarReading) -> str:
    """One question keyword mode answers on this schema, in the data's words — the count of a
    thing the question named, else of the table most others join to — checked by reading it."""
    from core.keyword.bind import SchemaNames, parts
    from core.keyword.grammar import read

    named = {
        s.table: p.words  # the asker's own word for it
        for x in reading.lexemes
        if x.cat == "np"
        for p in parts(reading, lex, x.phrase)
        for s in p.senses[:1]
        if s.kind == "table"
    }
    graph = lex.db.graph
    central = sorted(lex.catalog.tables, key=lambda t: (-len(graph.neighbors(t.name)), t.name))
    for table in dict.fromkeys([*named, *(t.name for t in central[:3])]):
        question = f"How many {plural(named.get(table, name_words(table)).lower())} are there?"
        try:
            bind_first(read(question, SchemaNames(lex)), lex, dt.date.today(), (), False)
        except (Decline, AmbiguousDate, Exception):
            continue
        return f"Try a question in the data's words, e.g. '{question}'."
    return ""


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


def _continue(
    db: Database,
    lex: Lexicon,
    ctx: Context,
    shape: Shape,
    matching: Matching,
    history: Sequence[Turn],
    settings: EngineSettings,
) -> FollowUp | Abstain | None:
    """The follow-up applied to keyword mode's last reading; an Abstain when it cannot be; None
    when the message reads as a question of its own after all."""
    previous = _previous(db, lex, ctx.today, history, settings)
    on_its_own = self_contained(shape, matching)
    if previous is None:
        if on_its_own:
            return None
        return Abstain(reason="the last answer in this thread is not one keyword mode can continue")
    try:
        return apply(previous, shape, matching, ctx)
    except Decline as d:
        if on_its_own:
            return None
        return Abstain(reason=d.reason, understood=tuple(understood_words(matching)), not_understood=d.words)


def _previous(
    db: Database, lex: Lexicon, today: dt.date, history: Sequence[Turn], settings: EngineSettings
) -> Plan | None:
    """Keyword mode's reading of the last answered turn: the thread's questions read again,
    oldest first, each follow-up on top of the reading before it — trusted only when it gives
    the SQL the turn was answered with (not an LLM's answer, not one a clarification settled)."""
    ctx = Context(lex, today)
    plan: Plan | None = None
    for turn in history[-MAX_TURNS:]:
        shape, matching = _match(turn.question, lex, ())
        candidates: list[Plan] = []
        if plan is not None and looks_like_follow_up(shape, matching):
            with contextlib.suppress(Decline):
                candidates.append(apply(plan, shape, matching, ctx).plan)
        alone = make_plan(shape, matching, ctx)
        if isinstance(alone, Plan):
            candidates.append(alone)
        want = " ".join(turn.sql.split())
        plan = next(
            (
                c
                for c in candidates
                if want and " ".join(_final_sql(db, c, settings, turn.question).split()) == want
            ),
            None,
        )
    return plan


def _final_sql(db: Database, plan: Plan, settings: EngineSettings, question: str) -> str:
    """The SQL keyword mode would run for `plan` (compiled, expanded, guarded), without running it."""
    view = build_view(db, list(plan.query.tables), question=question)
    if {t.lower() for t in plan.query.tables} - {t.lower() for t in view.tables}:
        return ""
    dialect = db.catalog.dialect
    try:
        expanded = expand(compile_query(plan.query, view, lexicon(db), dialect), view, dialect)
    except (CompileError, ExpandError):
        return ""
    verdict = check_for(db, expanded, settings)
    return verdict.sql if verdict.allowed else ""


def _clarify(
    db: Database, request: Request, trace: Trace, plan: Ambiguity, interpretation: str = ""
) -> Outcome:
    what = "value" if plan.kind == "AmbValue" else "column"
    clarification = Clarification(
        question=f"Which {what} does '{plan.words}' mean?",
        options=tuple(Option(label, r.encode()) for label, r in zip(plan.labels, plan.readings, strict=True)),
        kind=plan.kind,
    )
    return Outcome(
        status="clarify",
        question=request.question,
        database=db.name,
        mode="keyword",
        clarification=clarification,
        interpretation=interpretation or f"'{plan.words}' can be read in {len(plan.readings)} ways",
        trace=trace,
    )


def _asked(
    db: Database, request: Request, trace: Trace, words: str, options: Sequence[Sense], reading: str
) -> Outcome:
    """Ask which of a phrase's close readings was meant (the chosen one first)."""
    kind: Literal["AmbValue", "AmbTableColumn"] = (
        "AmbValue" if options[0].kind == "value" else "AmbTableColumn"
    )
    ambiguity = Ambiguity(
        words=words,
        kind=kind,
        readings=tuple(s.reading(words) for s in options),
        labels=tuple(sense_label(s) for s in options),
    )
    return _clarify(
        db, request, trace, ambiguity, f"{reading} ('{words}' can be read in {len(options)} ways)"
    )


def _failed(
    db: Database,
    request: Request,
    trace: Trace,
    kind: ErrorKind,
    message: str,
    *,
    interpretation: str = "",
    sql: str = "",
) -> Outcome:
    return Outcome.failed(
        request.question,
        kind,
        message,
        database=db.name,
        mode="keyword",
        interpretation=interpretation,
        sql=sql,
        trace=trace,
    )
