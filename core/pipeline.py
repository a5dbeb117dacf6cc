"""The question pipeline, and the only place that orchestrates one: it checks the question, picks
the mode, runs it, and asks back (core/clarify/policy.py) as one of its steps.

- LLM mode (issue 13): retrieve (the question's own words, no LLM) → scope (the whole schema when
  it fits `schema_token_budget`, else recall-first pruning with one linking call) → recipe (the
  join reasoner's view as a hint CTE, and value hints) → generate (one call: a plan and two
  candidates) → expand → guard → execute, each candidate → select: they agree, or one answers —
  done; they disagree — a judge call picks one, or the person is asked with both readings;
  none answers — revise with every candidate's problem. The happy path is one LLM call (two
  above the budget); a judge or a revision adds one.
- A reading chosen from such a question (`core/clarify/choice.py`) runs its own query again:
  guard → execute, no LLM.
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
from collections.abc import Sequence
from dataclasses import replace

import sqlalchemy as sa

from core.answer import Clarification, ErrorKind, Mode, Outcome
from core.clarify.candidates import pin
from core.clarify.choice import Reading, already_asked, chosen_sql, two_readings
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
from core.conversation import Turn
from core.database import Database
from core.db_errors import public_error
from core.definitions.expand import shown_sql
from core.definitions.model import Definition, Definitions
from core.definitions.prompt import definitions_text
from core.definitions.retrieve import pick
from core.definitions.teach import learned_reading
from core.definitions.used import used
from core.examples import most_similar
from core.execute import ResultSet
from core.generate import Candidate, Context, generate, revise
from core.guard import UnknownDialectError, normalize_dialect
from core.hints import hints_text, value_hints
from core.joins import View
from core.judge import Shown, judge
from core.keyword import answer_keyword
from core.keyword.readings import decode_all
from core.link import LinkError, Linking, link
from core.llm import LLM, LLMError, LLMRefused
from core.request import MAX_QUESTION_CHARS, Request, StageCallback
from core.retrieval import Keywords
from core.retrieve import guess_keywords, retrieve
from core.run import Run, outcome_of, run_over_view, run_stored
from core.schema_text import ASKBASE, ddl_text, schema_text
from core.scope import scope
from core.select import Selection, Tried, select
from core.settings import EngineSettings
from core.trace import Trace
from core.understand import Understanding, understand
from core.view import build_view, recipe_text, recipe_view, sample_rows

log = logging.getLogger(__name__)

UNFIXABLE = ("connection", "timeout", "permission")  # failures rewriting the SQL will not fix
NO_LLM_NOTE = (
    " With an LLM configured (set OPENAI_API_KEY, and OPENAI_BASE_URL for Azure, vLLM or "
    "Ollama) Askbase can answer free-form questions like this one."
)


def answer(db: Database, request: Request, settings: EngineSettings, llm: LLM | None) -> Outcome:
    """Answer with the LLM; without one, or when it fails (and `fallback_to_keyword` is on), in
    keyword mode (core/keyword), labelled so; the failed LLM attempt stays in the trace."""
    trace = Trace(question=request.question, database=db.name)

    def failed(kind: ErrorKind, message: str) -> Outcome:
        return Outcome.failed(request.question, kind, message, database=db.name, trace=trace)

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
            f"'{db.name}'. Supported: SQLite, PostgreSQL, MySQL/MariaDB, DuckDB, Snowflake, BigQuery, "
            "Databricks, Trino, Redshift.",
        )
    request = _with_learned_readings(request, trace)
    transcript = request.transcript
    if transcript.exchanges or transcript.rejected_sql:
        with trace.stage("clarified") as st:  # read back when this answer gets a 👎 (core/clarify)
            st.outputs = {"transcript": transcript.to_json()}

    if request.after_rejection:
        return _after_rejection(db, request, settings, llm, trace)
    chosen = chosen_sql(transcript)
    if chosen is not None:  # the person chose between two readings: run that one's query
        return _chosen(db, request, chosen, settings, trace)
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
    question = request.question

    if settings.understand == "separate":
        notify("understand")
        with trace.stage("understand") as st:
            asked = with_answers(question, transcript.exchanges)
            understanding = understand(asked, request.history, llm, catalog.description)
            st.outputs = {
                "question": understanding.question,
                "main_task": list(understanding.main_task),
                "sub_tasks": list(understanding.sub_tasks),
                "objects": list(understanding.keywords.objects),
                "values": list(understanding.keywords.values),
            }
    else:  # folded into the writer's reply: the question's own words are the keywords
        understanding = Understanding(question=question, keywords=_own_words(question, request.history))
    notify("retrieve")
    with trace.stage("retrieve") as st:
        # the person's clarification choices are the only readings of their words
        found = retrieve(understanding.question, understanding.keywords, db, every_object_as_value=True)
        retrieval = pin(found, decode_all(transcript.choices))
        st.outputs = retrieval.summary()
    notify("link")
    with trace.stage("scope") as st:
        try:
            scoped = scope(db, retrieval, understanding, settings, llm)
        except LinkError as exc:
            st.outputs = {"error": str(exc)}
            return Outcome.failed(
                question,
                "link",
                f"I could not tell which data the question is about: {exc}. "
                "Try naming what you want counted or listed, e.g. 'clients' or 'payments'.",
                database=db.name,
                trace=trace,
            )
        st.outputs = scoped.trace()
    notify("view")
    with trace.stage("recipe") as st:
        recipe = recipe_view(db, scoped.named, understanding.question, settings.recipe_max_tables)
        hints = value_hints(
            db,
            retrieval,
            understanding.keywords,
            settings,
            named=scoped.named,
            visible=scoped.tables,
            question=understanding.question,
        )
        style = replace(ASKBASE, sample_rows=settings.sample_rows)
        described = scoped.described | {(h.table.lower(), h.column.lower()) for h in hints.hints}
        schema = schema_text(db, settings, style, None if scoped.whole else scoped.tables, described)
        st.outputs = {
            "recipe": recipe.explain() if recipe is not None else None,
            "hints": [f"{h.typed!r} → {h.table}.{h.column} = {h.value!r}" for h in hints.hints],
            "ties": [
                f"{t.typed!r}: " + ", ".join(f"{h.table}.{h.column}" for h in t.hints) for t in hints.ties
            ],
            "not_hinted": list(hints.dropped),
        }
    picked = _picked(question, request, trace)
    clarification = before_generating(
        question,
        transcript,
        settings,
        llm,
        catalog=catalog,
        understanding=understanding,
        retrieval=retrieval,
        linking=Linking(tables=scoped.named),
        view=recipe,
        schema=schema,
        trace=trace,
    )
    if clarification is not None:
        return _asking(db, question, clarification, "llm", trace)
    ctx = Context(
        schema=schema,
        recipe=recipe_text(recipe, catalog, catalog.dialect) if recipe is not None else "",
        recipe_name=recipe.name if recipe is not None else "",
        values=hints_text(hints),
        examples=most_similar(question, request.examples, settings.few_shot_examples),
        history=request.history,
        dialect=catalog.dialect,
        today=request.today,
        clarifications=describe(transcript.exchanges, transcript.rejected_sql),
        definitions=definitions_text(picked),
    )
    notify("generate")
    with trace.stage("generate") as st:
        draft = generate(question, ctx, llm)
        st.outputs = {
            "task": draft.task,
            "plan": draft.plan,
            "candidates": [_described(c) for c in draft.candidates],
        }
        if draft.question:
            st.outputs["question"] = draft.question
        if draft.cut:
            st.outputs["cut"] = "a candidate cut off at the token limit was dropped"
    defined = request.definitions
    tried = [
        Tried(c, run_over_view(db, c.sql, recipe, settings, trace, notify, defined)) for c in draft.candidates
    ]
    with trace.stage("select") as st:
        selection = select(tried)
        st.outputs = selection.trace()
    chosen = selection.chosen
    if selection.decision == "disagree":
        settled = _settle(db, question, tried, transcript, settings, llm, trace, notify)
        if isinstance(settled, Clarification):
            return _asking(db, question, settled, "llm", trace)
        chosen = settled
    elif selection.decision in ("failed", "vacuous"):
        chosen = _revised(db, question, ctx, recipe, selection, settings, llm, trace, notify, defined)
    run = chosen.run if chosen is not None else tried[0].run
    outcome = outcome_of(run, question=question, database=db.name, trace=trace, mode="llm", task=draft.task)
    if outcome.status == "answer":
        outcome = replace(outcome, assumptions=_assumptions(draft.assumed, tried, chosen))
    return _with_definitions(outcome, run, picked, catalog.dialect)


def _assumptions(assumed: str, tried: Sequence[Tried], chosen: Tried | None) -> tuple[str, ...]:
    """What the answer took for granted, said out loud: the writer's own 'Assumed:' line, and
    when the other candidate read the question otherwise, what that reading gives (when it is one
    figure, cheap to show)."""
    out = [f"Read {assumed}"] if assumed else []
    others = [t for t in tried if t.answers and t is not chosen and t.candidate.reading]
    if chosen is not None and others:
        result = others[0].run.result
        if result is not None and len(result.rows) == 1 and len(result.columns) == 1:
            value = result.rows[0][0]
            shown = (
                f"{value:,}" if isinstance(value, int | float) and not isinstance(value, bool) else str(value)
            )
            out.append(f"Reading it as {others[0].candidate.reading} gives {shown}")
    return tuple(out)


def _with_learned_readings(request: Request, trace: Trace) -> Request:
    """Readings remembered from clarifications ("Always read 'Singapore' as the city") that the
    question says, pinned as if chosen again: retrieval and keyword mode read the word that way and
    nothing asks about it. A choice made in this question's own transcript wins."""
    if not request.definitions:
        return request
    chosen = {r.words.casefold() for r in decode_all(request.transcript.choices)}
    learned = [
        r
        for p in pick(request.question, request.definitions)
        if p.why.startswith("said") and (r := learned_reading(p.definition)) is not None
        if r.words.casefold() not in chosen
    ]
    if not learned:
        return request
    with trace.stage("remembered readings") as st:
        st.outputs = {"pinned": [f"'{r.words}' → {r.table}.{r.column} = {r.value!r}" for r in learned]}
    transcript = request.transcript
    for r in learned:
        transcript = transcript.assuming(r.encode())
    return replace(request, transcript=transcript)


