"""The real PostgreSQL / MariaDB servers tests may use (URLs from ASKBASE_TEST_*_URL), and the
read-only copies of SQLite files (the demo's) the engine tests share on them (`shared_copy`)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import sqlalchemy as sa
from sqlalchemy.engine import make_url

from core.warehouse.sqlite_copy import copy_sqlite_into

DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}
POSTGRES = "ASKBASE_TEST_POSTGRES_URL"
MYSQL = "ASKBASE_TEST_MYSQL_URL"
# Part of every shared copy's name: bump it when core/warehouse/sqlite_copy.py changes what a copy
# holds (types, keys, names), so a copy made by an older loader is not read as a current one.
COPY_VERSION = 1
LOCK_TIMEOUT_S = 300  # another checkout may be loading the same copy right now


def server_url(env: str) -> str:
    """The URL in `env` with an installed driver named (a bare postgresql:// would want psycopg2)."""
    url = make_url(os.environ[env])
    if url.drivername in DRIVERS:
        url = url.set(drivername=DRIVERS[url.drivername])
    return url.render_as_string(hide_password=False)


def admin_engine(env: str) -> sa.Engine:
    """A writable engine for setting tests up (Askbase's own engines are read-only)."""
    return sa.create_engine(server_url(env))


# ---------------------------------------------------------------- shared read-only copies


def content_digest(path: Path) -> str:
    """Ten hex digits of the file's content and COPY_VERSION: the same data has the same name."""
    digest = hashlib.sha256(f"askbase copy {COPY_VERSION}\n".encode())
    digest.update(Path(path).read_bytes())
    return digest.hexdigest()[:10]


_copies: dict[tuple[str, str, str], str] = {}
_copies_guard = threading.Lock()


def shared_copy(env: str, source: Path, prefix: str = "askbase_demo") -> str:
    """The URL, for a read-only account, of a database on the server of `env` holding the tables
    of the SQLite file `source` (core/warehouse/sqlite_copy.py).

    The database is named from the file's content (`<prefix>_<digest>`), made once under a lock
    the server holds (PostgreSQL's advisory lock, MariaDB's GET_LOCK) when it is missing, and never
    dropped: other checkouts of this repository and other test workers read it at the same time,
    and a changed file is another name. Its account may only read it: a login role with SELECT
    on its tables and read-only transactions (PostgreSQL), a user with SELECT on the database
    (MariaDB), as docs/security.md sets Askbase up. The account is made last, in one step: a copy
    without it was cut short (a killed run) and is made again.
    """
    key = (env, str(Path(source).resolve()), prefix)
    with _copies_guard:
        if key in _copies:
            return _copies[key]
    name = f"{prefix}_{content_digest(source)}"
    admin = sa.create_engine(server_url(env), isolation_level="AUTOCOMMIT", poolclass=sa.pool.NullPool)
    try:
        if admin.dialect.name == "postgresql":
            url = _postgres_copy(admin, name, source)
        else:
            url = _mysql_copy(admin, name, source)
    finally:
        admin.dispose()
    with _copies_guard:
        _copies[key] = url
    return url


def _password(name: str) -> str:
    """The read-only account's password: a test server's account that may read the demo, no secret."""
    return hashlib.sha256(f"askbase read-only {name}".encode()).hexdigest()[:20]


def _lock_key(name: str) -> int:
    return int(hashlib.sha256(name.encode()).hexdigest()[:15], 16)


def _postgres_copy(admin: sa.Engine, name: str, source: Path) -> str:
    role = f"{name}_ro"
    url = make_url(server_url(POSTGRES))
    with admin.connect() as conn:
        conn.execute(sa.text("SELECT pg_advisory_lock(:k)"), {"k": _lock_key(name)})
        try:
            has_db = conn.execute(
                sa.text("SELECT 1 FROM pg_database WHERE datname = :n"), {"n": name}
            ).first()
            has_role = conn.execute(sa.text("SELECT 1 FROM pg_roles WHERE rolname = :r"), {"r": role}).first()
            if not (has_db and has_role):
                conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
                conn.execute(sa.text(f'DROP ROLE IF EXISTS "{role}"'))
                conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
                conn.execute(sa.text(f'REVOKE TEMPORARY ON DATABASE "{name}" FROM PUBLIC'))
                loader = sa.create_engine(url.set(database=name), poolclass=sa.pool.NullPool)
                try:
                    copy_sqlite_into(source, loader)
                    with loader.begin() as load:  # the account last, in one transaction
                        load.execute(
                            sa.text(
                                f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{_password(name)}' "
                                "NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS"
                            )
                        )
                        load.execute(sa.text(f'ALTER ROLE "{role}" SET default_transaction_read_only = on'))
                        load.execute(sa.text(f'GRANT CONNECT ON DATABASE "{name}" TO "{role}"'))
                        load.execute(sa.text(f'GRANT USAGE ON SCHEMA public TO "{role}"'))
                        load.execute(sa.text(f'GRANT SELECT ON ALL TABLES IN SCHEMA public TO "{role}"'))
                finally:
                    loader.dispose()
        finally:
            conn.execute(sa.text("SELECT pg_advisory_unlock(:k)"), {"k": _lock_key(name)})
    return url.set(username=role, password=_password(name), database=name).render_as_string(False)


def _mysql_copy(admin: sa.Engine, name: str, source: Path) -> str:
    user = f"{name}_ro"
    url = make_url(server_url(MYSQL))
    granted = (
        "SELECT 1 FROM information_schema.SCHEMA_PRIVILEGES "
        "WHERE GRANTEE = :g AND TABLE_SCHEMA = :n AND PRIVILEGE_TYPE = 'SELECT'"
    )
    with admin.connect() as conn:
        got = conn.execute(sa.text("SELECT GET_LOCK(:n, :t)"), {"n": name, "t": LOCK_TIMEOUT_S}).scalar()
        if got != 1:
            raise RuntimeError(f"could not lock {name} on MariaDB within {LOCK_TIMEOUT_S} s")
        try:
            if not conn.execute(sa.text(granted), {"g": f"'{user}'@'%'", "n": name}).first():
                conn.execute(sa.text(f"DROP DATABASE IF EXISTS `{name}`"))
                conn.execute(sa.text(f"DROP USER IF EXISTS '{user}'@'%'"))
                conn.execute(sa.text(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4"))
                loader = sa.create_engine(url.set(database=name), poolclass=sa.pool.NullPool)
                try:
                    copy_sqlite_into(source, loader)
                finally:
                    loader.dispose()
                conn.execute(sa.text(f"CREATE USER '{user}'@'%' IDENTIFIED BY '{_password(name)}'"))
                conn.execute(sa.text(f"GRANT SELECT ON `{name}`.* TO '{user}'@'%'"))  # the mark it is whole
        finally:
            conn.execute(sa.text("SELECT RELEASE_LOCK(:n)"), {"n": name})
    return url.set(username=user, password=_password(name), database=name).render_as_string(False)
