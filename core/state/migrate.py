"""Creating and upgrading the state database with Alembic, safely from several processes at once.

The web processes and the worker start together and all open the same state database, so the
upgrade takes a lock first: PostgreSQL's transaction-scoped advisory lock, SQLite's
`BEGIN IMMEDIATE` (one writer). Every revision then runs in that one transaction; whoever comes
second waits, finds the database at head and does nothing. A database already at head costs one
read of the version table, so opening the state stays cheap.

The revisions are package data (core/state/migrations/), found through the package, not the
working directory, so an installed wheel upgrades its database from anywhere.

    askbase db upgrade | askbase db current           # or python -m bot db ...
    python -m core.state revision -m "what changes"   # for developers: autogenerate
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import tempfile
import threading
from collections.abc import Iterator, Sequence
from functools import cache
from pathlib import Path

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

log = logging.getLogger(__name__)

SCRIPT_LOCATION = "core.state:migrations"  # a package resource, so installed wheels find it
VERSION_TABLE = "askbase_schema_version"  # not alembic_version: the database may be shared
LOCK_KEY = 0x41534B42_5354  # pg_advisory_xact_lock key: "ASKB" "ST"

# Alembic's `context` is one module-level proxy, so two threads of one process must not migrate at
# once; processes are kept apart by the database lock.
_in_process = threading.Lock()


def alembic_config(connection: sa.Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", SCRIPT_LOCATION)
    config.set_main_option("file_template", "v%%(rev)s_%%(slug)s")
    config.attributes["connection"] = connection
    return config


@cache
def head() -> str:
    """The newest revision shipped with this version of Askbase."""
    found = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if found is None:
        raise RuntimeError("no state migrations found in core/state/migrations/versions")
    return found


def current(engine: sa.Engine) -> str | None:
    """The revision the database is at (None: never migrated — new, or made by `create_all`)."""
    with engine.connect() as conn:
        return MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()


def upgrade(engine: sa.Engine, revision: str = "head") -> str | None:
    """Bring the state database to `revision` (default: head); returns the revision it is at."""
    if revision == "head" and current(engine) == head():
        return head()
    with _in_process, _locked(engine) as conn:
        before = MigrationContext.configure(
            conn, opts={"version_table": VERSION_TABLE}
        ).get_current_revision()
        command.upgrade(alembic_config(conn), revision)
        after = MigrationContext.configure(conn, opts={"version_table": VERSION_TABLE}).get_current_revision()
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
