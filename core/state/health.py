"""Is the state database usable right now? For `/healthz` and for what the asker is told.

Reading is not enough: a SQLite file locked by another connection (`BEGIN EXCLUSIVE`, a backup, a
stuck process) or a read-only file still answers SELECTs, while every question needs a write. The
probe writes: it deletes a row that never exists, which takes the database's write lock (SQLite
RESERVED, a PostgreSQL row lock on nothing) without changing anything, inside `call_within`.
One probe runs at a time; concurrent callers share its result.

The pool alone does not tell the truth about a database turned read-only under a running
process, so the probe also looks past it. A SQLite connection keeps the read-write file descriptor
it opened after the file is made read-only (chmod, an immutable flag, a read-only remount), and
SQLite hands that descriptor to connections the process opens later: they write, the next process
cannot. So for a SQLite file the probe also asks the operating system whether the file (and its
`-wal` and `-shm`) may be written by this process. A PostgreSQL session keeps the
`default_transaction_read_only` it started with after `ALTER DATABASE … SET
default_transaction_read_only = on` (or a role's), so there the probe also writes on a connection
opened for it alone, as the pool's next one will be. Either failing is a 503.
"""

from __future__ import annotations

import math
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

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


def _write_probe(*engines: sa.Engine) -> None:
    for engine in engines:
        with engine.begin() as conn:
            conn.execute(events.delete().where(events.c.id == PROBE_ID))


def unpooled(engine: sa.Engine, timeout_s: float) -> sa.Engine | None:
    """For a server database: an engine on it that opens a new connection for every probe, waiting
    on the connect about `timeout_s`. None for SQLite, where a new connection may be handed the
    pool's file descriptor and tells nothing more (`sqlite_file` is checked instead)."""
    url = engine.url
    backend = url.get_backend_name()
    if backend == "sqlite":
        return None
    if backend == "postgresql":
        wait = max(1, math.ceil(timeout_s))
        return sa.create_engine(url, poolclass=sa.pool.NullPool, connect_args={"connect_timeout": wait})
    return sa.create_engine(url, poolclass=sa.pool.NullPool)


def sqlite_file(engine: sa.Engine) -> Path | None:
    """The file of a SQLite state database (None: not SQLite, or in memory)."""
    url = engine.url
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    name = url.database
    if name.startswith("file:"):  # a URI filename (`?uri=true`): the path before its own query
        if "mode=memory" in str(url):
            return None
        name = name.removeprefix("file:").split("?", 1)[0]
    return Path(name)


def unwritable(path: Path) -> str | None:
    """Why this process may not write the SQLite file at `path` (or its WAL files), or None."""
    for part in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        if part.exists() and not os.access(part, os.W_OK):
            return f"the state database file {'is' if part == path else 'has a WAL file that is'} read-only"
    return None


class StateProbe:
    def __init__(self, engine: sa.Engine, timeout_s: float = 1.0, cache_s: float = 1.0) -> None:
        self.engine = engine
        self.fresh = unpooled(engine, timeout_s)
        self.file = sqlite_file(engine)
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
                probed = (self.engine,) if self.fresh is None else (self.engine, self.fresh)
                call_within(self.timeout_s, _write_probe, *probed)
                refused = unwritable(self.file) if self.file is not None else None
                health = StateHealth(refused is None, refused or "ok", _ms(start))
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
