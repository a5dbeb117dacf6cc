"""Creating and upgrading the state database with Alembic, safely from several processes at once.

The web processes and the worker start together and all open the same state database, so the
upgrade takes a lock first: PostgreSQL's transaction-scoped advisory lock, SQLite's
`BEGIN IMMEDIATE` (one writer). Every revision then runs in that one transaction; whoever comes
second waits, finds the database at head and does nothing. A database already at head costs one
read of the version table, so opening the state stays cheap — and needs no Alembic: the head is
the newest revision file's number (`v0005_….py`, the file template below), and Alembic (with Mako
and Pygments, a seventh of a process's start) is imported only when a revision is to run.

The revisions are package data (core/state/migrations/), found through the package, not the
working directory, so an installed wheel upgrades its database from anywhere.

    askbase db upgrade | askbase db current           # or python -m bot db ...
    python -m core.state revision -m "what changes"   # for developers: autogenerate
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import re
import tempfile
import threading
from collections.abc import Iterator, Sequence
from functools import cache
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import sqlalchemy as sa

if TYPE_CHECKING:
    from alembic.config import Config

log = logging.getLogger(__name__)

SCRIPT_LOCATION = "core.state:migrations"  # a package resource, so installed wheels find it
VERSION_TABLE = "askbase_schema_version"  # not alembic_version: the database may be shared
LOCK_KEY = 0x41534B42_5354  # pg_advisory_xact_lock key: "ASKB" "ST"

# Alembic's `context` is one module-level proxy, so two threads of one process must not migrate at
# once; processes are kept apart by the database lock.
_in_process = threading.Lock()


REVISION_FILE = re.compile(r"v(\d{4})_\w+\.py")  # the file template's names: v0005_definitions.py


def alembic_config(connection: sa.Connection | None = None) -> Config:
    from alembic.config import Config

    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.set_main_option("file_template", "v%%(rev)s_%%(slug)s")
    config.attributes["connection"] = connection
    return config


@cache
def head() -> str:
    """The newest revision shipped with this version of Askbase: revisions are numbered in order
    (`python -m core.state revision` numbers the next one), so the largest number is the head
    (tests/integration/test_state_migrations.py checks Alembic agrees)."""
    versions = resources.files("core.state").joinpath("migrations", "versions")
    numbers = [m.group(1) for f in versions.iterdir() if (m := REVISION_FILE.fullmatch(f.name))]
    if not numbers:
        raise RuntimeError("no state migrations found in core/state/migrations/versions")
    return max(numbers)


def current(engine: sa.Engine) -> str | None:
    """The revision the database is at (None: never migrated — new, or made by `create_all`)."""
    with engine.connect() as conn:
        return _current(conn)


def _current(conn: sa.Connection) -> str | None:
    """What Alembic's MigrationContext.get_current_revision reads: the version table's one row."""
    if not sa.inspect(conn).has_table(VERSION_TABLE):
        return None
    rows = conn.execute(sa.text(f"SELECT version_num FROM {VERSION_TABLE}")).scalars().all()
    if len(rows) > 1:
        raise RuntimeError(f"the state database has more than one revision in {VERSION_TABLE}: {rows}")
    return rows[0] if rows else None


def upgrade(engine: sa.Engine, revision: str = "head") -> str | None:
    """Bring the state database to `revision` (default: head); returns the revision it is at."""
    if revision == "head" and current(engine) == head():
        return head()
    from alembic import command

    with _in_process, _locked(engine) as conn:
        before = _current(conn)
        command.upgrade(alembic_config(conn), revision)
        after = _current(conn)
    if before != after:
        log.info("state database %s upgraded from %s to %s", engine.url, before or "nothing", after)
    return after


@contextlib.contextmanager
def _locked(engine: sa.Engine) -> Iterator[sa.Connection]:
    """A connection in a transaction that only one process at a time gets; committed on success."""
    with engine.connect() as conn:
        if engine.dialect.name == "sqlite":
            # pysqlite leaves DDL outside transactions; an explicit BEGIN IMMEDIATE takes SQLite's
            # single write lock now (others wait busy_timeout), and the DDL runs inside it.
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        elif engine.dialect.name == "postgresql":
            conn.execute(sa.select(sa.func.pg_advisory_xact_lock(LOCK_KEY)))
        try:
            yield conn
        except BaseException:
            conn.rollback()
            raise
        conn.commit()


def revision(message: str) -> Path:
    """Write the revision Alembic proposes for what changed in core/state/schema.py (for developers).

    Compares the metadata with a scratch SQLite database upgraded to head, so no server is needed;
    review the file before committing it (autogenerate misses renames and server defaults).
    """
    from alembic import command

    with tempfile.TemporaryDirectory() as scratch:
        engine = sa.create_engine(f"sqlite:///{Path(scratch) / 'state.sqlite'}")
        try:
            upgrade(engine)
            with engine.begin() as conn:
                script = command.revision(
                    alembic_config(conn), message=message, autogenerate=True, rev_id=f"{int(head()) + 1:04d}"
                )
        finally:
            engine.dispose()
    written = script[0] if isinstance(script, list) else script
    if written is None:
        raise RuntimeError("alembic wrote no revision")
    return Path(written.path)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m core.state",
        description="Write a new state-database revision (upgrading is `askbase db upgrade`).",
    )
    parser.add_argument("action", choices=["revision"])
    parser.add_argument("-m", "--message", required=True, help="what the new revision changes")
    args = parser.parse_args(argv)
    print(f"wrote {revision(args.message)}")
    return 0
