"""Answer a question in keyword mode: no LLM, every stage inspectable in the trace.

retrieve (phrases → tables, columns, stored values) → interpret (passes over the plan → a query,
or decline, or ask back) → view (the joins) → compile (SQL over the view) → expand → guard →
execute. Used when no LLM is configured and as the fallback when the LLM fails.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import logging
from collections.abc import Sequence

from core.answer import Outcome
from core.conversation import MAX_TURNS, Turn
from core.database import Database
from core.dictionary import name_words
from core.expand import ExpandError, expand
from core.joins import View
from core.keyword.bind import Ambiguous, Bound, SchemaNames, bind, parts, understood
from core.keyword.compile import CompileError, compile_query
from core.keyword.confidence import judge
from core.keyword.definitions import answer_defined, said_definitions, unplaced_definitions_text
from core.keyword.explain import abstain_text, describe, follow_up_text, sense_label
from core.keyword.first_reader import answer_first_reader
from core.keyword.followup import Continued, apply
from core.keyword.grammar import Reading as GrammarReading
from core.keyword.grammar import continues, read, read_change
from core.keyword.match import Lexicon, Mention, lexicon
from core.keyword.plan import Abstain, Ambiguity, AmbiguousDate, Decline, Query
from core.keyword.readings import Reading, decode_all
from core.keyword.replies import asked, clarify, failed
from core.keyword.stages import answer_of, answered, joined, judged
from core.plurals import plural
from core.request import Request
from core.run import check_for
from core.settings import EngineSettings
from core.trace import Trace
from core.view import build_view, required

log = logging.getLogger(__name__)


def answer_keyword(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """The keyword-mode outcome: an answer labelled with its reading, a clarifying question, or a
    refusal that says what was understood (status "error", error_kind "keyword_abstain")."""
    try:
        return _answer(db, request, settings, trace)
    except Exception as exc:  # a reader bug must cost one question, never the bot
        log.exception("keyword mode failed on %r", request.question)
        return failed(
            db,
            request,
            trace,
            "keyword_internal",
            f"Keyword mode failed on this question ({type(exc).__name__}). Try rephrasing it.",
        )


def _answer(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """A follow-up in a thread as a change to the last answer; any other question on its own."""
    if request.history:
        followed = _follow_up(db, request, settings, trace)
        if followed is not None:
            return followed
    return _answer_tree(db, request, settings, trace)


def _answer_tree(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome:
    """The question read by the grammar: lexicon → tree → binding → view → confidence → compile
    → run, each stage in the trace; any stage may end in a decline or a question back."""
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
            return failed(db, request, trace, "keyword_abstain", unplaced_definitions_text(named))
    with trace.stage("retrieve") as st:
        reading = read(request.question, SchemaNames(lex))
        st.outputs = {
            "lexemes": [f"{x.cat}{':' + x.arg if x.arg else ''} '{x.text}'" for x in reading.lexemes],
            "tree": repr(reading.tree) if reading.tree else "",
            "matches": placed_words(reading, lex),  # what the words name ('clients' → client)
            "pinned": [r.encode() for r in readings],
        }
    if reading.tree is None:  # until the grammar has a rule for it (issue 33)
        return answer_first_reader(db, request, settings, trace, lex)
    bound = _interpreted(db, request, settings, trace, lex, reading, readings)
    if isinstance(bound, Outcome):
        return bound
    return _settled(db, request, settings, trace, lex, bound, request.question, describe(bound.query))


def _settled(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    bound: Bound,
    words: str,
    interpretation: str,
) -> Outcome:
    """From a bound reading of `words` to the answer: the joins, the confidence, the SQL and the
    run, each of which may still decline or ask back."""
    view = joined(db, request, trace, bound.query, words, interpretation)
    if isinstance(view, Outcome):
        return view
    query, threshold = bound.query, settings.keyword_min_confidence
    doubt = judged(
        db,
        request,
        trace,
        query,
        threshold,
        interpretation,
        lambda: judge(query, bound.placed(), view, lex, words, bound.doubts),
    )
    if doubt is not None:
        return doubt
    return _ran(db, request, settings, trace, lex, bound.query, view, interpretation)


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
    with trace.stage("interpret") as st:
        near = request.after_rejection or settings.clarify == "always"
        try:
            bound = bind_first(reading, lex, request.today or dt.date.today(), readings, near)
        except Decline as d:
            st.outputs = {"abstain": d.reason, "not_understood": list(d.words)}
            abstain = Abstain(d.reason, d.understood, d.words, suggestion(lex, reading))
            return failed(
                db,
                request,
                trace,
                "keyword_abstain",
                abstain_text(abstain),
                interpretation="; ".join(d.understood),
            )
        except Ambiguous as amb:
            st.outputs = {"ambiguous": amb.words, "readings": [sense_label(s) for s in amb.senses]}
            return asked(db, request, trace, amb.words, amb.senses, f"'{amb.words}'")
        except AmbiguousDate as amb:
            st.outputs = {"ambiguous": amb.words}
            options = amb.refs[:4]
            ambiguity = Ambiguity(
                words=amb.words,
                kind="AmbTableColumn",
                readings=tuple(Reading(words=amb.words, table=o.table, column=o.column) for o in options),
                labels=tuple(f"{o.table} {o.column.replace('_', ' ')}" for o in options),
            )
            return clarify(db, request, trace, ambiguity)
        st.outputs = {"reading": describe(bound.query), "tables": list(bound.query.tables)}
    return bound


def _ran(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    lex: Lexicon,
    query: Query,
    view: View,
    interpretation: str,
) -> Outcome:
    """The SQL and the run: the answer, with every row tied for the first place said as a tie."""
    run = answered(db, request, settings, trace, lex, query, view, interpretation)
    if isinstance(run, Outcome):
        return run
    if run.result is not None and query.ties and len(run.result.rows) > 1:
        interpretation += f" ({len(run.result.rows)} tie for the first place: all are shown.)"
    return answer_of(db, request, trace, run, interpretation)


def bind_first(
    reading: GrammarReading, lex: Lexicon, today: dt.date, readings: Sequence[Reading], near: bool
) -> Bound:
    """The first of the grammar's trees the schema binds, as keyword mode computes it; the first
    tree's reason when none does."""
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
    found = [p for x in reading.lexemes if x.cat == "np" for p in parts(reading, lex, x.phrase)]
    return understood([Mention(p.start, p.end, p.words, p.senses) for p in found if p.senses])


