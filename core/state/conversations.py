"""Conversations (a Slack thread, a console session), their turns, and the stored traces."""

from __future__ import annotations

import datetime as dt
from typing import Any

import sqlalchemy as sa

from core.answer import Outcome
from core.conversation import MAX_TURNS, Turn
from core.state.schema import conversations, traces, turns


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
            return row[0]
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
        return conn.execute(
            sa.select(conversations.c.database).where(conversations.c.id == conversation_id)
        ).scalar_one()


def conversation_database(engine: sa.Engine, conversation_id: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(
            sa.select(conversations.c.database).where(conversations.c.id == conversation_id)
        ).scalar()


def conversation_info(engine: sa.Engine, conversation_id: str) -> dict[str, Any] | None:
    """The conversation's database, channel and asker, or None when no question started it."""
    with engine.connect() as conn:
        row = conn.execute(sa.select(conversations).where(conversations.c.id == conversation_id)).first()
    return dict(row._mapping) if row else None


def record_turn(engine: sa.Engine, conversation_id: str, outcome: Outcome, user: str | None = None) -> int:
    """Store the turn and its trace; returns the turn id."""
    with engine.begin() as conn:
        conn.execute(
            conversations.update().where(conversations.c.id == conversation_id).values(updated_at=_now())
        )
        save_trace(conn, outcome.trace.id, outcome.trace.to_dict())
        return conn.execute(
            turns.insert().values(
                conversation_id=conversation_id,
                trace_id=outcome.trace.id,
                user=user,
                question=outcome.question,
                status=outcome.status,
                mode=outcome.mode,
                answer=outcome.answer or outcome.error,
                sql=outcome.sql,
                columns=list(outcome.columns),
                row_count=outcome.row_count,
                created_at=_now(),
            )
        ).inserted_primary_key[0]


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


def turn_by_trace(engine: sa.Engine, trace_id: str) -> dict[str, Any] | None:
    with engine.connect() as conn:
        row = conn.execute(
            sa.select(turns, conversations.c.database)
            .join(conversations, conversations.c.id == turns.c.conversation_id)
            .where(turns.c.trace_id == trace_id)
        ).first()
    return dict(row._mapping) if row else None


def save_trace(conn: sa.Connection, trace_id: str, data: dict[str, Any]) -> None:
    exists = conn.execute(sa.select(traces.c.id).where(traces.c.id == trace_id)).first()
    if exists:
        conn.execute(traces.update().where(traces.c.id == trace_id).values(data=data))
    else:
        conn.execute(traces.insert().values(id=trace_id, data=data, created_at=_now()))


def load_trace(engine: sa.Engine, trace_id: str) -> dict[str, Any] | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(traces.c.data).where(traces.c.id == trace_id)).scalar()
