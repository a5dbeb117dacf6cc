"""Clarifying questions waiting for (or given) an answer, in the state database.

A question asked back lives here from the moment it is shown until it is answered, expires or
is replaced by a newer one in the same conversation — so a click after a restart, or on another
web process, finds the options, their values and the transcript. Answering is a compare-and-set
on `status`, so a double click or two people clicking at once answer it once.

Every chat expires its questions the same way (`expire_due`): each adapter sweeps the questions of
its own conversations (their keys start with its prefix, `slack:` or `teams:`), since only it can
update their messages — a Slack process must not close a Teams card it cannot reach, nor the
other way round. A Teams question keeps the conversation reference of its card (`address`), so a
sweep can update it from any conversation.
"""

from __future__ import annotations

import datetime as dt
import uuid
from dataclasses import dataclass, replace
from typing import Any

import sqlalchemy as sa

from core.answer import Clarification, Option
from core.clarify.transcript import Exchange, Transcript, options_key
from core.redact import scrub_question
from core.state.rows import all_rows, first_row, stored_utc, utcnow
from core.state.schema import clarifications

OPEN, ANSWERED, EXPIRED, REPLACED = "open", "answered", "expired", "replaced"

_now = utcnow  # this module's clock: asked, expires and swept read it (tests move it)


@dataclass(frozen=True)
class Pending:
    """A clarifying question as stored: what was asked, about what, for whom, and its answer."""

    id: str
    conversation_id: str
    database: str
    question: str  # the person's question being clarified
    clarification: Clarification
    transcript: Transcript  # before this clarifying question
    status: str
    created_at: dt.datetime
    expires_at: dt.datetime
    asker: str | None = None
    team: str | None = None
    channel: str | None = None
    thread_ts: str | None = None
    message_ts: str | None = None
    trace_id: str | None = None
    answer: str | None = None
    answer_value: str | None = None
    answered_by: str | None = None
    answered_at: dt.datetime | None = None
    address: dict[str, Any] | None = None  # Teams: the card's conversation reference

    def expired(self, now: dt.datetime | None = None) -> bool:
        return (now or _now()) >= self.expires_at

    def exchange(self) -> Exchange | None:
        """The answered question as a transcript entry (None while it is open)."""
        if self.answer is None:
            return None
        c = self.clarification
        return Exchange(
            question=c.question,
            answer=self.answer,
            kind=c.kind,
            options=tuple(o.label for o in c.options),
            value=self.answer_value or "",
            key=options_key(o.value for o in c.options),
        )

    def transcript_after(self) -> Transcript:
        exchange = self.exchange()
        return self.transcript.plus(exchange) if exchange else self.transcript


def open_for(ttl_s: float) -> str:
    """How long a question stays open, in the words of its expiry note ("1 second", "5 minutes");
    one wording for every chat."""
    amount, unit = (round(ttl_s), "second") if ttl_s < 120 else (round(ttl_s / 60), "minute")
    return f"{amount} {unit}{'' if amount == 1 else 's'}"


def _pending(row: Any) -> Pending:
    r = row._mapping
    options = tuple(Option(str(o.get("label", "")), str(o.get("value", ""))) for o in r["options"] or ())
    return Pending(
        id=r["id"],
        conversation_id=r["conversation_id"],
        database=r["database"],
        question=r["question"],
        clarification=Clarification(question=r["prompt"], options=options, kind=r["kind"], id=r["id"]),
        transcript=Transcript.from_json(r["transcript"]),
        status=r["status"],
        created_at=stored_utc(r["created_at"]) or _now(),
        expires_at=stored_utc(r["expires_at"]) or _now(),
        asker=r["asker"],
        team=r["team"],
        channel=r["channel"],
        thread_ts=r["thread_ts"],
        message_ts=r["message_ts"],
        trace_id=r["trace_id"],
        answer=r["answer"],
        answer_value=r["answer_value"],
        answered_by=r["answered_by"],
        answered_at=stored_utc(r["answered_at"]),
        address=r["address"],
    )


def record(
    engine: sa.Engine,
    clarification: Clarification,
    *,
    question: str,
    database: str,
    conversation_id: str,
    transcript: Transcript | None = None,
    ttl_s: float = 3600,
    asker: str | None = None,
    team: str | None = None,
    channel: str | None = None,
    thread_ts: str | None = None,
    message_ts: str | None = None,
    trace_id: str | None = None,
    address: dict[str, Any] | None = None,
) -> Pending:
    """Store a clarifying question that is being shown; its id is the one its buttons carry."""
    now = _now()
    cid = clarification.id or uuid.uuid4().hex[:12]
    with engine.begin() as conn:
        conn.execute(
            clarifications.insert().values(
                id=cid,
                conversation_id=conversation_id,
                database=database,
                question=scrub_question(question)[0],
                kind=clarification.kind,
                prompt=clarification.question,
                options=[{"label": o.label, "value": o.value} for o in clarification.options],
                transcript=(transcript or Transcript()).without_secrets()[0].to_json(),
                asker=asker,
                team=team,
                channel=channel,
                thread_ts=thread_ts,
                message_ts=message_ts,
                trace_id=trace_id,
                address=address,
                status=OPEN,
                created_at=now,
                expires_at=now + dt.timedelta(seconds=ttl_s),
            )
        )
    found = get(engine, cid)
    assert found is not None
    return found


