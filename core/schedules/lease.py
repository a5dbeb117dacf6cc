"""The scheduler lease: which one worker runs the scheduler, and until when.

APScheduler 3 does not support two schedulers sharing one job store (its maintainers say so in
issues #129 and #231), so workers take a lease row with an expiry and the holder renews it every
poll. Another worker takes over when the lease expires (the holder died) or is released (it
stopped cleanly). Every function takes `now`, so a test moves time instead of sleeping.
"""

from __future__ import annotations

import datetime as dt

import sqlalchemy as sa

from core.schedules.triggers import as_utc
from core.state.schema import scheduler_lease

NAME = "scheduler"
_EXPIRED = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


def acquire(engine: sa.Engine, holder: str, ttl_s: float, *, now: dt.datetime, name: str = NAME) -> bool:
    """Become (or stay) the one worker that runs the scheduler, unless another holds a live lease."""
    now = as_utc(now)
    expires = now + dt.timedelta(seconds=ttl_s)
    with engine.begin() as conn:
        taken = conn.execute(
            scheduler_lease.update()
            .where(
                scheduler_lease.c.name == name,
                sa.or_(scheduler_lease.c.holder == holder, scheduler_lease.c.expires_at < now),
            )
            .values(holder=holder, acquired_at=now, expires_at=expires)
        ).rowcount
        if taken:
            return True
        try:
            with conn.begin_nested():
                conn.execute(
                    scheduler_lease.insert().values(
                        name=name, holder=holder, acquired_at=now, expires_at=expires
                    )
                )
            return True
        except sa.exc.IntegrityError:  # the row exists and someone else's lease is live
            return False


def renew(engine: sa.Engine, holder: str, ttl_s: float, *, now: dt.datetime, name: str = NAME) -> bool:
    """The heartbeat; False means the lease went to another worker (stop scheduling at once)."""
    now = as_utc(now)
    with engine.begin() as conn:
        return bool(
            conn.execute(
                scheduler_lease.update()
                .where(scheduler_lease.c.name == name, scheduler_lease.c.holder == holder)
                .values(expires_at=now + dt.timedelta(seconds=ttl_s))
            ).rowcount
        )


def release(engine: sa.Engine, holder: str, *, name: str = NAME) -> None:
    """Hand over at once on a clean shutdown (a crashed worker's lease simply expires)."""
    with engine.begin() as conn:
        conn.execute(
            scheduler_lease.update()
            .where(scheduler_lease.c.name == name, scheduler_lease.c.holder == holder)
            .values(expires_at=_EXPIRED)
        )


def current_holder(engine: sa.Engine, *, now: dt.datetime, name: str = NAME) -> str | None:
    """Who runs the scheduler now (None when nobody holds a live lease)."""
    now = as_utc(now)
    with engine.connect() as conn:
        row = conn.execute(sa.select(scheduler_lease).where(scheduler_lease.c.name == name)).first()
    if row is None or as_utc(row.expires_at) < now:
        return None
    return str(row.holder)
