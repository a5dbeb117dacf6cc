"""The real PostgreSQL / MariaDB servers tests may use (URLs from ASKBASE_TEST_*_URL)."""

from __future__ import annotations

import os

import sqlalchemy as sa
from sqlalchemy.engine import make_url

DRIVERS = {"postgresql": "postgresql+psycopg", "mysql": "mysql+pymysql", "mariadb": "mariadb+pymysql"}


def server_url(env: str) -> str:
    """The URL in `env` with an installed driver named (a bare postgresql:// would want psycopg2)."""
    url = make_url(os.environ[env])
    if url.drivername in DRIVERS:
        url = url.set(drivername=DRIVERS[url.drivername])
    return url.render_as_string(hide_password=False)


def admin_engine(env: str) -> sa.Engine:
    """A writable engine for setting tests up (Askbase's own engines are read-only)."""
    return sa.create_engine(server_url(env))
