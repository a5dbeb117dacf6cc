"""What a failed question tells the person who asked, and what it tells the admins.

The engine's error text is written for whoever runs Askbase: "the API key was rejected (HTTP
401)", "set OPENAI_API_KEY". The person who asked in a chat cannot act on that. Here each
`ErrorKind` becomes (1) what went wrong in their terms and what *they* can do, (2) whether trying
again can help — only for transient failures: timeouts, rate limits, services that did not answer
— and (3) the admin note, if there is something to fix in the configuration, which goes to the log
and to the admins (bot/slack/admin_notes.py), never into the channel. Platform-neutral: the Slack and
Teams adapters both word failures through `failure_of`, each naming its own database commands
(`Commands`: Slack's `/ask db`, Teams' typed `db`) where the person is told to use them.

Who asked matters too: the engine's words name tables and columns ("could not place 'most' …
(tables: client, resource_pool, …)", "payment.paid_on"), which an analyst (`verified.analysts`)
can act on and anyone else cannot. `failure_of(…, analyst=False)` words a decline in the asker's
own words — what was understood, what was not, one question that would work — built from the
trace and the engine's text here, at the presentation layer, so keyword mode can change its
wording without the chats changing theirs. When the LLM key is missing or rejected, the person
is told that answers are limited right now (keyword mode only), and the admins what to fix.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.answer import ErrorKind, Outcome
from core.pipeline import NO_LLM_NOTE
from core.plurals import plural

INTERNAL = (
    "Something went wrong on my side while answering. Try again; if it keeps failing, tell the bot's admins."
)
BUSY = "I'm answering a lot of questions right now. Try again in a minute."
LLM_DOWN = "The language model I use to write SQL did not answer in time. Try again in a minute."
LLM_SETUP = (
    "Answers are limited right now: I can't use the language model that writes my SQL, so I can't "
    "answer questions like this one. The bot's admins have been told."
)
LIMITED = "Answers are limited right now (I read questions by their keywords only; the bot's admins know)."
CANT_GUESS = "I couldn't answer this without guessing"
NOT_JOINED = "I couldn't connect everything this question names. Try asking about fewer things at once."
NOT_WRITTEN = "I couldn't write a query for this question. Try a simpler one, in the data's words."
REJECTED_PREFIX = "The database rejected the query:"  # core/run.py, with the database's message
REJECTED = (
    "The database rejected the query I wrote for this question. Try rephrasing it; Details shows "
    "what happened."
)
LLM_UNUSABLE = "I couldn't write a query for this question. Try rephrasing it, or name the data you mean."
LLM_DECLINED = "The language model declined to write a query for this question. Try rephrasing it."
DATABASE_DOWN = "I can't reach the database '{db}' right now. Try again in a minute."
NOT_CONFIGURED = "The database '{db}' is not configured any more. Pick another one with {pick}."
ACCESS = (
    "You may not query '{db}' here. Use {list} to see the databases you may use here, or ask the "
    "bot's admins for access."
)
DIALECT = (
    "I can't check queries for the '{db}' database yet, so I run none on it. The bot's admins have been told."
)
KEYWORD_BUG = "Something went wrong while matching your words to the data. Try rephrasing the question."

# Failures that may go away by themselves: the same question may work in a minute.
TRANSIENT: frozenset[ErrorKind] = frozenset(
    {"timeout", "connection", "busy", "internal", "slack", "database"}
)
# The LLM endpoint's own words for a configuration problem (core/llm.py `_describe`).
LLM_CONFIG = re.compile(r"HTTP (400|401|403|404)|API key|No LLM is configured", re.I)
LLM_TRANSIENT = re.compile(r"timed out|could not be reached|HTTP 429|HTTP 5\d\d|unavailable", re.I)


@dataclass(frozen=True)
class Commands:
    """How people list and pick databases in a chat, in that chat's markup."""

    list_databases: str
    pick_database: str


SLACK = Commands(list_databases="`/ask db`", pick_database="`/ask db NAME`")


@dataclass(frozen=True)
class Failure:
    text: str  # for the person who asked: what went wrong and what they can do
    retry: bool  # transient: offer to try again
    admin_note: str = ""  # for the admins and the log: what to fix ("" when nothing)
    kind: ErrorKind | None = None


def _llm(outcome: Outcome) -> Failure:
    error = outcome.error
    if LLM_CONFIG.search(error):
        note = f"{error} Check OPENAI_API_KEY, OPENAI_BASE_URL and llm.model in the configuration."
        return Failure(LLM_SETUP, retry=False, admin_note=note, kind="llm")
    if LLM_TRANSIENT.search(error):
        return Failure(LLM_DOWN, retry=True, kind="llm")
    return Failure(LLM_UNUSABLE, retry=False, kind="llm")


