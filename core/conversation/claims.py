"""Questions claimed in the state database as they arrive: answered once, none lost, and in turn.

One piece for every chat adapter (Slack: bot/slack/inflight.py; Teams: bot/teams/inflight.py), and
the durable side of the answering queue (queue.py): a question is claimed (core/state/events.py
holds the rows) with what is needed to answer it again, *before* it waits for a free answering
worker, so a burst waits in the claims rather than being turned away — if the process dies while
questions wait, their leases run out and another process takes them over, oldest first. The only
question refused is one the state database itself cannot take (`StateUnavailable`).

`take` claims a question when it arrives, waiting on the state database at most `wait_s`; a
heartbeat thread renews the leases of every question still waiting or being answered; `answering`
records where its progress shows once it is out; `finished` marks the question answered. A process
that dies stops renewing, and its questions are taken over: by a redelivery (`take` again), or by
`recover`, the sweep each process runs at start and then once per lease over its adapter's keys.

When `take` gives up waiting, the claim may still land in the background. It is then marked
answered at once, because the asker has been told to ask again: a late answer on top of that
message would be a second reply to one question.

`first_delivery` / `first_request` are the replay checks of events and signed requests, bounded
in time the same way (core/state/bounded.py).
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import sqlalchemy as sa

from core.state import events
from core.state.bounded import StateUnavailable, call_within
from core.state.engine import preview_bytes
from core.state.events import Claim

__all__ = [
    "MAX_ATTEMPTS",
    "Claim",
    "ClaimKeeper",
    "Recovery",
    "StateUnavailable",
    "call_within",
    "first_delivery",
    "first_request",
    "prune",
    "recover",
]

log = logging.getLogger(__name__)

MAX_ATTEMPTS = 3  # a question taken over this often is apologised for, not tried again


class ClaimKeeper:
    def __init__(self, engine: sa.Engine, *, lease_s: float, wait_s: float) -> None:
        self.engine = engine
        self.lease_s = max(1.0, lease_s)
        self.wait_s = wait_s
        self.holder = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self._held: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._heart: threading.Thread | None = None

    def take(
        self, key: str, *, payload: Mapping[str, Any] | None = None, delivery: str | None = None
    ) -> Claim | None:
        """The claim on `key` (new, or taken over), or None when it is answered or held elsewhere.

        Raises StateUnavailable when the state database does not answer within `wait_s`.
        """
        box: dict[str, Any] = {"abandoned": False, "delivered": False, "claim": None}
        lock = threading.Lock()

        def attempt() -> Claim | None:
            claim = events.claim(
                self.engine, key, self.holder, self.lease_s, payload=payload, delivery=delivery
            )
            with lock:
                if box["abandoned"]:
                    if claim is not None:  # the asker was told to ask again; this claim answers nothing
                        events.answered(self.engine, key)
                    return None
                box["delivered"], box["claim"] = True, claim
            return claim

        try:
            claim = call_within(self.wait_s, attempt)
        except StateUnavailable:
            with lock:
                if not box["delivered"]:
                    box["abandoned"] = True
                    raise
                claim = box["claim"]  # it landed just as we stopped waiting
        if claim is not None:
            self.hold(claim.key)
        return claim

    def claim_now(self, key: str, *, payload: Mapping[str, Any] | None = None) -> Claim | None:
        """`take` without the time limit or the hold, for a caller that bounds the wait itself and
        holds what it gets (the Teams ack claims on a pool of its own, bot/teams/inflight.py)."""
        return events.claim(self.engine, key, self.holder, self.lease_s, payload=payload)

    def answering(self, key: str, *, status_ref: str | None = None, thread_ref: str | None = None) -> None:
        """Progress is showing: record where (the adapter's words for a message and a thread), so
        that a process taking the question over closes that progress before it answers."""
        try:
            events.answering(
                self.engine, key, self.holder, self.lease_s, status_ref=status_ref, thread_ref=thread_ref
            )
        except sa.exc.SQLAlchemyError:
            log.warning("could not record the progress of %s", key, exc_info=True)

    def finished(self, key: str) -> None:
        """The question got its one reply; retries and recovery leave it alone from now on."""
        with self._lock:
            self._held.discard(key)
        try:
            events.answered(self.engine, key)
        except sa.exc.SQLAlchemyError:
            log.warning("could not mark %s answered", key, exc_info=True)

    def release(self, key: str) -> None:
        """Stop renewing `key`'s lease without answering it: the question could not be handled
        here (its turn failed before it began, the process is stopping), so once the lease runs
        out a redelivery or the sweep takes it over, as after a crash."""
        with self._lock:
            self._held.discard(key)

    def untouched(self, key: str) -> bool:
        """Whether nothing began handling the claimed question yet (no progress, no reply). When
        the state database cannot say, it counts as untouched: letting its lease lapse risks an
        answer twice, holding it risks none ever."""
        try:
            return events.state_of(self.engine, key) == events.RECEIVED
        except sa.exc.SQLAlchemyError:
            return True

    def holding(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._held)

    def hold(self, key: str) -> None:
        """Renew `key`'s lease from now on: a claim this process made itself, outside `take`."""
        with self._lock:
            self._held.add(key)
            if self._heart is None:
                self._heart = threading.Thread(target=self._beat, name="askbase-claims", daemon=True)
                self._heart.start()

    @property
    def payload_limit(self) -> int:
        """The most the state database keeps of a payload (`state.preview_bytes`)."""
        return preview_bytes(self.engine)

    def _beat(self) -> None:
        """Renew the leases of every question still waiting or being answered, three times per lease."""
        while not self._stop.wait(self.lease_s / 3):
            held = self.holding()
            if not held:
                continue
            try:
                kept = events.renew(self.engine, held, self.holder, self.lease_s)
            except sa.exc.SQLAlchemyError:
                log.warning("could not renew %d question leases", len(held), exc_info=True)
                continue
            if lost := held - kept:
                log.info("%d questions were answered or taken over elsewhere: %s", len(lost), sorted(lost))
                with self._lock:
                    self._held -= lost

    def close(self) -> None:
        self._stop.set()


def first_delivery(engine: sa.Engine, event_id: str, wait_s: float) -> bool:
    """True the first time an event id is seen, across processes; StateUnavailable after `wait_s`."""
    return call_within(wait_s, events.first_delivery, engine, event_id)


def first_request(engine: sa.Engine, digest: str, wait_s: float) -> bool:
    """False for a replay of a signed request seen before; StateUnavailable after `wait_s`."""
    return call_within(wait_s, events.first_request, engine, digest)


def prune(engine: sa.Engine) -> int:
    """Forget event ids, request digests and claims older than two days (at start)."""
    return events.prune(engine)


# ---------------------------------------------------------------- recovery

Resume = Callable[[Claim, bool], bool]


def recover(
    keeper: ClaimKeeper,
    prefixes: Sequence[str],
    within_s: float,
    resume: Resume,
    *,
    now: dt.datetime | None = None,
) -> int:
    """Finish or apologise for the questions (keys starting with one of `prefixes`: one adapter's)
    whose process stopped answering, oldest first; how many were taken over.

    Each expired claim is taken over (one process wins) and handed to `resume(claim, apologise)`:
    `apologise` is set when the question is older than `within_s`, or was already taken over
    MAX_ATTEMPTS times (a question that kills the process must not kill every process in turn).
    `resume` returns True when an answer is under way holding the claim (it finishes it), False
    when it is done with it (apologised, or nothing to answer with): the claim is finished here.
    """
    now = now or dt.datetime.now(dt.UTC)
    handled = 0
    for key in events.expired(keeper.engine, now=now, prefixes=prefixes):
        try:
            claim = keeper.take(key)
        except StateUnavailable as exc:
            log.warning("recovery paused: %s", exc)
            break
        if claim is None:
            continue  # another process took it first
        handled += 1
        age = (now - claim.received_at).total_seconds()
        late = age > within_s or claim.attempts > MAX_ATTEMPTS
        if late:
            log.info("apologising for question %s (%.0f s old, attempt %d)", key, age, claim.attempts)
        else:
            log.info("finishing question %s left in flight (attempt %d)", key, claim.attempts)
        try:
            under_way = resume(claim, late)
        except Exception:
            log.exception("could not finish question %s", key)
            under_way = False
        if not under_way:
            keeper.finished(key)
    return handled


class Recovery:
    """`sweep` at start and then twice per lease, on a daemon thread of each process."""

    def __init__(self, sweep: Callable[[], Any], lease_s: float, name: str = "askbase-recovery") -> None:
        self.sweep = sweep
        self.every = max(1.0, lease_s / 2)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> Recovery:
        self._thread.start()
        return self

    def _run(self) -> None:
        while True:
            try:
                self.sweep()
            except Exception:  # the state DB is down, the chat refused: try again next round
                log.warning("recovery sweep failed", exc_info=True)
            if self._stop.wait(self.every):
                return

    def stop(self) -> None:
        self._stop.set()
