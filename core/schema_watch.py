"""Noticing, in a running process, that a database's schema changed.

A `Database` reads its catalog once (core/database.py); a column renamed afterwards would go
unnoticed until a restart — and answers cached or verified against the old schema would be served
as if nothing had changed. The watch re-reads the cheap schema fingerprint
(`Database.schema_signature`, one query) at most every `every_s` seconds per database, and
reloads the catalog when it moved. The catalog's own `signature` is then what the answer cache
keys on and what a verified query is stamped with.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from core.database import Database

log = logging.getLogger(__name__)


class SchemaWatch:
    def __init__(self, every_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.every_s = every_s
        self._clock = clock
        self._seen: dict[str, tuple[float, str]] = {}  # database → (checked at, raw fingerprint)
        self._lock = threading.Lock()

    def signature(self, db: Database) -> str:
        """The catalog signature of `db` as it is now (give or take `every_s`)."""
        catalog = db.catalog
        now = self._clock()
        with self._lock:
            seen = self._seen.get(db.name)
            due = seen is None or now - seen[0] >= self.every_s
            if due:  # claim the check, so one thread does it
                self._seen[db.name] = (now, seen[1] if seen else "")
        if not due:
            return catalog.signature
        raw = db.schema_signature()
        with self._lock:
            self._seen[db.name] = (now, raw)
        if seen is None or not seen[1]:  # first sight: the catalog may have been read before a change
            if raw != db.catalog_fingerprint:
                db.refresh()
            return db.catalog.signature
        if raw != seen[1]:
            log.info("the schema of %s changed; reloading its catalog", db.name)
            db.refresh()
            return db.catalog.signature
        return catalog.signature
