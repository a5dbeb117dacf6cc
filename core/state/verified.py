"""Verified queries in the state database: stored, listed, reused, flagged stale, unverified.

Rows come back as frozen `VerifiedQuery` records. A stale flag is an outbox too: it is set with
`stale_notified_at` empty, and whichever adapter can reach the verifier tells them and marks it.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from core.state.rows import all_rows, first_row, new_id, stored_utc, utcnow
from core.state.schema import verified_queries as vq
from core.verified.query import Param, VerifiedQuery


def _query(row: Any) -> VerifiedQuery:
    return VerifiedQuery(
        id=int(row.id),
        database=row.database,
        question=row.question,
        sql=row.sql,
        dialect=row.dialect,
        params=tuple(Param.from_json(p) for p in row.params or ()),
        reusable=bool(row.reusable),
        note=row.note or "",
        verified_by=row.verified_by,
        verifier_name=row.verifier_name or "",
        verified_at=stored_utc(row.verified_at) or utcnow(),
        signature=row.signature or "",
        stale_reason=row.stale_reason or "",
        stale_at=stored_utc(row.stale_at),
        active=bool(row.active),
        team=row.team or "",
        channel=row.channel or "",
    )


def _values(q: VerifiedQuery, source_trace: str) -> dict[str, Any]:
    """The columns a verification writes, added or verified again."""
    return {
        "question": q.question,
        "sql": q.sql,
        "dialect": q.dialect,
        "params": [p.to_json() for p in q.params],
        "reusable": q.reusable,
        "note": q.note or None,
        "verified_by": q.verified_by,
        "verifier_name": q.verifier_name or None,
        "verified_at": q.verified_at,
        "team": q.team or None,
        "channel": q.channel or None,
        "source_trace": source_trace or None,
        "signature": q.signature or None,
        "active": True,
    }


def add(engine: sa.Engine, q: VerifiedQuery, *, source_trace: str = "") -> VerifiedQuery:
    with engine.begin() as conn:
        query_id = new_id(
            conn.execute(vq.insert().values(database=q.database, reuse_count=0, **_values(q, source_trace)))
        )
    found = get(engine, query_id)
    assert found is not None
    return found


def replace_query(
    engine: sa.Engine, query_id: int, q: VerifiedQuery, *, source_trace: str = ""
) -> VerifiedQuery:
    """Verified again (a better SQL, or a fix after it went stale): new SQL, verifier and time."""
    with engine.begin() as conn:
        conn.execute(
            vq.update()
            .where(vq.c.id == query_id)
            .values(
                stale_reason=None,
                stale_at=None,
                stale_notified_at=None,
                unverified_by=None,
                unverified_at=None,
                **_values(q, source_trace),
            )
        )
    found = get(engine, query_id)
    assert found is not None
    return found


def get(engine: sa.Engine, query_id: int) -> VerifiedQuery | None:
    return first_row(engine, sa.select(vq).where(vq.c.id == query_id), _query)


def active(
    engine: sa.Engine, database: str | None = None, *, include_stale: bool = False
) -> list[VerifiedQuery]:
    """Verified queries still verified (of one database), oldest first; stale ones only if asked."""
    statement = sa.select(vq).where(vq.c.active.is_(True)).order_by(vq.c.id)
    if database is not None:
        statement = statement.where(vq.c.database == database)
    if not include_stale:
        statement = statement.where(vq.c.stale_reason.is_(None))
    return all_rows(engine, statement, _query)


def unverify(engine: sa.Engine, query_id: int, by: str | None) -> VerifiedQuery | None:
    with engine.begin() as conn:
        conn.execute(
            vq.update()
            .where(vq.c.id == query_id, vq.c.active.is_(True))
            .values(active=False, unverified_by=by, unverified_at=utcnow())
        )
    return get(engine, query_id)


def reused(engine: sa.Engine, query_id: int, signature: str) -> None:
    """It answered a question: count it, and note the schema it ran against."""
    with engine.begin() as conn:
        conn.execute(
            vq.update()
            .where(vq.c.id == query_id)
            .values(reuse_count=vq.c.reuse_count + 1, last_reused_at=utcnow(), signature=signature or None)
        )


def checked(engine: sa.Engine, query_id: int, signature: str) -> None:
    """It passed the guard and ran: not stale (any more), against this schema."""
    with engine.begin() as conn:
        conn.execute(
            vq.update()
            .where(vq.c.id == query_id)
            .values(signature=signature or None, stale_reason=None, stale_at=None, stale_notified_at=None)
        )


def flag_stale(engine: sa.Engine, query_id: int, reason: str) -> bool:
    """Not reused until fixed; True when it was fresh until now (its verifier is to be told)."""
    with engine.begin() as conn:
        changed = conn.execute(
            vq.update()
            .where(vq.c.id == query_id, vq.c.stale_reason.is_(None))
            .values(stale_reason=reason[:2000], stale_at=utcnow(), stale_notified_at=None)
        ).rowcount
    return bool(changed)


def untold_stale(engine: sa.Engine) -> list[VerifiedQuery]:
    """Stale queries whose verifiers have not been told yet."""
    statement = (
        sa.select(vq)
        .where(vq.c.active.is_(True), vq.c.stale_reason.is_not(None), vq.c.stale_notified_at.is_(None))
        .order_by(vq.c.id)
    )
    return all_rows(engine, statement, _query)


def told(engine: sa.Engine, query_id: int) -> bool:
    """Mark the verifier told; False when another process did already (so they are told once)."""
    with engine.begin() as conn:
        return bool(
            conn.execute(
                vq.update()
                .where(vq.c.id == query_id, vq.c.stale_notified_at.is_(None))
                .values(stale_notified_at=utcnow())
            ).rowcount
        )