def get(engine: sa.Engine, clarification_id: str) -> Pending | None:
    return first_row(
        engine, sa.select(clarifications).where(clarifications.c.id == clarification_id), _pending
    )


def open_in(engine: sa.Engine, conversation_id: str) -> Pending | None:
    """The newest open clarifying question of a conversation (a thread), if any."""
    statement = (
        sa.select(clarifications)
        .where(clarifications.c.conversation_id == conversation_id, clarifications.c.status == OPEN)
        .order_by(clarifications.c.created_at.desc())
        .limit(1)
    )
    return first_row(engine, statement, _pending)


def replace_open(engine: sa.Engine, conversation_id: str, keep: str) -> list[Pending]:
    """Close the conversation's other open questions (a newer one replaces them); returns them."""
    with engine.begin() as conn:
        rows = conn.execute(
            sa.select(clarifications).where(
                clarifications.c.conversation_id == conversation_id,
                clarifications.c.status == OPEN,
                clarifications.c.id != keep,
            )
        ).all()
        closed = []
        for row in rows:
            done = conn.execute(
                clarifications.update()
                .where(clarifications.c.id == row.id, clarifications.c.status == OPEN)
                .values(status=REPLACED)
            ).rowcount
            if done:
                closed.append(_pending(row))
    return closed


def answer(engine: sa.Engine, clarification_id: str, exchange: Exchange, user: str | None) -> Pending | None:
    """Record the answer if the question is still open; None when someone (or something) was first."""
    with engine.begin() as conn:
        done = conn.execute(
            clarifications.update()
            .where(clarifications.c.id == clarification_id, clarifications.c.status == OPEN)
            .values(
                status=ANSWERED,
                answer=scrub_question(exchange.answer)[0],  # the person's own words, maybe
                answer_value=exchange.value,
                answered_by=user,
                answered_at=_now(),
            )
        ).rowcount
    return get(engine, clarification_id) if done else None


def expire(engine: sa.Engine, clarification_id: str) -> bool:
    """Mark an open question expired; True only for the caller that did it."""
    with engine.begin() as conn:
        return bool(
            conn.execute(
                clarifications.update()
                .where(clarifications.c.id == clarification_id, clarifications.c.status == OPEN)
                .values(status=EXPIRED)
            ).rowcount
        )


def due(
    engine: sa.Engine, now: dt.datetime | None = None, limit: int = 50, *, prefix: str = ""
) -> list[Pending]:
    """Open questions whose time is up (for a sweep that tells the people waiting on them), of
    the conversations whose keys start with `prefix` (one chat's)."""
    statement = (
        sa.select(clarifications)
        .where(clarifications.c.status == OPEN, clarifications.c.expires_at <= (now or _now()))
        .order_by(clarifications.c.expires_at)
        .limit(limit)
    )
    if prefix:
        statement = statement.where(clarifications.c.conversation_id.startswith(prefix, autoescape=True))
    return all_rows(engine, statement, _pending)


def expire_due(engine: sa.Engine, prefix: str, now: dt.datetime | None = None) -> list[Pending]:
    """The sweep every chat runs: expire the due open questions of its conversations (`prefix`);
    returns those this caller expired — their messages are its to update, once."""
    return [replace(p, status=EXPIRED) for p in due(engine, now, prefix=prefix) if expire(engine, p.id)]


def set_message(engine: sa.Engine, clarification_id: str, message_ts: str) -> Pending | None:
    """Note the message that shows the question, and return the question as it stands then.

    The message's ts is known only once it is posted, and an answer (a reply in the thread, the
    "Other…" modal), an expiry or a newer question may close the question before that. Whoever
    closes it shows the outcome on the message only if its ts is noted; so the poster, noting it,
    reads the status in the same transaction: still open, the closer will find the ts; closed,
    the poster shows the outcome. Either way the message shows it (at worst twice, the same).
    """
    with engine.begin() as conn:
        conn.execute(
            clarifications.update()
            .where(clarifications.c.id == clarification_id)
            .values(message_ts=message_ts)
        )
        row = conn.execute(sa.select(clarifications).where(clarifications.c.id == clarification_id)).first()
    return _pending(row) if row else None


def last_answered(engine: sa.Engine, conversation_id: str, question: str) -> Pending | None:
    """The latest answered clarification of `question` in a conversation: where a 👎 on the
    answer it led to picks the transcript up again (Sphinteract's next round)."""
    statement = (
        sa.select(clarifications)
        .where(
            clarifications.c.conversation_id == conversation_id,
            clarifications.c.question == question,
            clarifications.c.status == ANSWERED,
        )
        .order_by(clarifications.c.answered_at.desc())
        .limit(1)
    )
    return first_row(engine, statement, _pending)


def asked_in(engine: sa.Engine, conversation_id: str) -> list[Pending]:
    """Every clarifying question of a conversation, oldest first (audits and tests)."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(clarifications)
            .where(clarifications.c.conversation_id == conversation_id)
            .order_by(clarifications.c.created_at)
        ).all()
    return [_pending(r) for r in rows]
