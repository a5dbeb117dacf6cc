"""Alembic environment for the state database; run only through core/state/migrate.py.

`migrate.upgrade` hands over a connection that is already inside a transaction holding the
migration lock, so every revision runs in that one transaction and a second process starting at
the same moment waits, then finds the database at head. Tables of other libraries sharing the
database (APScheduler's job store, slack_sdk's installation store) are not ours to compare or drop.
"""

from __future__ import annotations

from typing import Any

from alembic import context

from core.state.migrate import VERSION_TABLE
from core.state.schema import metadata


def _ours(name: str | None, type_: str, parent_names: Any) -> bool:
    return type_ != "table" or name in metadata.tables


connection = context.config.attributes.get("connection")
if connection is None:
    raise RuntimeError("run state migrations with `askbase db upgrade` (core/state/migrate.py)")
context.configure(
    connection=connection,
    target_metadata=metadata,
    version_table=VERSION_TABLE,
    include_name=_ours,
    render_as_batch=connection.dialect.name == "sqlite",  # SQLite alters tables by copying them
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