def _picked(question: str, request: Request, trace: Trace) -> tuple[Definition, ...]:
    """The definitions the question needs (never all of them), recorded in the trace."""
    if not request.definitions:
        return ()
    picks = pick(question, request.definitions)
    if picks:
        with trace.stage("definitions") as st:
            st.outputs = {"picked": [f"{p.definition.kind} '{p.definition.name}': {p.why}" for p in picks]}
    return tuple(p.definition for p in picks)


def _with_definitions(outcome: Outcome, run: Run, picked: Sequence[Definition], dialect: str) -> Outcome:
    """The answer says which definitions it used; Details shows their SQL (the trace)."""
    if outcome.status != "answer" or not (picked or run.expanded):
        return outcome
    using = used(run.sql, picked, run.expanded, dialect)
    if using:
        with outcome.trace.stage("used definitions") as st:
            st.outputs = {d.name: shown_sql(d) for d in using}
    return replace(outcome, using=using)


def _own_words(question: str, history: Sequence[Turn]) -> Keywords:
    """Keywords from the question's own words (no LLM); a follow-up borrows the last question's,
    since 'and only for 2024?' names nothing itself."""
    own = guess_keywords(question)
    if not history:
        return own
    before = guess_keywords(history[-1].question)
    return Keywords(
        objects=tuple(dict.fromkeys([*own.objects, *before.objects])),
        values=tuple(dict.fromkeys([*own.values, *before.values])),
    )


