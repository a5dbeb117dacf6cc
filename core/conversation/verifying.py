"""Verify, Unverify and the list of verified queries, the same in every chat (issue 19).

A press on ✅ Verify under an answer records its question (as understood on its own), SQL,
database, verifier and date through the engine (`Askbase.trusted.verify`) — only for analysts
(`verified.analysts`: user ids, Slack user groups, Teams teams; core/verified/analysts.py), only
on an answer that ran SQL, only on a database the analyst may query there. What a press did is a
`Verifying` the chat words in its own markup with `verified_sentence`; which queries someone may
see, and unverifying, are decided here too. Slack (bot/slack/listeners/verified.py) and Teams
(bot/teams/verified.py) only read the press and show the result.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from core.access import Principal, usable_databases
from core.askbase import Askbase
from core.conversation.stored import standalone_question
from core.database import UnknownDatabase
from core.state import conversations
from core.state import verified as store
from core.trusted import Verification
from core.verified.analysts import is_analyst
from core.verified.query import VerifiedQuery

Status = Literal["not an analyst", "no query", "access", "database", "already", "new", "replaced"]


@dataclass(frozen=True)
class Verifying:
    """What became of a press on Verify: `status`, the database it was about, and the engine's
    verification when there was one (new, replaced, or already verified)."""

    status: Status
    database: str = ""
    verification: Verification | None = None


def verify(
    askbase: Askbase,
    who: Principal,
    trace_id: str,
    *,
    verifier_name: str = "",
    team: str = "",
    channel: str = "",
) -> Verifying:
    """Verify the answer `trace_id` for `who` (whose groups the chat resolved)."""
    if not is_analyst(askbase.settings, who) or not who.user:
        return Verifying("not an analyst")
    turn = conversations.turn_by_trace(askbase.state, trace_id)
    if turn is None or not turn.answered:
        return Verifying("no query")
    if not askbase.may_query(who, turn.database):
        return Verifying("access", turn.database)
    try:
        db = askbase.database(turn.database)
    except UnknownDatabase:
        return Verifying("database", turn.database)
    result = askbase.trusted.verify(
        db,
        standalone_question(askbase.state, turn),
        turn.sql,
        who.user,
        verifier_name=verifier_name,
        team=team,
        channel=channel,
        source_trace=trace_id,
    )
    return Verifying(result.status, turn.database, result)


def verified_sentence(result: Verification, verifier: str, escape: Callable[[str], str]) -> str:
    """What everyone in the conversation reads after a verification: who verified it, as what,
    and which questions are answered from it now. `verifier` is already in the chat's markup."""
    q = result.query
    quoted = f"“{escape(q.question)}”"
    if result.status == "replaced":
        head = f"✅ {verifier} verified this answer. It replaces verified query #{q.id} ({quoted} reads the same)."
    else:
        head = f"✅ {verifier} verified this answer as #{q.id}."
    if not q.reusable:
        tail = f"It is kept as an example for the SQL writer only: {escape(q.note)}."
    elif q.params:
        tail = (
            f"Questions like {quoted} are now answered from its SQL, without an LLM, with these values "
            f"taken from the question: {escape(q.describe_params())}."
        )
    else:
        tail = f"Questions like {quoted} are now answered from its SQL, without an LLM."
    return f"{head} {tail}"


def visible_queries(askbase: Askbase, who: Principal) -> list[VerifiedQuery]:
    """Analysts see every verified query; others those of the databases they may use there."""
    queries = store.active(askbase.state, include_stale=True)
    if is_analyst(askbase.settings, who):
        return queries
    usable = set(usable_databases(askbase.settings, who, askbase.databases.names()))
    return [q for q in queries if q.database in usable]


@dataclass(frozen=True)
class Unverifying:
    """What became of a press on Unverify: the query unverified, or why none was."""

    status: Literal["not an analyst", "gone", "unverified"]
    query: VerifiedQuery | None = None


def unverify(askbase: Askbase, who: Principal, query_id: int | None) -> Unverifying:
    """Unverify #`query_id` for an analyst: questions like it get newly written SQL again."""
    if not is_analyst(askbase.settings, who):
        return Unverifying("not an analyst")
    q = askbase.trusted.unverify(query_id, who.user) if query_id is not None else None
    return Unverifying("unverified", q) if q is not None else Unverifying("gone")
