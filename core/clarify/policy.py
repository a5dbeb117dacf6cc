"""When to ask back, and what a person's answer does (Sphinteract Algorithm 1, adapted).

The steps the pipeline (core/pipeline.py) calls; none of them runs a stage of its own:

- Before writing SQL (`before_generating`, LLM mode): only with `clarify: always`, which runs the
  SRA round on every question. With `auto` (the default) LLM mode asks only after writing, when
  its two candidate queries return different rows and the judge says the question itself has
  both readings (core/clarify/choice.py): a prompt that invites questions invents ambiguities
  in clear questions, while results that differ are evidence. `off` never asks.
- Keyword mode asks about its own tied readings (core/keyword); `why_not_ask` applies the same
  settings to each of its questions, and the pipeline takes the first reading when it says so.
  Answers in the person's own words join the question (`with_own_words`).
- After 👎 (`ask_about_rejection`): the rejected SQL is in the transcript and one SRA round asks
  what to change (LLM); with no LLM the pipeline asks keyword mode for near readings.
- Every round obeys the same rules: at most `clarify_max_rounds` questions per question, never one
  already asked (a repeat is answered with the engine's best reading instead).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import sqlglot
from rapidfuzz import fuzz
from sqlglot import exp

from core.answer import Clarification, Option
from core.catalog import Catalog
from core.clarify.candidates import Candidates, find_candidates
from core.clarify.sra import summarize_review_ask
from core.clarify.transcript import FEEDBACK, Exchange, Transcript, normalize, options_key
from core.joins import View, view_ddl
from core.keyword.readings import Reading, decode_all
from core.link import Linking
from core.llm import LLM, LLMError
from core.retrieval import Retrieval
from core.settings import EngineSettings
from core.trace import Trace
from core.understand import Understanding

log = logging.getLogger(__name__)

MAX_SETTLED = 6  # readings taken without asking, per question (one per ambiguous word)
WORD_MATCH = 85  # rapidfuzz ratio for one typed word to match an option's word

NOTHING_TO_ASK = (
    "I found nothing else to ask about this question. Try rephrasing it with the names of the "
    "things you mean (the column, the value), or use the Show SQL button to see what I ran."
)


def may_ask(settings: EngineSettings, transcript: Transcript) -> bool:
    return settings.clarify != "off" and transcript.rounds < settings.clarify_max_rounds


# ---------------------------------------------------------------------------------------------
# before answering (LLM mode)


def before_generating(
    question: str,
    transcript: Transcript,
    settings: EngineSettings,
    llm: LLM,
    *,
    catalog: Catalog,
    understanding: Understanding,
    retrieval: Retrieval,
    linking: Linking,
    view: View | None,
    schema: str,
    trace: Trace,
) -> Clarification | None:
    """A clarifying question to ask instead of answering (`clarify: always`), or None to go on
    and write the SQL. `schema` is the text the writer will see; `view` the join recipe, if any."""
    if settings.clarify != "always" or not may_ask(settings, transcript):
        return None
    candidates = _unasked(
        find_candidates(
            retrieval,
            linking,
            view,
            catalog,
            main_task="; ".join(understanding.main_task),
            pinned=decode_all(transcript.choices),
        ),
        transcript,
    )
    with trace.stage("clarify") as st:
        st.outputs = {"candidates": [_describe(c) for c in candidates]}
        try:
            result = summarize_review_ask(question, schema, transcript, candidates, llm)
        except LLMError as exc:  # asking is a courtesy: a failed round must not cost the answer
            log.warning("clarification round failed: %s", exc)
            st.outputs["error"] = str(exc)
            return None
        st.outputs.update(result.trace())
    return result.clarification


def _unasked(candidates: Sequence[Candidates], transcript: Transcript) -> list[Candidates]:
    return [c for c in candidates if not transcript.already_asked(c.question(), c.key)]


def _describe(c: Candidates) -> str:
    return f"{c.kind} '{c.words}': " + " | ".join(ch.detail or ch.label for ch in c.choices)


# ---------------------------------------------------------------------------------------------
# keyword mode: its own clarifications, held to the settings


def with_own_words(question: str, transcript: Transcript) -> str:
    """The question with the answers the person gave in their own words, for keyword mode.

    Keyword mode reads words, not an LLM's summary: 'signed up' typed as an answer picks the
    signup date when it is part of the question. Unchanged when there are no such answers.
    """
    own = [e.answer for e in transcript.exchanges if e.own_words and e.kind != FEEDBACK and e.answer]
    return f"{question} ({'; '.join(own)})" if own else question


def why_not_ask(clarification: Clarification, transcript: Transcript, settings: EngineSettings) -> str | None:
    """Why keyword mode's question is not asked but answered with its first (best) reading; None
    when it may be asked."""
    if settings.clarify == "off":
        return "clarifying questions are off"
    if transcript.rounds >= settings.clarify_max_rounds:
        return f"after {transcript.rounds} questions I stopped asking"
    options = clarification.options
    if transcript.already_asked(
        clarification.question, options_key(o.value for o in options), [o.label for o in options]
    ):
        return "you were asked this already"
    return None


# ---------------------------------------------------------------------------------------------
# after 👎


def ask_about_rejection(
    question: str,
    transcript: Transcript,
    llm: LLM,
    *,
    catalog: Catalog,
    retrieval: Retrieval,
    linking: Linking,
    view: View,
    samples: Sequence[tuple[Any, ...]] = (),
    trace: Trace,
) -> Clarification | None:
    """One SRA round about a rejected answer (its SQL ends `transcript.rejected_sql`), over the
    view of the tables the question and the rejected SQL touched. Raises LLMError."""
    with trace.stage("clarify") as st:
        candidates = _unasked(
            find_candidates(retrieval, linking, view, catalog, pinned=decode_all(transcript.choices)),
            transcript,
        )
        st.outputs = {"candidates": [_describe(c) for c in candidates]}
        result = summarize_review_ask(question, view_ddl(view, list(samples)), transcript, candidates, llm)
        st.outputs.update(result.trace())
    return result.clarification


def sql_tables(statements: Sequence[str], catalog: Catalog) -> list[str]:
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


def exchange_for_reply(
    clarification: Clarification, text: str, *, match_options: bool, limit: int
) -> Exchange:
    """A typed reply to a clarifying question (a chat message rather than a button): an option's
    number or its exact words pick it; anything else is the person's own words, at most `limit`
    characters."""
    options = clarification.options
    words = text.strip().rstrip(".").strip()
    if words.isdigit() and 1 <= int(words) <= len(options):
        return exchange_for(clarification, option=int(words) - 1)
    for i, option in enumerate(options):
        if normalize(option.label) == normalize(words):
            return exchange_for(clarification, option=i)
    return exchange_for(clarification, own_words=text[:limit], match_options=match_options)


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
