"""Conversations (a Slack thread, a console session), their turns, and the stored traces.

Rows come back as frozen dataclasses, not dicts: a caller names the fields it reads, a typo is
an error where it is written, and nothing downstream can change what was stored.

A turn and a trace keep at most a preview of the answer (core/previews.py, `state.preview_bytes`):
the sentence quotes cells, which may be 256 KiB each; the rows themselves are never stored here
(the CSV button runs the SQL again).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa

from core.answer import Mode, Outcome, Status
from core.conversation import MAX_TURNS, Turn
from core.previews import cut_text, json_preview
from core.redact import scrub_question
from core.state.engine import preview_bytes
from core.state.schema import conversations, traces, turns


@dataclass(frozen=True)
class Conversation:
    """A conversation: the thread (or session) a question was asked in, and who started it."""

    id: str  # e.g. slack:T123:C456:1700000000.000100
    database: str  # the first question's database; follow-ups stay on it
    channel: str | None
    user: str | None  # who asked the first question
    created_at: dt.datetime
    updated_at: dt.datetime


@dataclass(frozen=True)
class StoredTurn:
    """One question asked in a conversation and what came of it, as the buttons under it read it."""

    id: int
    conversation_id: str
    trace_id: str
    database: str  # the conversation's database
    user: str | None
    question: str
    status: Status
    mode: Mode
    answer: str  # the answer sentence, or the error shown
    sql: str
    columns: tuple[str, ...]
    row_count: int
    created_at: dt.datetime

    @property
    def answered(self) -> bool:
        """An answer with SQL behind it: what CSV, 👍, 👎 and schedules work on."""
        return self.status == "answer" and bool(self.sql)


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def ensure_conversation(
    engine: sa.Engine,
    conversation_id: str,
    database: str,
    *,
    channel: str | None = None,
    user: str | None = None,
) -> str:
    """Create the conversation if new; return the database it is about (the first one wins)."""
    with engine.begin() as conn:
        row = conn.execute(
            sa.select(conversations.c.database).where(conversations.c.id == conversation_id)
        ).first()
        if row:
            return str(row[0])
        try:
            with conn.begin_nested():
                conn.execute(
                    conversations.insert().values(
                        id=conversation_id,
                        database=database,
                        channel=channel,
                        user=user,
                        created_at=_now(),
                        updated_at=_now(),
                    )
                )
        except sa.exc.IntegrityError:  # created by a concurrent request for the same thread
            pass
        return str(
            conn.execute(
                sa.select(conversations.c.database).where(conversations.c.id == conversation_id)
            ).scalar_one()
        )


def conversation_database(engine: sa.Engine, conversation_id: str) -> str | None:
    with engine.connect() as conn:
        database = conn.execute(
            sa.select(conversations.c.database).where(conversations.c.id == conversation_id)
        ).scalar()
    return str(database) if database is not None else None


def conversation_info(engine: sa.Engine, conversation_id: str) -> Conversation | None:
    """The conversation's database, channel and asker, or None when no question started it."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(conversations).where(conversations.c.id == conversation_id)).first()
    if row is None:
        return None
    return Conversation(
        id=row.id,
        database=row.database,
        channel=row.channel,
        user=row.user,
        created_at=row.created_at,
        updated_at=row.updated_at,
    )


