"""Questions in flight and requests already seen: each question is answered once, and none is lost.

A question is *claimed* when it arrives (`received`), where its progress shows is recorded once
(`answering`), and it is marked `answered` at the end. The process answering it holds a lease and
renews it; Slack's retries of a question being answered, or answered already, are dropped. When
the lease runs out — the process was killed, the machine went away — the next delivery (a Slack
retry) or any process's recovery sweep takes the claim over (compare-and-set, so one wins),
closes the stale progress and answers once; a question left too long is apologised for.

Processed Slack event ids and digests of signed requests (slash commands and interactions, which
Slack never retries but an attacker may replay within the 5-minute signature window) are kept for
two days in `processed_events`. Every function takes `now`, so tests move time instead of sleeping.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy.dialects import postgresql, sqlite

from core.redact import scrub_all
from core.state.schema import events, question_claims

KEEP = dt.timedelta(days=2)  # Slack retries within minutes and signatures expire in five; two days is plenty

RECEIVED, ANSWERING, ANSWERED = "received", "answering", "answered"


@dataclass(frozen=True)
class Claim:
    """A question this process now answers; `attempts` > 1 when it took over from a dead one."""

    key: str
    holder: str
    attempts: int
    received_at: dt.datetime
    payload: Mapping[str, Any] | None = None
    status_ref: str | None = None  # the progress message a dead process left showing
    thread_ref: str | None = None

    @property
    def taken_over(self) -> bool:
        return self.attempts > 1


def _utc(value: dt.datetime) -> dt.datetime:
    """SQLite hands datetimes back naive; everything here is UTC."""
    return value if value.tzinfo is not None else value.replace(tzinfo=dt.UTC)


def _now(now: dt.datetime | None) -> dt.datetime:
    return _utc(now) if now is not None else dt.datetime.now(dt.UTC)


def _insert_if_absent(conn: sa.Connection, table: sa.Table, values: dict[str, Any]) -> bool:
    """Insert a row unless its key exists; True when this call inserted it (one round trip)."""
    name = conn.dialect.name
    if name in ("sqlite", "postgresql"):
        insert = (sqlite.insert if name == "sqlite" else postgresql.insert)(table)
        key = next(iter(table.primary_key.columns))
        statement = insert.values(**values).on_conflict_do_nothing().returning(key)
        return conn.execute(statement).first() is not None  # rowcount is not reliable here
    try:
        with conn.begin_nested():
            conn.execute(table.insert().values(**values))
        return True
    except sa.exc.IntegrityError:
        return False


# ---------------------------------------------------------------- deliveries and replays


def first_delivery(engine: sa.Engine, event_id: str, *, now: dt.datetime | None = None) -> bool:
    """Record `event_id`; True only for the first caller, across processes sharing the state DB."""
    with engine.begin() as conn:
        return _insert_if_absent(conn, events, {"id": event_id, "received_at": _now(now)})


def first_request(engine: sa.Engine, digest: str, *, now: dt.datetime | None = None) -> bool:
    """Record the digest of a signed request (timestamp + body); False for a replay of one seen."""
    return first_delivery(engine, f"req:{digest}", now=now)


# ---------------------------------------------------------------- claims


def claim(
    engine: sa.Engine,
    key: str,
    holder: str,
    lease_s: float,
    *,
    payload: Mapping[str, Any] | None = None,
    delivery: str | None = None,
    now: dt.datetime | None = None,
) -> Claim | None:
    """Claim the question `key` for `holder`, or take it over when its holder's lease ran out.

    None when the question is answered, or being answered under a live lease, or when `delivery`
    (a Slack event id) was seen before on no claimed question. `payload` is stored with a new
    claim so that whoever takes it over can answer it; a takeover returns the stored one. It is
    stored without secrets (core/redact.py `scrub_all`): an adapter claims a question before the
    engine, which would remove them, has seen it.
    """
    payload = scrub_all(dict(payload)) if payload is not None else None
    now = _now(now)
    lease = now + dt.timedelta(seconds=lease_s)
    with engine.begin() as conn:
        new_delivery = delivery is None or _insert_if_absent(
            conn, events, {"id": delivery, "received_at": now}
        )
        row = conn.execute(sa.select(question_claims).where(question_claims.c.key == key)).first()
        if row is None:
            if not new_delivery:
                return None  # an event id we have seen, on a question never claimed
            fresh = {
                "key": key,
                "state": RECEIVED,
                "holder": holder,
                "lease_until": lease,
                "attempts": 1,
                "payload": payload,
                "received_at": now,
                "updated_at": now,
            }
            if _insert_if_absent(conn, question_claims, fresh):
                return Claim(key, holder, 1, now, payload)
            return None  # another process claimed it a moment ago; its lease is live
        if row.state == ANSWERED or _utc(row.lease_until) >= now:
            return None
        taken = conn.execute(
            question_claims.update()
            .where(
                question_claims.c.key == key,
                question_claims.c.holder == row.holder,
                question_claims.c.attempts == row.attempts,
                question_claims.c.state != ANSWERED,
            )
            .values(holder=holder, lease_until=lease, attempts=row.attempts + 1, updated_at=now)
        ).rowcount
        if not taken:
            return None  # another process took it over first
        return Claim(
            key,
            holder,
            row.attempts + 1,
            _utc(row.received_at),
            row.payload,
            row.status_ref,
            row.thread_ref,
        )


def answering(
    engine: sa.Engine,
    key: str,
    holder: str,
    lease_s: float,
    *,
    status_ref: str | None,
    thread_ref: str | None,
    now: dt.datetime | None = None,
) -> bool:
    """Progress is showing: record where, so that a takeover closes it before answering."""
    now = _now(now)
    with engine.begin() as conn:
        return bool(
            conn.execute(
                question_claims.update()
                .where(
                    question_claims.c.key == key,
                    question_claims.c.holder == holder,
                    question_claims.c.state != ANSWERED,
                )
                .values(
                    state=ANSWERING,
                    status_ref=status_ref,
                    thread_ref=thread_ref,
                    lease_until=now + dt.timedelta(seconds=lease_s),
                    updated_at=now,
                )
            ).rowcount
        )


def renew(
    engine: sa.Engine, keys: Iterable[str], holder: str, lease_s: float, *, now: dt.datetime | None = None
) -> set[str]:
    """The heartbeat of the questions `holder` is answering; the keys it still holds (the rest were
    answered, or taken over by another process after a pause longer than the lease)."""
    keys = list(keys)
    if not keys:
        return set()
    now = _now(now)
    mine = sa.and_(
        question_claims.c.key.in_(keys),
        question_claims.c.holder == holder,
        question_claims.c.state != ANSWERED,
    )
    with engine.begin() as conn:
        conn.execute(
            question_claims.update().where(mine).values(lease_until=now + dt.timedelta(seconds=lease_s))
        )
        return set(conn.execute(sa.select(question_claims.c.key).where(mine)).scalars())


def answered(engine: sa.Engine, key: str, *, now: dt.datetime | None = None) -> None:
    """The question got its one reply (an answer, a clarifying question, an error or an apology)."""
    now = _now(now)
    with engine.begin() as conn:
        conn.execute(
            question_claims.update()
            .where(question_claims.c.key == key)
            .values(state=ANSWERED, updated_at=now)
        )


def expired(
    engine: sa.Engine, *, now: dt.datetime | None = None, limit: int = 20, prefixes: Sequence[str] = ()
) -> list[str]:
    """Keys of questions whose holder stopped renewing its lease before answering, oldest first;
    only keys starting with one of `prefixes` when given (one adapter's: it alone can answer them)."""
    now = _now(now)
    where = [question_claims.c.state != ANSWERED, question_claims.c.lease_until < now]
    if prefixes:
        where.append(sa.or_(*(question_claims.c.key.startswith(p, autoescape=True) for p in prefixes)))
    with engine.connect() as conn:
        return list(
            conn.execute(
                sa.select(question_claims.c.key)
                .where(*where)
                .order_by(question_claims.c.received_at)
                .limit(limit)
            ).scalars()
        )


def state_of(engine: sa.Engine, key: str) -> str | None:
    with engine.connect() as conn:
        return conn.execute(sa.select(question_claims.c.state).where(question_claims.c.key == key)).scalar()


def prune(engine: sa.Engine, *, now: dt.datetime | None = None) -> int:
    """Forget event ids, request digests and claims older than KEEP."""
    before = _now(now) - KEEP
    with engine.begin() as conn:
        gone = conn.execute(events.delete().where(events.c.received_at < before)).rowcount
        gone += conn.execute(question_claims.delete().where(question_claims.c.received_at < before)).rowcount
        return int(gone)
