"""Is the state database usable right now? For `/healthz` and for what the asker is told.

Reading is not enough: a SQLite file locked by another connection (`BEGIN EXCLUSIVE`, a backup, a
stuck process) or a read-only file still answers SELECTs, while every question needs a write. The
probe writes: it deletes a row that never exists, which takes the database's write lock (SQLite
RESERVED, a PostgreSQL row lock on nothing) without changing anything, inside `call_within`.
One probe runs at a time; concurrent callers share its result.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import sqlalchemy as sa

from core.state.bounded import StateUnavailable, call_within
from core.state.schema import events

PROBE_ID = "healthz:probe"  # never inserted


@dataclass(frozen=True)
class StateHealth:
    ok: bool
    detail: str  # "ok", or what failed (no URL, no credentials)
    ms: float

    def to_json(self) -> dict[str, object]:
        return {"ok": self.ok, "detail": self.detail, "ms": self.ms}


def _write_probe(engine: sa.Engine) -> None:
    with engine.begin() as conn:
        conn.execute(events.delete().where(events.c.id == PROBE_ID))


class StateProbe:
    def __init__(self, engine: sa.Engine, timeout_s: float = 1.0, cache_s: float = 1.0) -> None:
        self.engine = engine
        self.timeout_s = timeout_s
        self.cache_s = cache_s
        self._lock = threading.Lock()
        self._last: tuple[float, StateHealth] | None = None

    def check(self) -> StateHealth:
        with self._lock:  # one probe at a time; a burst of health checks shares the latest
            if self._last is not None and time.monotonic() - self._last[0] < self.cache_s:
                return self._last[1]
            start = time.perf_counter()
            try:
                call_within(self.timeout_s, _write_probe, self.engine)
                health = StateHealth(True, "ok", _ms(start))
            except StateUnavailable as exc:
                cause = exc.__cause__
                detail = str(exc)
                if isinstance(cause, sa.exc.OperationalError | sa.exc.DBAPIError) and cause.orig is not None:
                    detail = f"{detail}: {_first_line(cause.orig)}"
                health = StateHealth(False, detail, _ms(start))
            self._last = (time.monotonic(), health)
            return health


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 1)


def _first_line(exc: BaseException) -> str:
    """Driver messages such as 'database is locked' or 'attempt to write a readonly database',
    cut before anything that could name a host or account."""
    text = str(exc).strip().splitlines()
    line = text[0] if text else type(exc).__name__
    return line.split(" at ", 1)[0].split("@", 1)[0][:120]