def record_turn(engine: sa.Engine, conversation_id: str, outcome: Outcome, user: str | None = None) -> int:
    """Store the turn and its trace (previews of them: at most `state.preview_bytes` of the
    answer's sentence, a quarter of that of column names); returns the turn id."""
    budget = preview_bytes(engine)
    columns, _ = json_preview(list(outcome.columns), budget // 4)  # a cut list ends with a note
    with engine.begin() as conn:
        conn.execute(
            conversations.update().where(conversations.c.id == conversation_id).values(updated_at=_now())
        )
        save_trace(conn, outcome.trace.id, outcome.trace.to_dict())
        inserted = conn.execute(
            turns.insert().values(
                conversation_id=conversation_id,
                trace_id=outcome.trace.id,
                user=user,
                # an adapter stores turns of its own failures too, with the question as it came
                question=cut_text(scrub_question(outcome.question)[0], budget),
                status=outcome.status,
                mode=outcome.mode,
                answer=cut_text(outcome.answer or outcome.error, budget),
                sql=outcome.sql,
                columns=columns,
                row_count=outcome.row_count,
                created_at=_now(),
            )
        )
        key = inserted.inserted_primary_key
        assert key is not None  # an INSERT into a table with an autoincrement key
        return int(key[0])


def history(engine: sa.Engine, conversation_id: str, limit: int = MAX_TURNS) -> list[Turn]:
    """The last answered turns, oldest first: the context a follow-up question is read in."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(turns.c.question, turns.c.sql, turns.c.columns, turns.c.row_count, turns.c.answer)
            .where(turns.c.conversation_id == conversation_id, turns.c.status == "answer")
            .order_by(turns.c.id.desc())
            .limit(limit)
        ).all()
    return [
        Turn(r.question, r.sql or "", tuple(r.columns or ()), r.row_count or 0, r.answer or "")
        for r in reversed(rows)
    ]


def turn_by_trace(engine: sa.Engine, trace_id: str) -> StoredTurn | None:
    """The turn whose answer carries `trace_id` (every button under an answer carries it)."""
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(turns, conversations.c.database)
            .join(conversations, conversations.c.id == turns.c.conversation_id)
            .where(turns.c.trace_id == trace_id)
        ).first()
    if row is None:
        return None
    return StoredTurn(
        id=row.id,
        conversation_id=row.conversation_id,
        trace_id=row.trace_id or "",
        database=row.database,
        user=row.user,
        question=row.question,
        status=_status(row.status),
        mode=_mode(row.mode),
        answer=row.answer or "",
        sql=row.sql or "",
        columns=tuple(str(c) for c in row.columns or ()),
        row_count=row.row_count or 0,
        created_at=row.created_at,
    )


_STATUSES: dict[str | None, Status] = {"answer": "answer", "clarify": "clarify", "error": "error"}


def _status(text: str | None) -> Status:
    """A stored status read back; anything unknown reads as an error, never as an answer."""
    return _STATUSES.get(text, "error")


def _mode(text: str | None) -> Mode:
    return "keyword" if text == "keyword" else "llm"


def save_trace(conn: sa.Connection, trace_id: str, data: dict[str, Any]) -> None:
    """Store a trace, or a preview of it (`"preview": true`) when it is larger than the budget."""
    kept, cut = json_preview(data, preview_bytes(conn.engine))
    data = {**kept, "preview": True} if cut else kept
    exists = conn.execute(sa.select(traces.c.id).where(traces.c.id == trace_id)).first()
    if exists:
        conn.execute(traces.update().where(traces.c.id == trace_id).values(data=data))
    else:
        conn.execute(traces.insert().values(id=trace_id, data=data, created_at=_now()))


def load_trace(engine: sa.Engine, trace_id: str) -> dict[str, Any] | None:
    """The stored trace (Trace.to_dict) of an answer, for its Details button."""
    with engine.connect() as conn:
        data = conn.execute(sa.select(traces.c.data).where(traces.c.id == trace_id)).scalar()
    return dict(data) if isinstance(data, dict) else None


@dataclass(frozen=True)
class AskedQuestion:
    """A question someone asked, for their App Home: what, where, when, and how it ended."""

    question: str
    conversation_id: str
    database: str
    status: Status
    trace_id: str
    asked_at: dt.datetime


def recent_questions(engine: sa.Engine, user: str, prefix: str = "", limit: int = 5) -> list[AskedQuestion]:
    """`user`'s latest distinct questions, newest first, in conversations whose id starts with
    `prefix` (e.g. one Slack workspace's "slack:T123:")."""
    with engine.connect() as conn:
        rows = conn.execute(
            sa.select(
                turns.c.question,
                turns.c.conversation_id,
                turns.c.status,
                turns.c.trace_id,
                turns.c.created_at,
                conversations.c.database,
            )
            .join(conversations, conversations.c.id == turns.c.conversation_id)
            .where(turns.c.user == user, turns.c.conversation_id.startswith(prefix, autoescape=True))
            .order_by(turns.c.id.desc())
            .limit(limit * 4)
        ).all()
    seen: set[str] = set()
    out: list[AskedQuestion] = []
    for r in rows:
        key = " ".join(r.question.lower().split())
        if key in seen:
            continue
        seen.add(key)
        out.append(
            AskedQuestion(
                r.question, r.conversation_id, r.database, _status(r.status), r.trace_id or "", r.created_at
            )
        )
        if len(out) == limit:
            break
    return out


def has_turns(engine: sa.Engine, conversation_id: str) -> bool:
    """Whether anything was asked in the conversation yet (answered, asked back or failed)."""
    with engine.connect() as conn:
        return (
            conn.execute(
                sa.select(turns.c.id).where(turns.c.conversation_id == conversation_id).limit(1)
            ).first()
            is not None
        )


def rebind_database(engine: sa.Engine, conversation_id: str, database: str) -> bool:
    """Point a conversation at another database while nothing has been asked in it yet (Slack's
    assistant panel: the person moved to a channel about other data before asking). True if done."""
    with engine.begin() as conn:
        asked = conn.execute(
            sa.select(turns.c.id).where(turns.c.conversation_id == conversation_id).limit(1)
        ).first()
        if asked is not None:
            return False
        return bool(
            conn.execute(
                conversations.update()
                .where(conversations.c.id == conversation_id)
                .values(database=database, updated_at=_now())
            ).rowcount
        )