def _described(c: Candidate) -> dict[str, str]:
    out = {"label": c.label, "sql": c.sql}
    if c.reading:
        out["reading"] = c.reading
    return out


def _settle(
    db: Database,
    question: str,
    tried: Sequence[Tried],
    transcript: Transcript,
    settings: EngineSettings,
    llm: LLM,
    trace: Trace,
    notify: StageCallback,
) -> Tried | Clarification:
    """Two candidates returned different rows: the judge picks one, or — when the question itself
    has both readings — the person is asked, with each reading's result on its button."""
    pair = [t for t in tried if t.answers][:2]
    shown = [Shown(sql=t.run.sql, result=_result(t), note=_reading_note(t.candidate)) for t in pair]
    notify("judge")
    with trace.stage("judge") as st:
        tables = ddl_text(db, ASKBASE, sql_tables([t.run.sql for t in pair], db.catalog))
        try:
            verdict = judge(question, shown, tables, llm)
        except LLMError as exc:  # choosing is a courtesy: a failed call must not cost the answer
            log.warning("the judge call failed: %s", exc)
            st.outputs = {"error": str(exc), "took": pair[0].candidate.label}
            return pair[0]
        st.outputs = verdict.trace()
        chosen = pair[verdict.choice]
        if not verdict.ambiguous:
            return chosen
        clarification = two_readings(
            verdict.question,
            [Reading(verdict.readings[i], t.run.sql, _result(t)) for i, t in enumerate(pair)],
        )
        if clarification is None:
            st.outputs["not_asked"] = "the readings could not be shown as buttons"
        elif not may_ask(settings, transcript):
            st.outputs["not_asked"] = "clarifying is off or the question limit is reached"
        elif already_asked(clarification, transcript):
            st.outputs["not_asked"] = "asked already"
        else:
            return clarification
        return chosen


