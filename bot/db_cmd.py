"""`python -m bot db upgrade|current` (or `askbase db ...`): the state database's schema revision.

`upgrade` creates the state database or brings it to this release's schema (Alembic revisions
shipped in the package); `serve` and `worker` do the same at start, before anything else. Safe to
run while other processes start: they take turns on a database lock.
Exit codes: 0, or 1 when the state database cannot be reached or upgraded.
"""

from __future__ import annotations

import argparse
import logging
import sys

from core.connect import redact
from core.conversation.upkeep import current, head, state_engine, upgrade
from core.settings import Settings

log = logging.getLogger(__name__)


def run_db(args: argparse.Namespace, settings: Settings) -> int:
    url = redact(settings.state_database_url)
    engine = state_engine(settings.state_database_url)
    try:
        at = upgrade(engine) if args.action == "upgrade" else current(engine)
    except Exception as exc:  # unreachable server, bad URL, failed revision: say which database
        return _failed(url, exc)
    finally:
        engine.dispose()
    print(f"State database {url}: revision {at or 'none (not created yet)'}; this release needs {head()}.")
    return 0


def upgrade_at_start(settings: Settings) -> int:
    """For `serve` and `worker`: the state schema at head before any listener or job runs (0), or why not (1)."""
    url = redact(settings.state_database_url)
    engine = state_engine(settings.state_database_url)
    try:
        log.info("state database %s at revision %s", url, upgrade(engine))
    except Exception as exc:
        return _failed(url, exc)
    finally:
        engine.dispose()
    return 0


def _failed(url: str, exc: Exception) -> int:
    log.debug("state database %s", url, exc_info=True)
    print(f"State database {url}: {type(exc).__name__}: {str(exc).splitlines()[0][:300]}", file=sys.stderr)
    return 1
