"""Warming a database up before its first question: what every question reads, built at start.

Why: a process that starts cold makes its first asker wait while it reads the catalog, builds the
join graph and opens the value index; on a warehouse, also while it builds the keyword dictionary
of every table and column, indexes the descriptions and sizes each table's schema text — some
11 s on 10,000 tables (`python -m core.bench linking`, the first question). The Slack and Teams
servers warm their default database in a thread while they start (bot/slack/app.py,
bot/teams/server.py), so the first question finds all of it built.
"""

from __future__ import annotations

import logging
import time

from core.askbase import Askbase
from core.conversation.claims import prune
from core.descriptions import description_index
from core.dictionary import keyword_dictionary
from core.schema_text import ASKBASE, table_tokens
from core.values import Access

log = logging.getLogger(__name__)


def warm_up(askbase: Askbase, name: str) -> bool:
    """Open the state database (dropping processed event ids older than a retry could come) and
    build what questions on database `name` read. False when it failed: the first question then
    meets the same problem and says what it is, where it was asked."""
    start = time.perf_counter()
    try:
        prune(askbase.state)
        db = askbase.database(name)
        askbase.trusted.watch.signature(db)  # the schema's fingerprint (core/schema_watch.py)
        db.graph  # noqa: B018
        db.values  # noqa: B018
        # last, on the catalog those left (reading the schema's fingerprint may have reloaded it)
        keyword_dictionary(db.catalog, Access.of(db)).prepare()
        description_index(db.catalog, Access.of(db))  # retrieve ranks descriptions on every question
        table_tokens(db, ASKBASE)
    except Exception:
        log.exception("warm-up of '%s' failed", name)
        return False
    log.info("warm: %s ready in %.1f s", db.name, time.perf_counter() - start)
    return True