def without_setup_advice(text: str) -> tuple[str, str]:
    """(the text without configuration advice, that advice) — the engine appends NO_LLM_NOTE when
    keyword mode could not answer and no LLM is configured."""
    if NO_LLM_NOTE.strip() and NO_LLM_NOTE.strip() in text:
        return text.replace(NO_LLM_NOTE.strip(), "").strip(), NO_LLM_NOTE.strip()
    return text, ""


LLM_FALLBACK = re.compile(
    r"^The LLM failed \((?P<why>.*?)\), so this was answered in keyword mode\.\s*", re.S
)


def failure_of(
    outcome: Outcome, commands: Commands = SLACK, *, analyst: bool = False, example: str = ""
) -> Failure:
    """How `outcome` (status "error") is told to the person, and to the admins; `commands`: how
    the chat it is told in lists and picks databases; `analyst`: the asker may see table and
    column names; `example`: a question that works on this database (the catalog's), for a
    decline to offer when it has none in the asker's words."""
    fallback = LLM_FALLBACK.match(outcome.error)
    if fallback is not None:  # the LLM failed, then keyword mode could not answer either
        rest = replace(outcome, error=outcome.error[fallback.end() :])
        told = failure_of(rest, commands, analyst=analyst, example=example)
        llm = _llm(replace(outcome, error=fallback.group("why")))
        note = " ".join(n for n in (llm.admin_note, told.admin_note) if n)
        text = told.text
        if llm.admin_note and told.kind == "keyword_abstain":  # the key is wrong: keyword mode only
            text = f"{LIMITED} {text}"
        return replace(told, text=text, retry=told.retry or llm.retry, admin_note=note)
    kind = outcome.error_kind
    db = outcome.database or "this database"
    error = outcome.error.strip()
    if kind == "llm":
        return _llm(outcome)
    if kind == "llm_refused":
        return Failure(LLM_DECLINED, retry=False, kind=kind)
    if kind == "busy":
        return Failure(BUSY, retry=True, kind=kind)
    if kind == "internal" or not error:
        return Failure(INTERNAL, retry=True, admin_note=error, kind=kind)
    if kind == "access":
        return Failure(ACCESS.format(db=db, list=commands.list_databases), retry=False, kind=kind)
    if kind == "unknown_database":  # removed from the configuration: trying again cannot help
        text = NOT_CONFIGURED.format(db=db, pick=commands.pick_database)
        return Failure(text, retry=False, kind=kind)  # the person fixes it themselves: nothing for admins
    if kind == "database":
        return Failure(DATABASE_DOWN.format(db=db), retry=True, admin_note=error, kind=kind)
    if kind == "dialect":
        return Failure(DIALECT.format(db=db), retry=False, admin_note=error, kind=kind)
    if kind == "keyword_internal":
        return Failure(KEYWORD_BUG, retry=False, admin_note=error, kind=kind)
    if kind == "keyword_abstain":
        text, advice = without_setup_advice(error)
        if not analyst:
            text = decline_for_people(replace(outcome, error=text), example)
        if advice:  # no LLM configured: keyword mode is all there is
            text = f"{LIMITED} {text}"
        return Failure(text, retry=False, admin_note=advice, kind=kind)
    if kind == "permission":
        note = f"{error} The database account Askbase uses lacks a grant on data this question needs."
        return Failure(error, retry=False, admin_note=note, kind=kind)
    if kind == "timeout" or kind == "connection":
        return Failure(error, retry=True, kind=kind)
    if not analyst and error.startswith(REJECTED_PREFIX):  # the database's own words name its tables
        return Failure(REJECTED, retry=kind in TRANSIENT, kind=kind)
    # question, link, clarify_none, sql, guard, syntax, readonly, other, condition, slack:
    # the engine's words are already the person's (what to ask differently), less the schema's
    return Failure(error if analyst else for_people(error), retry=kind in TRANSIENT, kind=kind)


# ---------------------------------------------------------------- in the asker's words

