"""This process's claims on the questions it answers (core/state/events.py holds the rows).

`take` claims a question when it arrives, waiting on the state database at most `wait_s`; a
heartbeat thread renews the leases of every question still being answered; `answering` records
where its progress shows once it is out; `finished` marks the question answered. A process that dies
stops renewing, and its questions are taken over (bot/inflight.py).

When `take` gives up waiting, the claim may still land in the background. It is then marked
answered at once, because the asker has been told to ask again: a late answer on top of that
message would be a second reply to one question.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import sqlalchemy as sa

from bot.slack_progress import StatusMessage, StreamedPlan
from core.state import events
from core.state.bounded import StateUnavailable, call_within
from core.state.events import Claim

log = logging.getLogger(__name__)


def progress_ref(progress: object) -> str | None:
    """The message a question's progress left in Slack, as `kind:ts` — a status message to delete
    or a streamed plan to stop; None for the assistant status (the answer clears it) or nothing."""
    if isinstance(progress, StatusMessage) and progress.ts:
        return f"message:{progress.ts}"
    if isinstance(progress, StreamedPlan) and progress.stream is not None:
        ts = getattr(progress.stream, "_stream_ts", None)  # slack_sdk's ChatStream keeps it private
        return f"stream:{ts}" if ts else None
    return None


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
            self._hold(claim.key)
        return claim

    def answering(self, key: str, progress: object, channel: str, thread_ts: str | None) -> None:
        """Progress is showing in the question's thread: record where, so that a process taking
        the question over closes this progress (bot/inflight.py) before it answers."""
        try:
            events.answering(
                self.engine,
                key,
                self.holder,
                self.lease_s,
                status_ref=progress_ref(progress),
                thread_ref=f"{channel}:{thread_ts}" if thread_ts else None,
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

    def holding(self) -> frozenset[str]:
        with self._lock:
            return frozenset(self._held)

    def _hold(self, key: str) -> None:
        with self._lock:
            self._held.add(key)
            if self._heart is None:
                self._heart = threading.Thread(target=self._beat, name="askbase-claims", daemon=True)
                self._heart.start()

    def _beat(self) -> None:
        """Renew the leases of every question still being answered, three times per lease."""
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
