"""The life of a question in a conversation, written once for every chat (issue 36).

Slack, Teams, the console and the scheduler's posts turn what arrives into a `Question` and show
what comes back; everything in between happens here: which database the conversation is about
(the thread's, else the one asked about, else the place's `db NAME` choice, else the default),
its earlier turns, the engine (`Askbase.ask`), storing the turn — and a clarifying question
before it is shown, so the first click finds it — and the audit row of whatever the engine never
saw (an unknown database, a crash). What the buttons under an answer do is here too: the turn and
trace they carry read back, votes (votes.py), verification (verifying.py), definitions taught in
chat (core/teaching.py, `teacher`), schedules made from an answer (core/schedules/create.py), and
the answering queue's durable claims (claims.py).

It is the adapters' one way to the state database (core/state) and the schedules' rows
(core/schedules/store.py): a rule about a conversation — a clarifying question replaces the open
one, a Refresh reads no history, a failure is stored so Retry finds its question — is then made
in one place and holds in every chat. The record types the adapters read (a stored turn, a
pending clarifying question, a schedule) are re-exported here for the same reason.

Nothing here knows Slack or Teams: a place is (team, channel, thread, address) in the adapter's
own words, and how an outcome looks is the adapter's business.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import sqlalchemy as sa

from core.access import Principal
from core.answer import ErrorKind, Outcome
from core.askbase import Askbase
from core.clarify.transcript import Exchange, Transcript
from core.conversation import votes
from core.conversation.stored import asker_of, standalone_question
from core.conversation.verifying import Unverifying, Verifying, verify, visible_queries
from core.conversation.verifying import unverify as unverify_query
from core.database import UnknownDatabase, not_configured
from core.request import StageCallback
from core.schedules import store as schedule_store
from core.schedules.create import Wanted, create_checked
from core.schedules.store import Platform, Schedule
from core.settings import Settings
from core.state import audit, channel_settings, clarifications, conversations, feedback
from core.state import verified as verified_store
from core.state.clarifications import ANSWERED, EXPIRED, OPEN, REPLACED, Pending, open_for
from core.state.conversations import AskedQuestion, Conversation, StoredTurn
from core.teaching import Teacher, Vote
from core.trace import Trace
from core.verified.query import VerifiedQuery

__all__ = [
    "ANSWERED",
    "EXPIRED",
    "OPEN",
    "REPLACED",
    "Asked",
    "AskedQuestion",
    "Conversation",
    "Conversations",
    "Pending",
    "Place",
    "Question",
    "Rejected",
    "Schedule",
    "StoredTurn",
    "Unverifying",
    "Verifying",
    "open_for",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Place:
    """Where a conversation's messages are, in the adapter's words: stored with its clarifying
    questions, so a click on another process, or the expiry sweep, can reach their messages."""

    team: str = ""
    channel: str | None = None
    thread: str | None = None  # Slack: the thread's ts
    address: dict[str, Any] | None = None  # Teams: the conversation reference of the card


@dataclass(frozen=True)
class Question:
    """A question as an adapter hands it over."""

    text: str
    conversation: str  # the conversation's key: a thread, a chat, a private /ask of its own
    source: str  # "slack", "teams", "console": the audit row's source, the SQL's comment
    principal: Principal  # who asks and where, as the adapter's middleware resolved them
    place: Place = Place()
    user: str | None = None  # who asks, in the chat's ids (stored with the turn)
    database: str | None = None  # asked about this one (the thread's own still wins)
    transcript: Transcript | None = None  # answers to clarifying questions so far
    refresh: bool = False  # the Refresh button: past the answer cache, and without the history
    after_rejection: bool = False  # a 👎 on the answer whose SQL ends `transcript.rejected_sql`


@dataclass(frozen=True)
class Asked:
    """What came of a question: the outcome (stored as a turn), and the older clarifying
    questions of the conversation a new one replaced (their messages should say so)."""

    outcome: Outcome
    database: str
    replaced: tuple[Pending, ...] = ()
    pending: Pending | None = None  # the clarifying question stored, when the outcome asks one


@dataclass(frozen=True)
class Rejected:
    """What a 👎 leads to: "ready" (a clarifying round may be asked), "asked" (one was, and is
    stored, to be shown in the answer's conversation), else why not."""

    why: Literal["ready", "asked", "off", "no answer", "not the asker", "one open already", "not a question"]
    turn: StoredTurn | None = None
    asked: Asked | None = None


class Conversations:
    """The conversation service (module doc). One per process, beside the `Askbase` it asks."""

    def __init__(self, askbase: Askbase) -> None:
        self.askbase = askbase

    @property
    def settings(self) -> Settings:
        return self.askbase.settings

    @property
    def _state(self) -> sa.Engine:
        return self.askbase.state

    @cached_property
    def teacher(self) -> Teacher:
        """Definitions taught in chat, approvals, remembered readings (core/teaching.py)."""
        return Teacher(self.askbase)

    # ------------------------------------------------------------------ places

    def place_database(self, team: str, place: str | None) -> str | None:
        """The database a place was pointed at (`/ask db`, `db NAME`), if any."""
        return self.askbase.place_database(team, place) if place else None

    def point_place(self, team: str, place: str, database: str | None, user: str | None) -> None:
        self.askbase.point_place(team, place, database, user)

    def is_private(self, team: str, channel: str) -> bool:
        """Whether a place's answers go only to the asker (`/ask private on`)."""
        return channel_settings.private_results(self._state, team, channel)

    def set_private(self, team: str, channel: str, private: bool, user: str | None) -> None:
        channel_settings.set_private_results(self._state, team, channel, private, user)

    # ------------------------------------------------------------------ conversations

    def database_for(
        self, conversation: str | None, *, asked: str | None = None, team: str = "", place: str | None = None
    ) -> str:
        """The conversation's database (a thread stays on the one it started with), else the one
        asked about, else the place's choice, else the default."""
        return (
            (conversations.conversation_database(self._state, conversation) if conversation else None)
            or asked
            or self.place_database(team, place)
            or self.settings.default_db
        )

    def database_of(self, conversation: str) -> str | None:
        return conversations.conversation_database(self._state, conversation)

    def begin(self, conversation: str, database: str, *, channel: str | None, user: str | None) -> str:
        """Start the conversation if new (an opened assistant thread, say); the database it is
        about (the first one wins)."""
        return conversations.ensure_conversation(
            self._state, conversation, database, channel=channel, user=user
        )

    def info(self, conversation: str) -> Conversation | None:
        return conversations.conversation_info(self._state, conversation)

    def started_by(self, conversation: str, user: str | None) -> bool:
        """Whether `user` asked the question that started the conversation."""
        info = self.info(conversation)
        return info is not None and bool(user) and info.user == user

    def follows_up(self, conversation: str, user: str, *, started: bool = True) -> bool:
        return self.askbase.follows_up(conversation, user, started=started)

    def untouched(self, conversation: str) -> bool:
        """A conversation started and nothing asked in it yet (its first question titles it)."""
        return self.info(conversation) is not None and not conversations.has_turns(self._state, conversation)

    def rebind(self, conversation: str, database: str) -> bool:
        """Point a conversation nothing was asked in yet at another database; True if done."""
        if database == self.database_of(conversation):
            return False
        return conversations.rebind_database(self._state, conversation, database)

    def recent_questions(self, user: str, prefix: str = "", limit: int = 5) -> list[AskedQuestion]:
        return conversations.recent_questions(self._state, user, prefix=prefix, limit=limit)

    def turn(self, trace_id: str) -> StoredTurn | None:
        """The answer a button carries the trace id of."""
        return conversations.turn_by_trace(self._state, trace_id) if trace_id else None

    def trace(self, trace_id: str) -> dict[str, Any] | None:
        """The stored trace of an answer (its Details)."""
        return conversations.load_trace(self._state, trace_id) if trace_id else None

    def standalone_question(self, turn: StoredTurn) -> str:
        """The turn's question as understood on its own (what a schedule is stored under)."""
        return standalone_question(self._state, turn)

    # ------------------------------------------------------------------ asking

    def ask(self, q: Question, internal: str, on_stage: StageCallback | None = None) -> Asked:
        """Answer `q` in its conversation; never raises (`internal`: what the asker reads when it
        fails unexpectedly, in the chat's words). The outcome is stored as a turn (a clarifying
        question too, before it is shown), and audited whatever happens."""
        database: str | None = None
        outcome: Outcome | None = None
        try:
            database = self.database_for(
                q.conversation, asked=q.database, team=q.place.team, place=q.place.channel
            )
            try:
                db = self.askbase.database(database)
            except UnknownDatabase:
                gone = Outcome.failed(q.text, "unknown_database", not_configured(database), database=database)
                log.info("trace %s: %s", gone.trace.id, gone.error)
                return Asked(self.failed(q, gone), database)
            database = self.begin(q.conversation, db.name, channel=q.place.channel, user=q.user)
            history = [] if q.refresh else conversations.history(self._state, q.conversation)
            outcome = self.askbase.ask(
                q.text,
                db=db,
                history=history,
                on_stage=on_stage,
                source=q.source,
                principal=q.principal,  # the engine refuses (and audits) what it may not query
                transcript=q.transcript,
                refresh=q.refresh,
                after_rejection=q.after_rejection,
            )
            if outcome.status == "error":
                log.warning("trace %s: %s error: %s", outcome.trace.id, outcome.error_kind, outcome.error)
            conversations.record_turn(self._state, q.conversation, outcome, user=q.user)
        except Exception:
            return Asked(self.crashed(q, internal, audited=outcome is not None), database or "")
        if outcome.status != "clarify" or outcome.clarification is None:
            return Asked(outcome, db.name)
        try:  # stored before it is shown, so the first click finds it
            pending, replaced = self._remember(q, outcome)
        except Exception:  # the question is still shown; its buttons will say they lost it
            log.exception("trace %s: could not store the clarifying question", outcome.trace.id)
            return Asked(outcome, db.name)
        return Asked(outcome, db.name, tuple(replaced), pending)

    def failed(self, q: Question, outcome: Outcome, *, audited: bool = False) -> Outcome:
        """An outcome the adapter (or this service) made itself — the engine never saw the
        question, or failed on it: stored as a turn, so Retry finds the question, and audited
        unless the engine audited it already. Never raises."""
        try:
            self.begin(
                q.conversation,
                outcome.database or self.settings.default_db,
                channel=q.place.channel,
                user=q.user,
            )
            conversations.record_turn(self._state, q.conversation, outcome, user=q.user)
        except Exception:
            log.exception("trace %s: could not store the turn", outcome.trace.id)
        if not audited:
            self.audit(outcome, source=q.source, principal=Principal.of(q.user, q.place.channel))
        return outcome

    def crashed(self, q: Question, text: str, *, audited: bool = False) -> Outcome:
        """Answering `q` failed unexpectedly (a bug, the state database gone; call it in the
        `except`): the failure the asker reads (`text`), logged in full under its trace id,
        stored and audited like any."""
        trace = Trace(question=q.text)
        log.exception("trace %s: answering in %s failed", trace.id, q.conversation)
        return self.failed(q, Outcome.failed(q.text, "internal", text, trace=trace), audited=audited)

    def refused(self, q: Question, kind: ErrorKind, text: str, database: str | None = None) -> Outcome:
        """A question the adapter turned away itself, in words a person can act on."""
        outcome = Outcome.failed(q.text, kind, text, database=database or "")
        log.info("trace %s: %s: %s", outcome.trace.id, kind, text)
        return self.failed(q, outcome)

    def record(self, conversation: str, database: str, outcome: Outcome, *, channel: str, user: str) -> None:
        """Store an outcome made elsewhere (a scheduled run) as a turn of `conversation`: Show SQL,
        CSV, 👍 and follow-ups work on it."""
        conversations.ensure_conversation(self._state, conversation, database, channel=channel, user=user)
        conversations.record_turn(self._state, conversation, outcome, user=user)

    def audit(self, outcome: Outcome, *, source: str, principal: Principal) -> None:
        """Audit an outcome the engine never saw (a refusal, a crash) like any answer."""
        try:
            self.askbase.audit(outcome, source=source, principal=principal)
        except Exception:
            log.exception("trace %s: could not audit", outcome.trace.id)

    def audit_since(self, since: dt.timedelta) -> list[dict[str, Any]]:
        """The audit log's rows of the last `since` (what failed, for admins)."""
        return audit.entries_since(self._state, since)

    # ------------------------------------------------------------------ clarifying questions

    def clarification_ttl_s(self, source: str) -> float:
        chat = self.settings.teams if source == "teams" else self.settings.slack
        return chat.clarification_ttl_s

    def expired_after(self, source: str) -> str:
        """How long a clarifying question stays open, in words ("1 hour")."""
        return open_for(self.clarification_ttl_s(source))

    def _remember(self, q: Question, outcome: Outcome) -> tuple[Pending, list[Pending]]:
        """Store a clarifying question before its buttons are shown; the conversation's older
        open ones are replaced (returned: their messages say so)."""
        clarification = outcome.clarification
        assert clarification is not None
        pending = clarifications.record(
            self._state,
            clarification,
            question=outcome.question,
            database=outcome.database,
            conversation_id=q.conversation,
            transcript=q.transcript or Transcript(),
            ttl_s=self.clarification_ttl_s(q.source),
            asker=q.user,
            team=q.place.team,
            channel=q.place.channel,
            thread_ts=q.place.thread,
            trace_id=outcome.trace.id,
            address=q.place.address,
        )
        return pending, clarifications.replace_open(self._state, q.conversation, keep=pending.id)

    def clarification(self, clarification_id: str) -> Pending | None:
        return clarifications.get(self._state, clarification_id) if clarification_id else None

    def open_clarification(self, conversation: str) -> Pending | None:
        """The newest open clarifying question of a conversation, if any."""
        return clarifications.open_in(self._state, conversation)

    def answer_clarification(
        self, clarification_id: str, exchange: Exchange, user: str | None
    ) -> Pending | None:
        """Record the answer once (a compare-and-set); None when someone or something was first."""
        return clarifications.answer(self._state, clarification_id, exchange, user)

    def expire_clarification(self, pending: Pending | None) -> bool:
        """Expire an open question whose time is up; True only for the caller that did it."""
        due = pending is not None and pending.status == OPEN and pending.expired()
        return due and pending is not None and clarifications.expire(self._state, pending.id)

    def expire_due(self, prefix: str) -> list[Pending]:
        """The sweep: expire the due open questions of one chat's conversations (`prefix`)."""
        return clarifications.expire_due(self._state, prefix)

    def clarification_shown(self, clarification_id: str, message: str) -> Pending | None:
        """Note the message showing a clarifying question; the question as it stands then (it may
        have closed while the message was being posted)."""
        return clarifications.set_message(self._state, clarification_id, message)

    def rejection(self, trace_id: str, who: Principal, *, only_asker: bool) -> Rejected:
        """Whether a 👎 on `trace_id` by `who` leads to one more clarifying round ("ready"), and
        why not: clarifying is off, there is no answer with SQL, only the asker may (the vote is
        recorded; the asker decides what they meant), or a question waits in the conversation
        already (one at a time)."""
        if self.settings.engine.clarify == "off":
            return Rejected("off")
        turn = self.turn(trace_id)
        if turn is None or not turn.answered:
            return Rejected("no answer", turn)
        asker = asker_of(self._state, turn)
        if only_asker and asker and who.user != asker:
            return Rejected("not the asker", turn)
        waiting = self.open_clarification(turn.conversation_id)
        if waiting is not None and not waiting.expired():
            return Rejected("one open already", turn)
        return Rejected("ready", turn)

    def ask_after_rejection(
        self,
        trace_id: str,
        who: Principal,
        comment: str,
        *,
        source: str,
        place: Callable[[StoredTurn], Place | None],
        only_asker: bool,
    ) -> Rejected:
        """One more clarifying round about an answer someone 👎'd (Sphinteract's reject → ask →
        answer again), when `rejection` allows it: the engine asks again with the answer's own
        transcript, its SQL rejected and what was wrong; a clarifying question is stored as any.
        `place`: where the turn's conversation is (None: not this chat's, nothing asked)."""
        checked = self.rejection(trace_id, who, only_asker=only_asker)
        turn = checked.turn
        where = place(turn) if turn is not None else None
        if checked.why != "ready" or turn is None or where is None:
            return checked if checked.why != "ready" else Rejected("no answer", turn)
        transcript = votes.rejection_transcript(self._state, turn, comment)
        q = Question(
            text=turn.question,
            conversation=turn.conversation_id,
            source=source,
            principal=who,
            place=where,
            user=asker_of(self._state, turn),
            database=turn.database,
            transcript=transcript,
            after_rejection=True,
        )
        outcome = self.askbase.ask(
            q.text,
            db=turn.database,
            source=source,
            principal=who,
            transcript=transcript,
            after_rejection=True,
        )
        if outcome.status != "clarify" or outcome.clarification is None:
            return Rejected("not a question", turn, Asked(outcome, turn.database))
        conversations.record_turn(self._state, turn.conversation_id, outcome, user=who.user)
        pending, replaced = self._remember(q, outcome)
        return Rejected("asked", turn, Asked(outcome, turn.database, tuple(replaced), pending))

    # ------------------------------------------------------------------ votes

    def vote_up(self, trace_id: str, who: Principal) -> tuple[Vote, str]:
        """👍: an analyst's makes an example; anyone else's is feedback (votes.py). (what it did,
        the note for the voter)."""
        return votes.thumbs_up(self.teacher, trace_id, who)

    def vote_down(self, trace_id: str, user: str | None, comment: str = "") -> None:
        """👎, with what was wrong when the person said."""
        feedback.record_feedback(self._state, trace_id, user, "down", comment.strip())

    def examples(self, database: str) -> list[str]:
        """The questions confirmed as examples on `database` (suggested prompts lead with them)."""
        return [e.question for e in feedback.examples_for(self._state, database)]

    # ------------------------------------------------------------------ verified queries

    def verify(
        self, who: Principal, trace_id: str, *, verifier_name: str = "", team: str = "", channel: str = ""
    ) -> Verifying:
        return verify(self.askbase, who, trace_id, verifier_name=verifier_name, team=team, channel=channel)

    def unverify(self, who: Principal, query_id: int | None) -> Unverifying:
        return unverify_query(self.askbase, who, query_id)

    def visible_queries(self, who: Principal) -> list[VerifiedQuery]:
        return visible_queries(self.askbase, who)

    def verified_query(self, query_id: int) -> VerifiedQuery | None:
        return verified_store.get(self._state, query_id)

    def stale_untold(self, team: str) -> list[VerifiedQuery]:
        """Stale verified queries whose verifier nobody told yet (of `team`, or of every team)."""
        return [q for q in verified_store.untold_stale(self._state) if q.team in ("", team)]

    def tell_once(self, query: VerifiedQuery) -> bool:
        """Claim telling the verifier of a stale query; False when another process did."""
        return verified_store.told(self._state, query.id)

    # ------------------------------------------------------------------ schedules

    def schedule(
        self,
        wanted: Wanted,
        *,
        principal: Principal,
        team: str,
        channel: str,
        owner: str,
        refusal: Callable[[Outcome], str],
        platform: Platform = "slack",
        address: dict[str, Any] | None = None,
    ) -> Schedule:
        """A schedule made from an answer, stored once its SQL ran as the owner where it will
        post (core/schedules/create.py); ScheduleError worded by `refusal` otherwise."""
        return create_checked(
            self.askbase,
            wanted,
            principal=principal,
            team=team,
            channel=channel,
            owner=owner,
            refusal=refusal,
            platform=platform,
            address=address,
        )

    def schedules_in(self, team: str, channel: str, platform: Platform = "slack") -> list[Schedule]:
        return schedule_store.for_channel(self._state, team, channel, platform=platform)

    def schedules_of(self, owner: str, team: str | None = None) -> list[Schedule]:
        return schedule_store.for_owner(self._state, owner, team)

    def scheduled(self, schedule_id: int) -> Schedule | None:
        return schedule_store.get(self._state, schedule_id)

    def active_schedules(self) -> list[Schedule]:
        return schedule_store.active(self._state)

    def pause(self, schedule_id: int, reason: str = "") -> Schedule | None:
        return schedule_store.pause(self._state, schedule_id, reason=reason)

    def resume(self, schedule_id: int) -> Schedule | None:
        return schedule_store.resume(self._state, schedule_id)

    def delete(self, schedule_id: int) -> bool:
        return schedule_store.delete(self._state, schedule_id)

    def note_failure_message(self, schedule_id: int, message: str | None) -> None:
        """The message a failing schedule's streak is reported in (later failures edit it)."""
        schedule_store.set_error_message(self._state, schedule_id, message)
