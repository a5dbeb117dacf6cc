"""The answer cache's rows (core/answer_cache.py says what is cached and for whom)."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from core.answer_cache import CachedAnswer, CacheKey, fresh
from core.state.schema import answer_cache


def get(engine: sa.Engine, key: CacheKey, window_s: int, now: dt.datetime) -> CachedAnswer | None:
    with engine.connect() as conn:
        row = conn.execute(sa.select(answer_cache.c.answer).where(answer_cache.c.key == key.digest)).first()
    if row is None:
        return None
    try:
        cached = CachedAnswer.from_json(row.answer)
    except (KeyError, TypeError, ValueError):  # written by another version: a miss, not an error
        return None
    return cached if fresh(cached, now, window_s) else None


def put(
    engine: sa.Engine, key: CacheKey, cached: CachedAnswer, size: int, *, window_s: int, max_entries: int
) -> None:
    """Keep `cached` under `key` (replacing what was there); drop what is past the window, then
    the oldest entries beyond `max_entries`."""
    with engine.begin() as conn:
        conn.execute(answer_cache.delete().where(answer_cache.c.key == key.digest))
        conn.execute(
            answer_cache.insert().values(
                key=key.digest,
                database=key.database,
                question=key.question,
                answer=cached.to_json(),
                bytes=size,
                source_trace=cached.trace_id,
                created_at=cached.computed_at,
            )
        )
        conn.execute(
            answer_cache.delete().where(
                answer_cache.c.created_at < cached.computed_at - dt.timedelta(seconds=window_s)
            )
        )
        count = conn.execute(sa.select(sa.func.count()).select_from(answer_cache)).scalar_one()
        if count > max_entries:
            oldest = (
                sa.select(answer_cache.c.key)
                .order_by(answer_cache.c.created_at, answer_cache.c.key)
                .limit(count - max_entries)
            )
            keys = [r.key for r in conn.execute(oldest)]
            conn.execute(answer_cache.delete().where(answer_cache.c.key.in_(keys)))


def clear(engine: sa.Engine, database: str | None = None) -> int:
    """Forget cached answers (of one database); returns how many."""
    statement = answer_cache.delete()
    if database is not None:
        statement = statement.where(answer_cache.c.database == database)
    with engine.begin() as conn:
        return int(conn.execute(statement).rowcount or 0)


def count(engine: sa.Engine) -> int:
    with engine.connect() as conn:
        return int(conn.execute(sa.select(sa.func.count()).select_from(answer_cache)).scalar_one())