def suggestion(lex: Lexicon, reading: GrammarReading) -> str:
    """One question keyword mode answers on this schema, in the data's words — the count of a
    thing the question named, else of the table most others join to — checked by reading it."""
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


def _follow_up(db: Database, request: Request, settings: EngineSettings, trace: Trace) -> Outcome | None:
    """A message in a thread read as a change to keyword mode's last answer (core/keyword/
    followup.py): the answer, or why it cannot be continued without an LLM; None when the message
    is a question of its own after all."""
    lex = lexicon(db)
    today = request.today or dt.date.today()
    said_on = continues(request.question)
    if not said_on and _stands_alone(request.question, lex, today):
        return None
    history = tuple(request.history)
    last = history[-1].question
    with trace.stage("follow-up") as st:
        st.outputs = {"previous": last}
        previous = _previous(db, lex, today, history, settings)
        try:
            if previous is None:
                raise Decline("the last answer in this thread is not one keyword mode can continue")
            continued = apply(previous, read_change(request.question, SchemaNames(lex)), lex, today)
        except Decline as d:
            st.outputs["declined"] = d.reason
            if not said_on and previous is None:
                return None
            text = follow_up_text(Abstain(reason=d.reason, not_understood=tuple(d.words)), last)
            return failed(db, request, trace, "keyword_abstain", text)
        except (Ambiguous, AmbiguousDate) as amb:
            st.outputs["declined"] = f"ambiguous '{amb.words}'"
            reason = f"it could not tell which column '{amb.words}' is about"
            text = follow_up_text(Abstain(reason=reason, not_understood=(amb.words,)), last)
            return failed(db, request, trace, "keyword_abstain", text)
        st.outputs["change"] = continued.change
    bound = continued.bound
    interpretation = f"Follow-up to '{last}' ({continued.change}): {describe(bound.query)}"
    words = continued.reading.question
    return _settled(db, request, settings, trace, lex, bound, words, interpretation)


def _stands_alone(question: str, lex: Lexicon, today: dt.date) -> bool:
    """The message is a question of its own: the grammar reads it whole and it names a table
    ('how many payments are there?', not 'what is the average amount?')."""
    reading = read(question, SchemaNames(lex))
    try:
        bound = bind_first(reading, lex, today, (), False)
    except (Decline, Ambiguous, AmbiguousDate):
        return False
    return any(m.sense is not None and m.sense.kind == "table" for m in bound.mentions)


def _previous(
    db: Database, lex: Lexicon, today: dt.date, history: Sequence[Turn], settings: EngineSettings
) -> Continued | None:
    """Keyword mode's reading of the last answered turn: the thread's questions read again,
    oldest first, each follow-up on top of the reading before it — trusted only when it gives
    the SQL the turn was answered with (not an LLM's answer, not one a clarification settled)."""
    names = SchemaNames(lex)
    last: Continued | None = None
    for turn in history[-MAX_TURNS:]:
        candidates: list[Continued] = []
        if last is not None:
            with contextlib.suppress(Decline, Ambiguous, AmbiguousDate):
                candidates.append(apply(last, read_change(turn.question, names), lex, today))
        reading = read(turn.question, names)
        with contextlib.suppress(Decline, Ambiguous, AmbiguousDate):
            bound = bind_first(reading, lex, today, (), False)
            candidates.append(Continued(reading.with_tree(bound.tree), bound))
        want = " ".join(turn.sql.split())
        last = next(
            (
                c
                for c in candidates
                if want and _final_sql(db, c.bound.query, settings, turn.question) == want
            ),
            None,
        )
    return last


def _final_sql(db: Database, query: Query, settings: EngineSettings, question: str) -> str:
    """The SQL keyword mode would run for `query` (compiled, expanded, guarded), without running it."""
    view = build_view(db, list(query.tables), question=question)
    if query.target:
        view = required(view, query.target)
    if {t.lower() for t in query.tables} - {t.lower() for t in view.tables}:
        return ""
    dialect = db.catalog.dialect
    try:
        expanded = expand(compile_query(query, view, lexicon(db), dialect), view, dialect)
    except (CompileError, ExpandError):
        return ""
    verdict = check_for(db, expanded, settings)
    return " ".join(verdict.sql.split()) if verdict.allowed else ""
