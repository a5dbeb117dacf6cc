"""Processed Slack event ids: a redelivered event (X-Slack-Retry-Num) is never answered twice."""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from core.state.schema import events

KEEP = dt.timedelta(days=2)  # Slack retries within minutes; two days is plenty


def first_delivery(engine: sa.Engine, event_id: str) -> bool:
    """Claim `event_id`; True only for the first caller, across processes sharing the state DB."""
    try:
        with engine.begin() as conn:
            conn.execute(events.insert().values(id=event_id, received_at=dt.datetime.now(dt.UTC)))
        return True
    except sa.exc.IntegrityError:
        return False


def prune(engine: sa.Engine) -> int:
    with engine.begin() as conn:
        return conn.execute(
            events.delete().where(events.c.received_at < dt.datetime.now(dt.UTC) - KEEP)
        ).rowcount
