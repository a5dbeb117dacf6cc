"""When to ask back, and what a person's answer does (Sphinteract Algorithm 1, adapted).

- Before answering (`before_generating`, LLM mode): with `clarify: auto` only when the engine's
  own candidates compete (core/clarify/candidates.py) — a simple question costs nothing extra, an
  ambiguous one at most one LLM call; with `always` the SRA round runs on every question; `off`
  never asks. Keyword mode asks about its own tied readings (core/keyword) and `settle` applies
  the same settings to it.
- After 👎 (`after_rejection`): the rejected SQL joins the transcript and one SRA round asks what
  to change (LLM), or, with no LLM, keyword mode asks about the nearest other reading of a word.
- Every round obeys the same rules: at most `clarify_max_rounds` questions per question, never one
  already asked (a repeat is answered with the engine's best reading instead).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import replace

import sqlglot
from rapidfuzz import fuzz
from sqlglot import exp

from core.answer import Clarification, Option, Outcome
from core.clarify.candidates import Candidates, find_candidates, pin
from core.clarify.sra import summarize_review_ask
from core.clarify.transcript import FEEDBACK, Exchange, Transcript, normalize, options_key
from core.database import Database
from core.joins import View, view_ddl
from core.keyword.readings import Reading, decode_all
from core.link import LinkError, Linking, link
from core.llm import LLM, LLMError
from core.pipeline import Request, sample_rows
from core.retrieval import Keywords, Retrieval
from core.retrieve import retrieve
from core.settings import EngineSettings
from core.trace import Trace
from core.understand import Understanding
from core.view import build_view

log = logging.getLogger(__name__)

MAX_SETTLED = 6  # readings taken without asking, per question (one per ambiguous word)
WORD_MATCH = 85  # rapidfuzz ratio for one typed word to match an option's word


def transcript_of(request: Request) -> Transcript:
    return Transcript.of(request.clarifications, request.rejected_sql)


def may_ask(settings: EngineSettings, transcript: Transcript) -> bool:
    return settings.clarify != "off" and transcript.rounds < settings.clarify_max_rounds


# ---------------------------------------------------------------------------------------------
# before answering (LLM mode)


def before_generating(
    request: Request,
    settings: EngineSettings,
    llm: LLM,
    *,
    db: Database,
    understanding: Understanding,
    retrieval: Retrieval,
    linking: Linking,
    view: View,
    samples: Sequence[tuple] = (),
    trace: Trace,
) -> Clarification | None:
    """A clarifying question to ask instead of answering, or None to go on and write the SQL."""
    transcript = transcript_of(request)
    if not may_ask(settings, transcript):
        return None
    candidates = [
        c
        for c in find_candidates(
            retrieval,
            linking,
            view,
            db.catalog,
            main_task="; ".join(understanding.main_task),
            pinned=decode_all(request.choices),
        )
        if not transcript.already_asked(c.question(), c.key)
    ]
    if settings.clarify == "auto" and not any(c.strong for c in candidates):
        return None  # no competition in the data: never slow a plain question down
    with trace.stage("clarify") as st:
        st.outputs = {"candidates": [_describe(c) for c in candidates]}
        try:
            result = summarize_review_ask(
                request.question, view_ddl(view, list(samples)), transcript, candidates, llm
            )
        except LLMError as exc:  # asking is a courtesy: a failed round must not cost the answer
            log.warning("clarification round failed: %s", exc)
            st.outputs["error"] = str(exc)
            return None
        st.outputs.update(result.trace())
    return result.clarification


def _describe(c: Candidates) -> str:
    return f"{c.kind} '{c.words}': " + " | ".join(ch.detail or ch.label for ch in c.choices)


# ---------------------------------------------------------------------------------------------
# keyword mode: its own clarifications, held to the settings


def keyword_answer(
    db: Database,
    request: Request,
    settings: EngineSettings,
    trace: Trace,
    run: Callable[[Database, Request, EngineSettings, Trace], Outcome],
) -> Outcome:
    """Keyword mode (`run` = core.keyword.answer_keyword) with the clarification rules applied.

    Answers given in the person's own words that matched no option are added to the question, so
    keyword mode reads them ('signed up' picks the signup date); a question it would ask again,
    one past the round limit, or any question when clarifying is off is answered with its best
    reading instead, and the answer says which reading it took.
    """
    own = [e.answer for e in request.clarifications if e.own_words and e.kind != FEEDBACK and e.answer]
    asked = request
    if own:
        asked = replace(request, question=f"{request.question} ({'; '.join(own)})")
    outcome = run(db, asked, settings, trace)
    if own and outcome.status == "error":
        outcome = run(db, request, settings, trace)  # the words did not help: read the question alone
        asked = request
    outcome.question = request.question
    return settle(outcome, asked, settings, lambda r: run(db, r, settings, trace), trace)


def settle(
    outcome: Outcome,
    request: Request,
    settings: EngineSettings,
    rerun: Callable[[Request], Outcome],
    trace: Trace | None = None,
) -> Outcome:
    """Answer instead of asking when the settings say so, taking the first (best) reading."""
    taken: list[str] = []
    question = outcome.question
    for _ in range(MAX_SETTLED):
        c = outcome.clarification
        if outcome.status != "clarify" or c is None or not c.options:
            break
        transcript = transcript_of(request)
        if settings.clarify == "off":
            why = "clarifying questions are off"
        elif transcript.rounds >= settings.clarify_max_rounds:
            why = f"after {transcript.rounds} questions I stopped asking"
        elif transcript.already_asked(
            c.question, options_key(o.value for o in c.options), [o.label for o in c.options]
        ):
            why = "you were asked this already"
        else:
            break
        first = c.options[0]
        taken.append(f"I took {first.label} ({why})")
        if trace is not None:
            with trace.stage("clarify") as st:
                st.outputs = {"not_asked": c.question, "took": first.label, "why": why}
        request = replace(request, choices=(*request.choices, first.value))
        outcome = rerun(request)
        outcome.question = question
    if taken and outcome.status == "answer":
        outcome.interpretation = " ".join([outcome.interpretation, *(f"{t}." for t in taken)]).strip()
    return outcome


# ---------------------------------------------------------------------------------------------
# after 👎


NOTHING_TO_ASK = (
    "I found nothing else to ask about this question. Try rephrasing it with the names of the "
    "things you mean (the column, the value), or use the Show SQL button to see what I ran."
)


def after_rejection(
    db: Database,
    question: str,
    transcript: Transcript,
    settings: EngineSettings,
    llm: LLM | None,
) -> Outcome:
    """The person rejected the last answer (its SQL is in `transcript.rejected_sql`): ask one
    clarifying question about it (status "clarify"), or say there is nothing left to ask (status
    "error", error_kind "clarify_none")."""
    trace = Trace(question=question, database=db.name)
    mode = "llm" if llm is not None else "keyword"
    none = Outcome(
        status="error",
        question=question,
        database=db.name,
        mode=mode,
        error=NOTHING_TO_ASK,
        error_kind="clarify_none",
        trace=trace,
    )
    if not may_ask(settings, transcript):
        with trace.stage("clarify") as st:
            st.outputs = {"stopped": "clarifying is off or the question limit is reached"}
        return none
    if llm is None:
        return _keyword_alternatives(db, question, transcript, settings, trace, none)
    try:
        clarification = _llm_round(db, question, transcript, settings, llm, trace)
    except LLMError as exc:
        log.warning("clarification after a rejection failed: %s", exc)
        return _keyword_alternatives(db, question, transcript, settings, trace, none)
    if clarification is None:
        return none
    return Outcome(
        status="clarify",
        question=question,
        database=db.name,
        mode="llm",
        clarification=clarification,
        trace=trace,
    )


def _keyword_alternatives(
    db: Database, question: str, transcript: Transcript, settings: EngineSettings, trace: Trace, none: Outcome
) -> Outcome:
    """No LLM: keyword mode asks about the nearest other reading of a word of the question."""
    from core.pipeline import answer

    request = Request(
        question,
        choices=transcript.choices,
        clarifications=transcript.exchanges,
        rejected_sql=transcript.rejected_sql,
        ask_alternatives=True,
    )
    outcome = answer(db, request, settings, None)
    for stage in outcome.trace.stages:
        trace.stages.append(stage)
    if outcome.status == "clarify" and outcome.clarification is not None:
        outcome.trace = trace
        return outcome
    none.mode = "keyword"
    return none


def _llm_round(
    db: Database, question: str, transcript: Transcript, settings: EngineSettings, llm: LLM, trace: Trace
) -> Clarification | None:
    """One SRA round about a rejected answer, over the tables the question and the SQL touched."""
    catalog = db.catalog
    readings = decode_all(transcript.choices)
    with trace.stage("retrieve") as st:
        retrieval = pin(retrieve(question, Keywords(), db), readings)
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
        view = build_view(db, tables)
        samples = sample_rows(db, view, settings.sample_rows)
        st.outputs = {"tables": view.tables, "joins": view.explain()}
    with trace.stage("clarify") as st:
        candidates = [
            c
            for c in find_candidates(retrieval, linking, view, catalog, pinned=readings)
            if not transcript.already_asked(c.question(), c.key)
        ]
        st.outputs = {"candidates": [_describe(c) for c in candidates]}
        result = summarize_review_ask(question, view_ddl(view, samples), transcript, candidates, llm)
        st.outputs.update(result.trace())
    return result.clarification


def sql_tables(statements: Sequence[str], catalog) -> list[str]:  # type: ignore[no-untyped-def]
    """Tables of the catalog that the (rejected) SQL statements read."""
    known = {t.name.lower(): t.name for t in catalog.tables}
    out: list[str] = []
    for sql in statements:
        try:
            tree = sqlglot.parse_one(sql, dialect=catalog.dialect)
        except sqlglot.errors.ParseError:
            continue
        for t in tree.find_all(exp.Table):
            name = known.get(t.name.lower())
            if name and name not in out:
                out.append(name)
    return out


# ---------------------------------------------------------------------------------------------
# the person's answer


def exchange_for(
    clarification: Clarification,
    *,
    option: int | None = None,
    own_words: str = "",
    match_options: bool = False,
) -> Exchange:
    """The transcript entry for an answer: a chosen option, or the person's own words ("Other…").

    With `match_options` (keyword mode, where words are not read by an LLM) own words that point
    at exactly one option ('the supplier' → "suppliers city is Lyon") count as that option.
    """
    labels = tuple(o.label for o in clarification.options)
    key = options_key(o.value for o in clarification.options)
    base = Exchange(
        question=clarification.question, answer="", kind=clarification.kind, options=labels, key=key
    )
    if option is not None:
        chosen = clarification.options[option]
        return replace(base, answer=chosen.label, value=chosen.value)
    words = " ".join(own_words.split())
    matched = match_words(words, clarification.options) if match_options else None
    return replace(base, answer=words, value=matched.value if matched else "")


def match_words(text: str, options: Sequence[Option]) -> Option | None:
    """The one option the typed words point at, by the words that tell the options apart."""
    typed = [w for w in normalize(text).split() if len(w) > 2]
    if not typed or not options:
        return None
    words = [set(_option_words(o)) for o in options]
    common = set.intersection(*words) if words else set()
    scores = []
    for own in words:
        distinct = own - common
        scores.append(sum(1 for t in typed if any(fuzz.ratio(t, d) >= WORD_MATCH for d in distinct)))
    best = max(scores)
    if best == 0 or scores.count(best) > 1:
        return None
    return options[scores.index(best)]


def _option_words(option: Option) -> list[str]:
    words = normalize(option.label).split()
    reading = Reading.decode(option.value)
    if reading is not None:
        for part in (reading.table, reading.column or "", reading.value or ""):
            words.extend(normalize(part).split())
    return [w for w in words if len(w) > 2]
