"""What a failed question tells the person who asked, and what it tells the admins.

The engine's error text is written for whoever runs Askbase: "the API key was rejected (HTTP
401)", "set OPENAI_API_KEY". The person who asked in a chat cannot act on that. Here each
`ErrorKind` becomes (1) what went wrong in their terms and what *they* can do, (2) whether trying
again can help — only for transient failures: timeouts, rate limits, services that did not answer
— and (3) the admin note, if there is something to fix in the configuration, which goes to the log
and to the admins (bot/admin_notes.py), never into the channel. Platform-neutral: the Slack and
Teams adapters both word failures through `failure_of`, each naming its own database commands
(`Commands`: Slack's `/ask db`, Teams' typed `db`) where the person is told to use them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.answer import ErrorKind, Outcome
from core.pipeline import NO_LLM_NOTE

INTERNAL = (
    "Something went wrong on my side while answering. Try again; if it keeps failing, tell the bot's admins."
)
BUSY = "I'm answering a lot of questions right now. Try again in a minute."
LLM_DOWN = "The language model I use to write SQL did not answer in time. Try again in a minute."
LLM_SETUP = (
    "I can't reach the language model I use to write SQL, so I can't answer questions like this one "
    "right now. The bot's admins have been told."
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


def failure_of(outcome: Outcome, commands: Commands = SLACK) -> Failure:
    """How `outcome` (status "error") is told to the person, and to the admins; `commands`: how
    the chat it is told in lists and picks databases."""
    fallback = LLM_FALLBACK.match(outcome.error)
    if fallback is not None:  # the LLM failed, then keyword mode could not answer either
        told = failure_of(replace(outcome, error=outcome.error[fallback.end() :]), commands)
        llm = _llm(replace(outcome, error=fallback.group("why")))
        note = " ".join(n for n in (llm.admin_note, told.admin_note) if n)
        return replace(told, retry=told.retry or llm.retry, admin_note=note)
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
        return Failure(text, retry=False, admin_note=advice, kind=kind)
    if kind == "permission":
        note = f"{error} The database account Askbase uses lacks a grant on data this question needs."
        return Failure(error, retry=False, admin_note=note, kind=kind)
    if kind == "timeout" or kind == "connection":
        return Failure(error, retry=True, kind=kind)
    # question, link, clarify_none, sql, guard, syntax, readonly, other, condition, slack:
    # the engine's words are already the person's (what to ask differently)
    return Failure(error, retry=kind in TRANSIENT, kind=kind)


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