_TABLES_LIST = re.compile(r"\s*\((?:tables?|columns?):[^)]*\)")
_DOTTED = re.compile(r"(?<![\w.'/:@-])([A-Za-z_]\w+)\.([A-Za-z_]\w+)(?![\w(.])")
_UNDERSCORED = re.compile(r"\b[a-z]+(?:_[a-z0-9]+)+\b")
_QUOTED = re.compile(r"'([^']{1,120})'")
_PLACED = tuple(f"Keyword mode (no LLM) {v}" for v in ("understood", "could not place", "did not answer"))
_SAID = re.compile(r"^'(?P<words>.+?)' →\s*(?P<what>.*)$")


def _words(name: str) -> str:
    return name.replace("_", " ").strip()


def for_people(text: str) -> str:
    """The engine's words without the schema's: no "(tables: …)" lists, `table.column` as the
    column's words, snake_case names as words."""
    text = _TABLES_LIST.sub("", text)
    text = _DOTTED.sub(lambda m: _words(m.group(2)), text)
    return _UNDERSCORED.sub(lambda m: _words(m.group(0)), text)


def _stage_outputs(outcome: Outcome, name: str) -> dict[str, object]:
    for stage in outcome.trace.stages:
        if stage.name == name:
            return dict(stage.outputs or {})
    return {}


def _quote(words: list[str]) -> str:
    quoted = [f"“{w}”" for w in dict.fromkeys(w.strip() for w in words) if w]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " and " + quoted[-1]


def _example_in_their_words(understood: list[tuple[str, str]]) -> str:
    """A question that would work, about the first thing they named that is a table, in their
    words ("How many hosts are there?" where the table is `compute`)."""
    for words, what in understood:
        if what and "." not in what and "=" not in what:
            return f"How many {plural(words.lower())} are there?"
    return ""


def _engine_example(error: str) -> str:
    """The engine's first suggestion, unless it reads like the schema."""
    for found in _QUOTED.findall(error.partition("e.g.")[2]):
        if not _UNDERSCORED.search(found) and "(" not in found:
            return str(found)
    return ""


def decline_for_people(outcome: Outcome, example: str = "") -> str:
    """Keyword mode declined: what it understood and what it did not, in the asker's own words,
    and one question that would work — without the tables and columns it matched them to."""
    error = outcome.error.strip()
    follow = _stage_outputs(outcome, "follow-up")
    if follow.get("declined"):
        previous = str(follow.get("previous") or "")
        return (
            f"I took this as a follow-up to “{previous}” but could not tell what it changes. "
            "Ask the whole question again in one message."
        )
    if "could not join" in error:
        return NOT_JOINED
    if "could not write this query" in error:
        return NOT_WRITTEN
    if not error.startswith(_PLACED):
        # a reading it doubted, a tie, a definition it could not place: already in plain words
        return for_people(error.replace("Keyword mode (no LLM) ", "I "))
    matches = _stage_outputs(outcome, "retrieve").get("matches") or []
    understood = [
        (m.group("words"), m.group("what"))
        for x in (matches if isinstance(matches, list) else [])
        if (m := _SAID.match(str(x)))
    ]
    missing = _stage_outputs(outcome, "interpret").get("not_understood") or []
    missing_words = [str(w) for w in missing] if isinstance(missing, list) else []
    said = []
    if understood:
        said.append(f"I understood {_quote([w for w, _ in understood])}")
    if missing_words:
        said.append(f"{'but not' if understood else 'I could not place'} {_quote(missing_words)}")
    text = CANT_GUESS + (": " + ", ".join(said) if said else "") + "."
    works = _example_in_their_words(understood) or example or _engine_example(error)
    if works:
        text += f" A question that would work: “{works}”"
    return text


def interpretation_for_people(outcome: Outcome) -> str:
    """Keyword mode's reading, without the LLM failure the engine put in front of it for the log."""
    match = LLM_FALLBACK.match(outcome.interpretation)
    return outcome.interpretation[match.end() :] if match else outcome.interpretation


def setup_problem(outcome: Outcome) -> Failure | None:
    """What the admins should fix after `outcome`, if anything: the failure of an error, or the LLM
    failure an answer fell back to keyword mode over (the answer went out; the key may be wrong)."""
    if outcome.status == "error":
        failure = failure_of(outcome)
        return failure if failure.admin_note else None
    for stage in outcome.trace.stages:
        if stage.name == "fallback":
            llm = _llm(replace(outcome, error=str(stage.outputs.get("reason") or "")))
            return llm if llm.admin_note else None
    return None


def limited_now(outcome: Outcome) -> bool:
    """An answer keyword mode gave because the LLM's key was rejected (or its setup is wrong):
    answers are limited right now, and the admins were told."""
    return outcome.status == "answer" and outcome.mode == "keyword" and setup_problem(outcome) is not None