def _result(t: Tried) -> ResultSet:
    assert t.run.result is not None  # only candidates that ran are compared
    return t.run.result


def _reading_note(c: Candidate) -> str:
    return f"the writer's other reading: {c.reading}" if c.reading else ""


def _revised(
    db: Database,
    question: str,
    ctx: Context,
    recipe: View | None,
    selection: Selection,
    settings: EngineSettings,
    llm: LLM,
    trace: Trace,
    notify: StageCallback,
    definitions: Definitions | None = None,
) -> Tried:
    """No candidate answered: revise with every candidate's problem, a round at a time."""
    best = selection.chosen or selection.tried[-1]
    if selection.decision == "vacuous" and not settings.revise_on_empty:
        return best
    failures = [(t.candidate, _problem(t.run)) for t in selection.tried]
    stuck = any(t.run.error is not None and t.run.error.kind in UNFIXABLE for t in selection.tried)
    for round_no in range(0 if stuck else settings.max_revisions):
        notify("revise")
        with trace.stage("revise") as st:
            revised = revise(question, ctx, failures, llm)
            st.outputs = {"round": round_no + 1, "problems": [p for _, p in failures], "sql": revised.sql}
        attempt = Tried(revised, run_over_view(db, revised.sql, recipe, settings, trace, notify, definitions))
        if attempt.answers:
            return attempt
        if attempt.ran and any(_same_sql(revised.sql, c.sql) for c, _ in failures):
            return attempt  # the model holds that the empty result is the answer
        if attempt.ran or not best.ran:
            best = attempt
        if attempt.run.error is not None and attempt.run.error.kind in UNFIXABLE:
            break  # rewriting the SQL will not fix these
        failures = [(revised, _problem(attempt.run))]
    return best


def _same_sql(a: str, b: str) -> bool:
    return " ".join(a.lower().split()) == " ".join(b.lower().split())


def _problem(run: Run) -> str:
    """What the reviser is told about a run."""
    if run.unfit:
        return f"It could not be read: {run.unfit}"
    if run.refused:
        return f"The query was refused because it {run.refused}. Only one read-only SELECT is allowed."
    if run.error is not None:
        return f"Running it failed with this error: {run.error.message}"
    if run.result is not None and run.result.vacuous:
        got = "no rows" if run.result.empty else "only zero or NULL"
        return (
            f"It ran but returned {got}. Check the filters against the stored values and the join "
            "semantics; if that is truly the right answer, return the same query unchanged."
        )
    return ""


def _chosen(db: Database, request: Request, sql: str, settings: EngineSettings, trace: Trace) -> Outcome:
    """The person chose one of two readings: run its query (guarded again), write nothing new."""
    with trace.stage("chosen") as st:
        st.outputs = {"sql": sql, "answer": request.transcript.exchanges[-1].answer}
    run = run_stored(db, sql, settings, trace)
    return outcome_of(run, question=request.question, database=db.name, trace=trace, mode="llm")


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
        return Outcome.failed(
            request.question, "clarify_none", NOTHING_TO_ASK, database=db.name, mode=mode, trace=trace
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
